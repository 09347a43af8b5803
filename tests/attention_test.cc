// Engine tests. Every expected number is derived by hand (or by a closed
// formula written out here), never taken from the engine: with all-zero
// queries every score is 0, so the weights are uniform over the keys a mask
// leaves, and with values 1, 10, 100, 1000 the output names those keys.
#include "attn/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "test_util.h"

namespace attn {
namespace {

using test::compute_json;
using test::error_of;
using test::expect_near_all;

// Three zero queries over four keys with values 1, 10, 100, 1000.
std::string zero_query_doc(const std::string& extra) {
  return R"({"Q": [[0, 0], [0, 0], [0, 0]],
             "K": [[1, 2], [3, 4], [5, 6], [7, 8]],
             "V": [[1], [10], [100], [1000]])" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

Values<double> outputs(const std::string& extra) {
  return compute_json(zero_query_doc(extra)).output.values();
}

TEST(Masks, NoMaskAveragesAllKeys) {
  EXPECT_EQ(outputs(""), (Values<double>{277.75, 277.75, 277.75}));
}

TEST(Masks, BoolMaskBlocksTrueCells) {
  auto o = outputs(
      R"("mask": [[false, true, true, true], [false, false, true, true], [true, true, true, false]])");
  EXPECT_DOUBLE_EQ(o[0], 1);
  EXPECT_DOUBLE_EQ(o[1], 5.5);
  EXPECT_DOUBLE_EQ(o[2], 1000);
}

TEST(Masks, ZeroOneMaskEqualsBoolMask) {
  auto o = outputs(R"("mask": [[0, 1, 1, 1], [0, 0, 1, 1], [1, 1, 1, 0.0]])");
  EXPECT_EQ(o, (Values<double>{1, 5.5, 1000}));
}

TEST(Masks, KeepConventionFlipsTheMask) {
  auto o =
      outputs(R"("mask": [[0, 1, 1, 1], [0, 0, 1, 1], [1, 1, 1, 0]], "mask_convention": "keep")");
  EXPECT_DOUBLE_EQ(o[0], 370);  // (10 + 100 + 1000) / 3
  EXPECT_DOUBLE_EQ(o[1], 550);  // (100 + 1000) / 2
  EXPECT_DOUBLE_EQ(o[2], 37);   // (1 + 10 + 100) / 3
}

TEST(Masks, KeyPaddingMaskBlocksKeysForEveryQuery) {
  EXPECT_EQ(outputs(R"("key_padding_mask": [0, 0, 1, 1])"), (Values<double>{5.5, 5.5, 5.5}));
  EXPECT_EQ(outputs(R"("key_padding_mask": [true, false, false, false])"),
            (Values<double>{370, 370, 370}));
}

TEST(Masks, KeyPaddingMaskKeepConvention) {
  EXPECT_EQ(outputs(R"("key_padding_mask": [0, 0, 1, 1], "mask_convention": "keep")"),
            (Values<double>{550, 550, 550}));
}

TEST(Masks, ValidLensIntegerCutsKeysForEveryQuery) {
  expect_near_all(Tensor<double>({3}, outputs(R"("valid_lens": 3)")), {37, 37, 37}, 1e-12);
}

TEST(Masks, ValidLensPerQuery) {
  EXPECT_EQ(outputs(R"("valid_lens": [1, 2, 4])"), (Values<double>{1, 5.5, 277.75}));
}

TEST(Masks, ValidLensLongerThanKeysMasksNothing) {
  EXPECT_EQ(outputs(R"("valid_lens": 99)"), (Values<double>{277.75, 277.75, 277.75}));
}

TEST(Masks, CausalIsTopLeftAlignedForFewerQueriesThanKeys) {
  // Query i sees keys 0..i (PyTorch is_causal), not the bottom-right diagonal.
  expect_near_all(Tensor<double>({3}, outputs(R"("causal": true)")), {1, 5.5, 37}, 1e-12);
}

TEST(Masks, CausalWithMoreQueriesThanKeys) {
  Result r =
      compute_json(R"({"Q": [[0], [0], [0]], "K": [[1], [2]], "V": [[2], [4]], "causal": true})");
  EXPECT_EQ(r.output.values(), (Values<double>{2, 3, 3}));
}

TEST(Masks, AdditiveBiasShiftsScores) {
  // Scores are just the bias: weights proportional to exp(bias) = 1, 3, 1, 0.
  auto o = outputs(
      R"("attn_bias": [[0, 1.0986122886681098, 0, "-inf"], [0, 0, 0, 0], ["-inf", "-inf", "-inf", 0]])");
  EXPECT_NEAR(o[0], (1 + 30 + 100) / 5.0, 1e-12);
  EXPECT_DOUBLE_EQ(o[1], 277.75);
  EXPECT_DOUBLE_EQ(o[2], 1000);
}

TEST(Masks, MasksCombine) {
  // mask blocks key 3 for query 0; padding blocks key 0; causal; valid_lens.
  auto o = outputs(R"("mask": [[0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0]],
                      "key_padding_mask": [1, 0, 0, 0], "causal": true, "valid_lens": [4, 4, 2])");
  // query 0: causal leaves key 0, padding removes it -> fully masked -> 0.
  // query 1: keys 0..1, minus key 0 -> 10. query 2: keys 0..2, valid 2 -> key 1 -> 10.
  EXPECT_EQ(o, (Values<double>{0, 10, 10}));
}

TEST(FullyMasked, ZeroIsTheDefault) {
  Result r = compute_json(zero_query_doc(R"("key_padding_mask": [1, 1, 1, 1])"));
  EXPECT_EQ(r.output.values(), (Values<double>{0, 0, 0}));
  EXPECT_EQ(r.weights->values(), Values<double>(12, 0.0));
  ASSERT_EQ(r.fully_masked_rows.size(), 3u);
  EXPECT_EQ(r.fully_masked_rows[2].query, 2);
}

TEST(FullyMasked, UniformAttendsToAllKeys) {
  auto o =
      outputs(R"("mask": [[1, 1, 1, 1], [0, 1, 1, 1], [1, 1, 1, 1]], "fully_masked": "uniform")");
  EXPECT_EQ(o, (Values<double>{277.75, 1, 277.75}));
}

TEST(FullyMasked, NanGivesNan) {
  auto o = outputs(R"("mask": [[1, 1, 1, 1], [0, 1, 1, 1], [0, 0, 0, 0]], "fully_masked": "nan")");
  EXPECT_TRUE(std::isnan(o[0]));
  EXPECT_EQ(o[1], 1);
  EXPECT_EQ(o[2], 277.75);
}

TEST(FullyMasked, ErrorNamesTheRow) {
  std::string e = error_of([] {
    compute_json(
        R"({"X": [[1], [2]], "labels": ["a", "b"], "mask": [[0, 1], [1, 1]], "fully_masked": "error"})");
  });
  EXPECT_EQ(e, "t.json: query 1 (\"b\") has every key masked (fully_masked: error)");
}

TEST(FullyMasked, FiniteMaskFillGivesWhatTheArithmeticGives) {
  // d2l style: -1e6 instead of -inf; a fully masked row becomes uniform.
  auto o = outputs(R"("valid_lens": [0, 1, 2], "mask_fill": -1e6)");
  EXPECT_DOUBLE_EQ(o[0], 277.75);
  EXPECT_DOUBLE_EQ(o[1], 1);
  EXPECT_DOUBLE_EQ(o[2], 5.5);
}

TEST(FullyMasked, MinusInfBiasRowCountsAsFullyMasked) {
  auto o =
      outputs(R"("attn_bias": [["-inf", "-inf", "-inf", "-inf"], [0, 0, 0, 0], [0, 0, 0, 0]])");
  EXPECT_EQ(o, (Values<double>{0, 277.75, 277.75}));
}

TEST(Masks, BatchedMasksOfEveryRank) {
  const std::string base = R"({"Q": [[[0], [0]], [[0], [0]]], "K": [[[1], [1]], [[1], [1]]],
                               "V": [[[1], [10]], [[100], [1000]]])";
  // [q][k] applies to every batch.
  EXPECT_EQ(compute_json(base + R"(, "mask": [[0, 1], [1, 0]]})").output.values(),
            (Values<double>{1, 10, 100, 1000}));
  // [batch][q][k].
  EXPECT_EQ(
      compute_json(base + R"(, "mask": [[[0, 1], [0, 1]], [[1, 0], [1, 0]]]})").output.values(),
      (Values<double>{1, 1, 1000, 1000}));
  // [batch][k] key padding.
  EXPECT_EQ(compute_json(base + R"(, "key_padding_mask": [[1, 0], [0, 1]]})").output.values(),
            (Values<double>{10, 10, 100, 100}));
  // d2l valid_lens [batch] and [batch][q].
  EXPECT_EQ(compute_json(base + R"(, "valid_lens": [1, 2]})").output.values(),
            (Values<double>{1, 1, 550, 550}));
  EXPECT_EQ(compute_json(base + R"(, "valid_lens": [[1, 2], [2, 1]]})").output.values(),
            (Values<double>{1, 5.5, 550, 100}));
}

TEST(Masks, PerHeadMasks) {
  // Two heads of width 1; V has two columns, one per head.
  const std::string base =
      R"({"Q": [[0, 0]], "K": [[1, 1], [2, 2]], "V": [[1, 100], [3, 300]], "heads": 2)";
  // Unbatched 3D mask is [heads][q][k].
  Result r = compute_json(base + R"(, "mask": [[[0, 1]], [[1, 0]]]})");
  EXPECT_EQ(r.output.values(), (Values<double>{1, 300}));
  EXPECT_EQ(r.weights->shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(r.weights->values(), (Values<double>{1, 0, 0, 1}));
  // [1][heads][q][k] for unbatched input.
  r = compute_json(base + R"(, "mask": [[[[1, 0]], [[0, 1]]]]})");
  EXPECT_EQ(r.output.values(), (Values<double>{3, 100}));
}

// ---- scaling: one query (3, 0) against keys e1, e2, e2 with values 1, 0, 0:
// the output is e^s / (e^s + 2) where s is the scaled score of key 0.
double logistic3(double s) { return std::exp(s) / (std::exp(s) + 2); }

double scaled_output(const std::string& extra) {
  std::string doc = R"({"Q": [[3, 0]], "K": [[1, 0], [0, 1], [0, 1]], "V": [[1], [0], [0]])" +
                    (extra.empty() ? "" : ", " + extra) + "}";
  return compute_json(doc).output[0];
}

TEST(Scale, DefaultIsSqrtDk) {
  EXPECT_NEAR(scaled_output(""), logistic3(3 / std::sqrt(2.0)), 1e-15);
}
TEST(Scale, None) { EXPECT_NEAR(scaled_output(R"("scale": "none")"), logistic3(3), 1e-15); }
TEST(Scale, DotVariantMeansNone) {
  EXPECT_NEAR(scaled_output(R"("variant": "dot")"), logistic3(3), 1e-15);
}
TEST(Scale, ExplicitScaleWinsOverDot) {
  EXPECT_NEAR(scaled_output(R"("variant": "dot", "scale": 0.25)"), logistic3(0.75), 1e-15);
}
TEST(Scale, Dk) { EXPECT_NEAR(scaled_output(R"("scale": "dk")"), logistic3(1.5), 1e-15); }
TEST(Scale, NumberMultipliesTheScores) {
  EXPECT_NEAR(scaled_output(R"("scale": 0.25)"), logistic3(0.75), 1e-15);
}
TEST(Scale, LongSeqUsesKeyCount) {
  EXPECT_NEAR(scaled_output(R"("scale": "long_seq")"), logistic3(3 / std::sqrt(6.0)), 1e-15);
}
TEST(Scale, NormDividesByFrobeniusNorm) {
  EXPECT_NEAR(scaled_output(R"("scale": "norm")"), logistic3(1), 1e-15);
}
TEST(Scale, CosineNormalizesRows) {
  EXPECT_NEAR(scaled_output(R"("scale": "cosine")"), logistic3(1), 1e-15);
}
TEST(Scale, TemperatureDividesAfterScaling) {
  EXPECT_NEAR(scaled_output(R"("temperature": 2)"), logistic3(3 / std::sqrt(2.0) / 2), 1e-15);
}
TEST(Scale, ScaleAtOutputMovesTheFactorAfterSoftmax) {
  EXPECT_NEAR(scaled_output(R"("scale_at": "output")"), logistic3(3) / std::sqrt(2.0), 1e-15);
  EXPECT_NEAR(scaled_output(R"("scale_at": "output", "temperature": 4)"),
              logistic3(3) / std::sqrt(2.0) / 4, 1e-15);
}

// ---- worked examples (docs/spec.md) ------------------------------------------
const char* kSweet = R"({"X": [[0, 2, 2, 0], [0, 1, 3, 0], [0, 2, 2, 0], [0, 0, 4, 0]]})";
const char* kHungry = R"({"X": [[0, 2, 2, 0], [0, 1, 3, 0], [0, 2, 2, 0], [0, 4, 0, 0]]})";

std::string with(const char* doc, const std::string& extra) {
  std::string s = doc;
  s.pop_back();
  return s + ", " + extra + "}";
}

TEST(WorkedExample, SweetScoresAreTheBlogsQKt) {
  Result r = compute_json(with(kSweet, R"("scale": "none")"));
  ComputeRequest req;
  req.scores = true;
  Result s = compute(test::problem(with(kSweet, R"("scale": "none")")), req);
  EXPECT_EQ(s.scores->values(),
            (Values<double>{8, 8, 8, 8, 8, 10, 8, 12, 8, 8, 8, 8, 8, 12, 8, 16}));
}

TEST(WorkedExample, SweetFormulaNumbers) {
  Result r = compute_json(kSweet);
  expect_near_all(r.output,
                  {0, 1.25, 2.75, 0, 0, 0.5549, 3.4451, 0, 0, 1.25, 2.75, 0, 0, 0.1780, 3.8220, 0},
                  5e-5);
}

TEST(WorkedExample, SweetBlogNumbersNeedScaleAtOutput) {
  Result r = compute_json(with(kSweet, R"("scale_at": "output")"));
  expect_near_all(r.output,
                  {0, 0.625, 1.375, 0, 0, 0.089, 1.911, 0, 0, 0.625, 1.375, 0, 0, 0.010, 1.990, 0},
                  5e-4);
  // The cat and it rows are exact: uniform weights, mean value / 2.
  EXPECT_DOUBLE_EQ(r.output[1], 0.625);
  EXPECT_DOUBLE_EQ(r.output[2], 1.375);
}

TEST(WorkedExample, HungryBlogNumbersNeedScaleAtOutput) {
  Result r = compute_json(with(kHungry, R"("scale_at": "output")"));
  expect_near_all(r.output,
                  {0, 1.125, 0.875, 0, 0, 0.609, 1.391, 0, 0, 1.125, 0.875, 0, 0, 1.999, 0.001, 0},
                  5e-4);
}

TEST(WorkedExample, SeedZeroShapes) {
  // Q = ones(2,3,2), K = ones(2,8,2), V = ones(2,8,10): output (2,3,10) of ones.
  auto ones = [](int a, int b, int c) {
    std::string s = "[";
    for (int i = 0; i < a; ++i) {
      s += i ? ",[" : "[";
      for (int j = 0; j < b; ++j) {
        s += j ? ",[" : "[";
        for (int k = 0; k < c; ++k) s += k ? ",1" : "1";
        s += "]";
      }
      s += "]";
    }
    return s + "]";
  };
  Result r = compute_json("{\"Q\": " + ones(2, 3, 2) + ", \"K\": " + ones(2, 8, 2) +
                          ", \"V\": " + ones(2, 8, 10) + "}");
  EXPECT_EQ(r.output.shape(), (Shape{2, 3, 10}));
  EXPECT_EQ(r.weights->shape(), (Shape{2, 3, 8}));
  for (double v : r.output.values()) EXPECT_DOUBLE_EQ(v, 1.0);
  Result self = compute_json("{\"X\": " + ones(2, 3, 2) + "}");
  EXPECT_EQ(self.output.shape(), (Shape{2, 3, 2}));
}

TEST(WorkedExample, D2lValidLens) {
  // keys ones(2,10,2); values arange(40) as (10,4), repeated over batch 2.
  std::string keys = "[", values = "[";
  for (int b = 0; b < 2; ++b) {
    keys += b ? ",[" : "[";
    values += b ? ",[" : "[";
    for (int i = 0; i < 10; ++i) {
      keys += i ? ",[1,1]" : "[1,1]";
      values += (i ? ",[" : "[") + std::to_string(4 * i) + "," + std::to_string(4 * i + 1) + "," +
                std::to_string(4 * i + 2) + "," + std::to_string(4 * i + 3) + "]";
    }
    keys += "]";
    values += "]";
  }
  keys += "]";
  values += "]";
  Result r = compute_json(R"({"Q": [[[0.3, -1.2]], [[2.0, 0.5]]], "K": )" + keys + R"(, "V": )" +
                          values + R"(, "valid_lens": [2, 6]})");
  EXPECT_EQ(r.output.shape(), (Shape{2, 1, 4}));
  expect_near_all(r.output, {2, 3, 4, 5, 10, 11, 12, 13}, 1e-12);
}

// ---- projections, modes, heads -------------------------------------------------
TEST(Projection, MathLayoutWithBiasesAndOutputProjection) {
  // W_q = 0 makes every score 0, so each output row is the mean of V rows:
  // V = X·W_v + b_v = [[11, 22, 33], [13, 24, 37]], mean [12, 23, 35];
  // then W_o sums the three columns and b_o adds 0.5: 70.5.
  Result r = compute_json(R"({"X": [[1, 2], [3, 4]],
    "params": {"W_q": [[0, 0], [0, 0]], "W_k": [[1, 0], [0, 1]],
               "W_v": [[1, 0, 1], [0, 1, 1]], "b_v": [10, 20, 30],
               "W_o": [[1], [1], [1]], "b_o": [0.5]}})");
  EXPECT_EQ(r.output.shape(), (Shape{2, 1}));
  EXPECT_EQ(r.output.values(), (Values<double>{70.5, 70.5}));
}

TEST(Projection, QueryBiasChangesScores) {
  // qkv mode: Q' = Q·0 + b_q = (ln 3, 0); K = e1, e2 -> weights 3/4, 1/4.
  Result r = compute_json(R"({"Q": [[0, 0]], "K": [[1, 0], [0, 1]], "V": [[4], [8]],
    "params": {"W_q": [[0, 0], [0, 0]], "b_q": [1.0986122886681098, 0]}, "scale": "none"})");
  EXPECT_NEAR(r.output[0], 5.0, 1e-12);
}

TEST(Modes, CrossAttentionTakesKeysAndValuesFromY) {
  Result r = compute_json(R"({"X": [[0, 0]], "Y": [[1, 2], [3, 4], [5, 6]]})");
  EXPECT_EQ(r.output.values(), (Values<double>{3, 4}));
  EXPECT_EQ(r.weights->shape(), (Shape{1, 3}));
}

TEST(Modes, QkvWithoutVUsesK) {
  Result r = compute_json(R"({"Q": [[0, 0]], "K": [[1, 2], [3, 4]]})");
  EXPECT_EQ(r.output.values(), (Values<double>{2, 3}));
}

TEST(Heads, SplitIntoColumnBlocksAndConcatenate) {
  // Head 0 sees width-1 column 0, head 1 column 1. Query (ln 3, 0): head 0
  // weights 3/4, 1/4 over keys with k0 = (1, 0), k1 = (0, 0); head 1 all 0.
  Result r = compute_json(R"({"Q": [[1.0986122886681098, 0]], "K": [[1, 0], [0, 0]],
    "V": [[4, 8], [8, 16]], "heads": 2, "scale": "none"})");
  expect_near_all(r.output, {4 * 0.75 + 8 * 0.25, 12}, 1e-12);
  EXPECT_EQ(r.weights->shape(), (Shape{2, 1, 2}));
  expect_near_all(*r.weights, {0.75, 0.25, 0.5, 0.5}, 1e-12);
}

TEST(Heads, AverageHeads) {
  ComputeRequest req;
  req.weights = true;
  req.average_heads = true;
  Result r = compute(test::problem(R"({"Q": [[1.0986122886681098, 0]], "K": [[1, 0], [0, 0]],
    "V": [[4, 8], [8, 16]], "heads": 2, "scale": "none"})"),
                     req);
  EXPECT_EQ(r.weights->shape(), (Shape{1, 2}));
  expect_near_all(*r.weights, {0.625, 0.375}, 1e-12);
}

TEST(Softmax, ExtremeScoresDoNotOverflow) {
  Result r = compute_json(
      R"({"Q": [[1e150]], "K": [[1e150], [-1e150]], "V": [[1], [2]], "scale": "none"})");
  EXPECT_EQ(r.output[0], 1.0);
  r = compute_json(R"({"Q": [[1e-300]], "K": [[1], [1]], "V": [[1], [3]]})");
  EXPECT_EQ(r.output[0], 2.0);
}

TEST(Dtype, Float32MatchesFloat64ToSinglePrecision) {
  ComputeRequest req;
  req.dtype = DType::kF32;
  Result r = compute(test::problem(kSweet), req);
  EXPECT_EQ(r.dtype, DType::kF32);
  expect_near_all(
      r.output,
      {0, 1.25, 2.75, 0, 0, 0.5548934, 3.4451066, 0, 0, 1.25, 2.75, 0, 0, 0.1779896, 3.8220104, 0},
      1e-6);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// compute() may be called from several threads at once (attention.h): four
// threads computing one problem, two threads each, get what one thread gets.
TEST(ComputeThreads, CallsFromSeveralThreadsAtOnceAgree) {
  std::string q = "[", k = "[";
  uint32_t state = 12345;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<double>(state >> 8) / (1u << 24) - 0.5;
  };
  for (int i = 0; i < 96; ++i) {
    std::string qr = "[", kr = "[";
    for (int j = 0; j < 32; ++j) {
      qr += (j ? "," : "") + std::to_string(next());
      kr += (j ? "," : "") + std::to_string(next());
    }
    q += (i ? "," : "") + qr + "]";
    k += (i ? "," : "") + kr + "]";
  }
  const Problem p =
      test::problem(R"({"Q": )" + q + R"(], "K": )" + k + R"(], "heads": 4, "causal": true})");
  for (const bool reference : {false, true}) {
    ComputeRequest one;
    one.weights = true;
    one.threads = 1;
    one.reference = reference;
    const Result expected = compute(p, one);
    ComputeRequest two = one;
    two.threads = 2;
    std::vector<Result> got(4);
    std::vector<std::thread> threads;
    for (Result& r : got) threads.emplace_back([&p, &two, &r] { r = compute(p, two); });
    for (std::thread& t : threads) t.join();
    for (const Result& r : got) {
      EXPECT_TRUE(r.output.values() == expected.output.values());
      EXPECT_TRUE(r.weights->values() == expected.weights->values());
    }
  }
}

}  // namespace
}  // namespace attn
