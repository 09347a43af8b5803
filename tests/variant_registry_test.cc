// The variant registry (lib/src/variants/registry.cc): every
// Variant has its unit, the names documents and flags use are the units'
// names, and each unit refuses, by name, a param it does not take.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "problem/variant_unit.h"
#include "test_util.h"

namespace attn {
namespace {

using detail::variant_unit;
using detail::variant_units;
using detail::VariantUnit;

const Variant kAll[] = {Variant::kScaledDot, Variant::kDot, Variant::kAdditive,
                        Variant::kSingleLayer, Variant::kBiattention};

// docs/spec.md §3: every param a document may give.
const std::vector<std::string> kParams = {"W_q",  "W_k",   "W_v",       "b_q",    "b_k",
                                          "b_v",  "W_o",   "b_o",       "w_v",    "w",
                                          "w_in", "w_mem", "dot_scale", "q_norm", "k_norm"};

TEST(VariantRegistry, EveryVariantHasOneRow) {
  ASSERT_EQ(variant_units().size(), std::size(kAll));
  for (Variant v : kAll) {
    EXPECT_EQ(variant_unit(v).id, v) << name(v);
    EXPECT_EQ(std::count_if(variant_units().begin(), variant_units().end(),
                            [v](const VariantUnit* u) { return u->id == v; }),
              1)
        << name(v);
  }
}

TEST(VariantRegistry, NamesRoundTrip) {
  std::vector<std::string> names;
  for (const VariantUnit* u : variant_units()) {
    names.emplace_back(u->name);
    EXPECT_EQ(parse_variant(u->name), u->id) << u->name;
    EXPECT_EQ(name(u->id), u->name);
  }
  EXPECT_EQ(variant_names(), names);  // --variant's choices, in the registry's order
  EXPECT_EQ(names, (std::vector<std::string>{"scaled_dot", "dot", "additive", "single_layer",
                                             "biattention"}));
  EXPECT_EQ(parse_variant("scaled-dot"), std::nullopt);
}

TEST(VariantRegistry, DefaultScaleIsSqrtDkForScaledDotOnly) {
  for (const VariantUnit* u : variant_units()) {
    EXPECT_EQ(u->default_scale,
              u->id == Variant::kScaledDot ? ScaleKind::kSqrtDk : ScaleKind::kNone)
        << u->name;
  }
}

TEST(VariantRegistry, TheKernelsComputeScaledDotAndDotOnly) {
  for (const VariantUnit* u : variant_units()) {
    EXPECT_EQ(u->fast_kernel, u->id == Variant::kScaledDot || u->id == Variant::kDot) << u->name;
  }
}

// A document of the variant that gives one param, [[1]]: whatever the
// variant, its validation names the param it does not take before it
// looks at any shape.
TEST(VariantRegistry, EveryRowRefusesAParamItDoesNotUse) {
  for (const VariantUnit* u : variant_units()) {
    int refused = 0;
    for (const std::string& param : kParams) {
      if (std::find(u->params.begin(), u->params.end(), param) != u->params.end()) continue;
      const std::string json = R"({"X": [[1, 0], [0, 1]], "Y": [[1, 0], [0, 1]], "variant": ")" +
                               std::string(u->name) + R"(", "params": {")" + param +
                               R"(": [[1]]}})";
      EXPECT_EQ(test::problem_error(json), "t.json: params." + param + ": not used by variant " +
                                               std::string(u->name) + " (" + u->params_note + ")")
          << u->name << " " << param;
      ++refused;
    }
    EXPECT_GT(refused, 0) << u->name << " takes every param";
  }
}

TEST(VariantRegistry, EveryParamARowTakesIsADocumentParam) {
  for (const VariantUnit* u : variant_units()) {
    for (const std::string& param : u->params) {
      EXPECT_NE(std::find(kParams.begin(), kParams.end(), param), kParams.end())
          << u->name << " " << param;
    }
  }
}

}  // namespace
}  // namespace attn
