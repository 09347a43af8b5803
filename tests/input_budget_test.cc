// The JSON reader's budgets (nodes, strings, depth) and linear-time paths,
// through the library. Through the program (integers from flags, UTF-8
// text, overflowing scores, the similarity tables in JSON and CSV):
// input_budget_cli_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/json.h"
#include "test_util.h"

namespace attn {
namespace {

using test::error_of;
using test::source_path;
using test::write_temp;

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(JsonBudget, ManyEmptyArraysPackWithoutNodes) {
  // [[], [], ...]: one packed block of shape [n][0], not n tree nodes.
  std::string text = "[";
  for (int i = 0; i < 1000000; ++i) text += i ? ",[]" : "[]";
  text += "]";
  const json::Value v = json::parse(text, "t");
  ASSERT_TRUE(v.packed());
  EXPECT_EQ(v.dims(), (std::vector<int64_t>{1000000, 0}));
}

TEST(JsonBudget, TooManyNodesStopWhileParsing) {
  std::string text = "[";
  for (int i = 0; i < 2000; ++i) text += i ? ",{}" : "{}";
  text += "]";
  json::Limits small;
  small.max_nodes = 1000;
  EXPECT_EQ(error_of([&] { json::parse(text, "t", small); }),
            "t:1:1503: more than 1000 values outside arrays of numbers in one document");
}

TEST(JsonBudget, LongStringsAndManyNumbersHaveLimits) {
  json::Limits small;
  small.max_string_bytes = 10;
  small.max_numbers = 3;
  EXPECT_EQ(error_of([&] { json::parse("[\"abcdefghijkl\"]", "t", small); }),
            "t:1:2: a string of 12 bytes; strings are limited to 10 bytes");
  EXPECT_EQ(error_of([&] { json::parse("[1, 2, 3, 4]", "t", small); }),
            "t:1:11: more than 3 numbers in one document; use .npy or safetensors for big tensors");
}

TEST(JsonBudget, PackedBlocksKeepEveryRank) {
  const json::Value v = json::parse("[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]", "t");
  ASSERT_TRUE(v.packed());
  EXPECT_EQ(v.dims(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(v.numbers(), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
  const json::Value e = v.element(1);
  EXPECT_EQ(e.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(e.numbers(), (std::vector<double>{5, 6, 7, 8}));
}

TEST(JsonBudget, TwoHundredThousandKeysAreLinear) {
  std::string text = "{";
  for (int i = 0; i < 200000; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\": 1";
  text += ",\"k7\": 2}";
  std::string err;
  const double s = seconds_of([&] { err = error_of([&] { json::parse(text, "t"); }); });
  EXPECT_EQ(err.rfind("t:1:", 0), 0u) << err;
  EXPECT_NE(err.find("duplicate key \"k7\""), std::string::npos) << err;
  // Pairwise checks would take minutes; linear ones take ~0.3 s (more under
  // ASan on a loaded machine): a guard against the former, not a benchmark.
  EXPECT_LT(s, 15.0);
}

}  // namespace
}  // namespace attn
