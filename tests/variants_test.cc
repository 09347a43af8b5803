// data/variants: one runnable example per attention variant, per scaling and
// per heads/projection layout, each carrying numbers PyTorch computed
// (data/variants/make_expected.py, never attn). Every file must pass
// `attn run FILE --check` with the real binary, the way a reader of
// docs/variants.md runs it, and together the files must cover every variant,
// scaling and layout docs/spec.md names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

const char kVariantsDir[] = ATTN_SOURCE_DIR "/data/variants";

std::vector<std::string> variant_files() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kVariantsDir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      files.push_back(entry.path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// "scale_cosine.json" -> "scale_cosine".
std::string example_name(const testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.size() - 5);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

nlohmann::json load(const std::string& file) {
  return nlohmann::json::parse(test::read_text(std::string(kVariantsDir) + "/" + file));
}

// The number of array levels of j ([[1]] has rank 2).
int rank(const nlohmann::json& j) { return j.is_array() && !j.empty() ? 1 + rank(j[0]) : 0; }

class VariantExample : public testing::TestWithParam<std::string> {};

TEST_P(VariantExample, PassesCheck) {
  const std::string path = std::string(kVariantsDir) + "/" + GetParam();
  const test::Run r = test::run_attn({"run", path, "--check", "-q"});
  EXPECT_EQ(r.code, 0) << path << "\n" << r.out << r.err;
  EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
}

TEST_P(VariantExample, SaysWhatItShowsAndWhereItComesFrom) {
  const nlohmann::json doc = load(GetParam());
  for (const char* key : {"title", "description", "source"}) {
    ASSERT_TRUE(doc.contains(key) && doc[key].is_string()) << key;
    EXPECT_FALSE(doc[key].get<std::string>().empty()) << key;
  }
  ASSERT_TRUE(doc.contains("expected"));
  EXPECT_TRUE(doc["expected"].contains("output"));
  EXPECT_TRUE(doc["expected"].contains("weights"));
  EXPECT_EQ(doc["expected"].value("tolerance", 0.0), 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Variants, VariantExample, testing::ValuesIn(variant_files()),
                         example_name);

TEST(VariantExamples, CoverEveryVariantScalingAndLayout) {
  std::set<std::string> seen;
  for (const std::string& file : variant_files()) {
    const nlohmann::json doc = load(file);
    seen.insert("variant " + doc.value("variant", std::string("scaled_dot")));
    if (doc.contains("scale")) {
      seen.insert(doc["scale"].is_number() ? "scale number"
                                           : "scale " + doc["scale"].get<std::string>());
    }
    if (doc.contains("temperature")) seen.insert("temperature");
    if (doc.value("scale_at", std::string()) == "output") seen.insert("scale_at output");
    if (doc.value("params_layout", std::string()) == "torch") seen.insert("params_layout torch");
    if (doc.value("dropout", 0.0) > 0) seen.insert("dropout");
    if (doc.contains("Q") && !doc.contains("V")) seen.insert("V absent");
    if (doc.contains("Q") && rank(doc["Q"]) == 4) seen.insert("4D");
    if (doc.contains("Y") && doc.contains("params") && doc["params"].contains("W_o")) {
      seen.insert("cross with W_o");
    }
    if (doc.value("heads", 1) > 1 && doc.contains("params")) {
      const int w_rank = rank(doc["params"].value("W_q", nlohmann::json()));
      if (w_rank == 3 && doc["params"].contains("b_q")) seen.insert("per-head weights with biases");
      if (w_rank == 2) seen.insert("heads with whole projections");
    }
  }
  const char* const kWanted[] = {"variant scaled_dot",
                                 "variant dot",
                                 "variant additive",
                                 "variant single_layer",
                                 "variant biattention",
                                 "scale sqrt_dk",
                                 "scale none",
                                 "scale dk",
                                 "scale cosine",
                                 "scale norm",
                                 "scale long_seq",
                                 "scale number",
                                 "temperature",
                                 "scale_at output",
                                 "params_layout torch",
                                 "dropout",
                                 "V absent",
                                 "4D",
                                 "cross with W_o",
                                 "per-head weights with biases",
                                 "heads with whole projections"};
  for (const char* want : kWanted) {
    EXPECT_TRUE(seen.count(want)) << "no example in data/variants shows: " << want;
  }
}

}  // namespace
}  // namespace attn
