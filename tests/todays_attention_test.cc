// The settings of current models' attention (kv_heads, rope, alibi, window,
// softcap, sinks, qk_norm, rope.scaling) in the engine. Each is checked
// against an equivalent the engine already had (explicit masks, biases,
// repeated heads) or against a closed formula written out here. Their
// flags: todays_attention_cli_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/observer.h"
#include "attn/trace.h"
#include "test_util.h"

namespace attn {
namespace {

using test::compute_json;

// Four positions of width 4 with distinct rows.
const char* kX = R"("X": [[0.3, -1.2, 0.5, 0.9], [1.1, 0.4, -0.7, 0.2], [-0.5, 0.8, 1.3, -0.4],
                          [0.6, -0.1, -0.9, 1.0]])";

std::string doc(const std::string& extra) { return std::string("{") + kX + ", " + extra + "}"; }

void expect_same(const Tensor<double>& a, const Tensor<double>& b, double tol = 1e-12) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a.data()[i], b.data()[i], tol) << "at " << i;
}

TEST(GroupedQuery, EqualsHeadsWithRepeatedKeyValueColumns) {
  // kv_heads 1: both query heads read one key/value head of width 2, the
  // same as two heads whose W_k and W_v repeat that head's columns.
  const std::string wq = R"("W_q": [[1,0,0.5,0],[0,1,0,0.5],[0.2,0,1,0],[0,0.3,0,1]])";
  const Result gqa = compute_json(doc(R"("heads": 2, "kv_heads": 1, "params": {)" + wq +
                                      R"(, "W_k": [[1,0],[0,1],[0.5,0.5],[0,-1]],
                                           "W_v": [[1,2],[0,1],[1,0],[2,1]]})"));
  const Result rep =
      compute_json(doc(R"("heads": 2, "params": {)" + wq +
                       R"(, "W_k": [[1,0,1,0],[0,1,0,1],[0.5,0.5,0.5,0.5],[0,-1,0,-1]],
                                           "W_v": [[1,2,1,2],[0,1,0,1],[1,0,1,0],[2,1,2,1]]})"));
  expect_same(gqa.output, rep.output);
  expect_same(*gqa.weights, *rep.weights);
  EXPECT_EQ(gqa.weights->shape(), (Shape{2, 4, 4}));  // one panel per query head
}

TEST(GroupedQuery, FourDimensionalKeysCarryKvHeads) {
  const Result gqa = compute_json(R"({"Q": [[[[1,0],[0,1]],[[1,1],[0,2]]]],
                                      "K": [[[[1,2],[3,1]]]], "V": [[[[1,0],[0,1]]]],
                                      "kv_heads": 1})");
  const Result rep = compute_json(R"({"Q": [[[[1,0],[0,1]],[[1,1],[0,2]]]],
                                      "K": [[[[1,2],[3,1]],[[1,2],[3,1]]]],
                                      "V": [[[[1,0],[0,1]],[[1,0],[0,1]]]]})");
  expect_same(gqa.output, rep.output);
}

TEST(Rope, ShiftingEveryPositionLeavesTheWeightsUnchanged) {
  for (const char* layout : {"half", "interleaved"}) {
    const std::string l = std::string("\"layout\": \"") + layout + "\"";
    const Result a = compute_json(doc(R"("rope": {)" + l + "}"));
    const Result b = compute_json(doc(R"("rope": {"q_offset": 7, "k_offset": 7, )" + l + "}"));
    expect_same(*a.weights, *b.weights);
    expect_same(a.output, b.output);
  }
}

TEST(Rope, RotatesFeaturePairsByPositionTimesFrequency) {
  // The query at position 1, keys at 0 and 1, width 2: position t turns a
  // row by t radians (theta^0 = 1). q·k0 = (cos 1, sin 1)·(1, 0) = cos 1;
  // q and k1 share position 1, so their score is the unrotated q·k1 = 0.
  const Result r = compute_json(R"({"Q": [[1, 0]], "K": [[1, 0], [0, 1]], "V": [[1], [0]],
                                    "scale": "none", "rope": {"q_offset": 1}})");
  const double s0 = std::cos(1.0);
  const double w0 = std::exp(s0) / (std::exp(s0) + 1.0);
  EXPECT_NEAR(r.weights->data()[0], w0, 1e-15);
}

TEST(Rope, PassesFeaturesBeyondDimsThrough) {
  // dims 2 of width 4: at position 0 nothing turns; features 2, 3 never do.
  const Result plain = compute_json(doc(R"("scale": "none")"));
  const Result rot = compute_json(doc(R"("scale": "none", "rope": {"dims": 2, "theta": 1e30})"));
  // theta 1e30 makes the single frequency 1 (p = 0), so the scores change.
  EXPECT_GT(std::fabs(plain.weights->data()[1] - rot.weights->data()[1]), 1e-6);
}

TEST(Alibi, EqualsTheBiasMatrix) {
  const Result a = compute_json(doc(R"("alibi": [0.5])"));
  const Result b = compute_json(doc(R"("attn_bias": [[0,-0.5,-1,-1.5],[-0.5,0,-0.5,-1],
                                                     [-1,-0.5,0,-0.5],[-1.5,-1,-0.5,0]])"));
  expect_same(a.output, b.output);
  expect_same(*a.weights, *b.weights);
}

TEST(Alibi, PaperSlopes) {
  const Problem p8 = test::problem(R"({"X": [[1,2,3,4,5,6,7,8]], "heads": 8, "alibi": true})");
  for (int h = 0; h < 8; ++h)
    EXPECT_DOUBLE_EQ(p8.alibi[static_cast<size_t>(h)], std::pow(2.0, -(h + 1)));
  // Six heads: 2^-2, 2^-4, 2^-6, 2^-8 for the first four, then 2^-1, 2^-3.
  const Problem p6 = test::problem(R"({"X": [[1,2,3,4,5,6]], "heads": 6, "alibi": true})");
  const std::vector<double> want = {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};
  EXPECT_EQ(p6.alibi, want);
}

TEST(Window, EqualsTheBandMask) {
  const Result a = compute_json(doc(R"("window": [1, 0])"));
  const Result b = compute_json(doc(R"("mask": [[0,1,1,1],[0,0,1,1],[1,0,0,1],[1,1,0,0]])"));
  expect_same(a.output, b.output);
  expect_same(*a.weights, *b.weights);
  const Result c = compute_json(doc(R"("window": [-1, 1], "causal": true)"));
  const Result d = compute_json(doc(R"("causal": true)"));
  expect_same(*c.weights, *d.weights);
}

TEST(Softcap, CapsTheScaledScores) {
  // Scores c·tanh(s/c) with s the scaled scores: same as a tiny cap's limit.
  const Result r = compute_json(R"({"Q": [[2, 0]], "K": [[1, 0], [-1, 0]], "V": [[1], [0]],
                                    "scale": "none", "softcap": 1})");
  const double a = std::tanh(2.0), b = std::tanh(-2.0);
  EXPECT_NEAR(r.output.data()[0], std::exp(a) / (std::exp(a) + std::exp(b)), 1e-15);
}

TEST(Sinks, TakeTheirShareOfEveryRow) {
  const Result r = compute_json(R"({"Q": [[0, 0]], "K": [[1, 0], [-1, 0]], "V": [[1], [3]],
                                    "sinks": 0.5})");
  // Scores 0 and 0, sink 0.5: weights 1/(2 + e^0.5) each.
  const double w = 1.0 / (2.0 + std::exp(0.5));
  EXPECT_NEAR(r.weights->data()[0], w, 1e-15);
  EXPECT_NEAR(r.weights->data()[1], w, 1e-15);
  EXPECT_NEAR(r.output.data()[0], 4 * w, 1e-15);
}

TEST(Sinks, FullyMaskedRowIsZeroWithoutWarning) {
  const Result r = compute_json(R"({"Q": [[0, 0], [1, 1]], "K": [[1, 0], [-1, 0]], "V": [[1], [3]],
                                    "mask": [[1, 1], [0, 0]], "sinks": [2],
                                    "fully_masked": "error"})");
  EXPECT_EQ(r.output.data()[0], 0.0);
  EXPECT_EQ(r.weights->data()[0], 0.0);
  EXPECT_TRUE(r.fully_masked_rows.empty());
}

// Records the trace steps of a run.
struct Steps : Observer {
  std::vector<TraceStep> steps;
  void step(const TraceStep& s) override { steps.push_back(s); }
  const TraceStep* find(const std::string& id, int64_t head = -1) const {
    for (const TraceStep& s : steps) {
      if (s.id == test::step_id(id) && (head < 0 || s.head == head)) return &s;
    }
    return nullptr;
  }
};

TEST(ModernTrace, ShowsEveryNewStep) {
  Steps obs;
  ComputeRequest req;
  req.weights = true;
  compute(test::problem(doc(R"("heads": 2, "kv_heads": 1, "rope": {"q_offset": 2},
      "alibi": [0.5, 0.25], "softcap": 1, "window": [1, 0], "sinks": [0.1, 0.2],
      "params": {"W_k": [[1,0],[0,1],[1,0],[0,1]], "W_v": [[1,0],[0,1],[1,0],[0,1]]})")),
          req, &obs);
  for (const char* id : {"rope_angles", "rope_cos", "rope_sin", "rope_q", "rope_k", "softcap_raw",
                         "softcap", "alibi_bias", "masked", "sink_share"}) {
    EXPECT_NE(obs.find(id), nullptr) << id;
  }
  // Head 1 reads the one K/V head.
  EXPECT_EQ(step_words(*obs.find("head_k", 1), 4).note,
            "query head 1 reads key/value head 0 of 1 (kv_heads)");
  // Angles: positions 0..5 (queries start at 2), one frequency (head width 2).
  const TraceStep* angles = obs.find("rope_angles", 0);
  EXPECT_EQ(angles->values.rows(), 6);
  EXPECT_DOUBLE_EQ(angles->values(5, 0), 5.0);
  // rope.q_offset is the queries' position for everything (q_offset's
  // older name): ALiBi of head 1 is -0.25·|(2 + i) - j|.
  EXPECT_DOUBLE_EQ(obs.find("alibi_bias", 1)->values(3, 0), -1.25);
  EXPECT_DOUBLE_EQ(obs.find("alibi_bias", 1)->values(1, 3), 0.0);
  // The window shows as masked cells: query 1 (at 3) sees keys 2 and 3, and
  // query 3 (at 5) none of the four.
  const TraceStep* masked = obs.find("masked", 0);
  EXPECT_EQ(std::vector<uint8_t>(masked->masked.begin() + 4, masked->masked.begin() + 8),
            (std::vector<uint8_t>{1, 1, 0, 0}));
  EXPECT_EQ(std::vector<uint8_t>(masked->masked.begin() + 12, masked->masked.end()),
            (std::vector<uint8_t>{1, 1, 1, 1}));
  EXPECT_NE(step_words(*masked, 4).note.find("window: query i sees keys i + 2 − 1 … i + 2 + 0"),
            std::string::npos)
      << step_words(*masked, 4).note;
  // Capped scores lie in (-1, 1) and are tanh of the raw ones.
  EXPECT_DOUBLE_EQ(obs.find("softcap", 0)->values(1, 1),
                   std::tanh(obs.find("softcap_raw", 0)->values(1, 1)));
  // The sink's share and the weights of each row add up to 1.
  const TraceStep* share = obs.find("sink_share", 0);
  const TraceStep* w = obs.find("weights", 0);
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_NEAR(share->values(i, 0) + w->values.row(i).sum(), 1, 1e-15);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

using test::max_diff;

// The engine's keys: qk_norm with its weights is the RMSNorm of each head's
// rows, and rope.scaling the frequencies of the kind named.
TEST(ModernKeys, QkNormIsAnRmsNormOfEachHeadsRows) {
  const std::string q = "[[1, 2, -1, 0.5], [0.3, -2, 4, 1], [2, 2, 0, -1]]";
  const std::string k = "[[0.5, -1, 2, 1], [1, 1, 1, 1], [-3, 0.2, 0.1, 2]]";
  const std::string v = "[[1, 0], [0, 1], [1, 1]]";
  const Result normed = test::compute_json(
      R"({"Q": )" + q + R"(, "K": )" + k + R"(, "V": )" + v +
      R"(, "heads": 2, "qk_norm": 1e-6, "params": {"q_norm": [1.5, 0.5], "k_norm": [1, 2]}})");
  // The same by hand: each head's two features normed, then weighed.
  auto norm = [](std::vector<double> row, const std::vector<double>& w) {
    for (int h = 0; h < 2; ++h) {
      const double a = row[2 * h], b = row[2 * h + 1];
      const double inv = 1.0 / std::sqrt((a * a + b * b) / 2 + 1e-6);
      row[2 * h] = a * inv * w[0];
      row[2 * h + 1] = b * inv * w[1];
    }
    return row;
  };
  const nlohmann::json qj = nlohmann::json::parse(q), kj = nlohmann::json::parse(k);
  nlohmann::json qn = nlohmann::json::array(), kn = nlohmann::json::array();
  for (const auto& r : qj) qn.push_back(norm(r.get<std::vector<double>>(), {1.5, 0.5}));
  for (const auto& r : kj) kn.push_back(norm(r.get<std::vector<double>>(), {1, 2}));
  const Result by_hand = test::compute_json(R"({"Q": )" + qn.dump() + R"(, "K": )" + kn.dump() +
                                            R"(, "V": )" + v + R"(, "heads": 2})");
  EXPECT_LT(max_diff(*normed.weights, *by_hand.weights), 1e-15);
  EXPECT_LT(max_diff(normed.output, by_hand.output), 1e-15);

  EXPECT_EQ(test::problem_error(R"({"Q": )" + q + R"(, "K": )" + k + R"(, "V": )" + v +
                                R"(, "params": {"q_norm": [1, 1, 1, 1]}})"),
            "t.json: params.q_norm: params.q_norm weighs the Q/K norm, which is off; set "
            "qk_norm to its epsilon (e.g. 1e-6) to turn it on");
  EXPECT_EQ(test::problem_error(R"({"Q": )" + q + R"(, "K": )" + k + R"(, "V": )" + v +
                                R"(, "qk_norm": 1e-6, "params": {"k_norm": [1, 1]}})"),
            "t.json: params.k_norm: length 2 does not match the head width 4 (the Q/K norm "
            "weighs each feature of a head)");
}

TEST(ModernKeys, RopeScalingLinearIsPositionsOverTheFactor) {
  // Linear scaling by 4 at positions 0, 4, 8 is plain RoPE at 0, 1, 2.
  const std::string q = "[[1, 2, -1, 0.5], [0.3, -2, 4, 1], [2, 2, 0, -1]]";
  const std::string v = "[[1, 0], [0, 1], [1, 1]]";
  const Result scaled =
      test::compute_json(R"({"Q": )" + q + R"(, "K": )" + q + R"(, "V": )" + v +
                         R"(, "rope": {"scaling": {"rope_type": "linear", "factor": 2}}})");
  const Result plain = test::compute_json(R"({"Q": )" + q + R"(, "K": )" + q + R"(, "V": )" + v +
                                          R"(, "rope": {"theta": 10000}})");
  EXPECT_GT(max_diff(*scaled.weights, *plain.weights), 1e-6);
  // By hand: the angle of pair p at position t is t·theta^(-2p/4)/2.
  const Problem p =
      test::problem(R"({"Q": )" + q + R"(, "K": )" + q + R"(, "V": )" + v +
                    R"(, "rope": {"scaling": {"rope_type": "linear", "factor": 2}}})");
  ASSERT_TRUE(p.rope.has_value());
  ASSERT_EQ(p.rope->inv_freq.size(), 2u);
  EXPECT_DOUBLE_EQ(p.rope->inv_freq[0], 0.5);
  EXPECT_DOUBLE_EQ(p.rope->inv_freq[1], 0.01 / 2);
  EXPECT_EQ(test::problem_error(R"({"Q": )" + q + R"(, "K": )" + q + R"(, "V": )" + v +
                                R"(, "rope": {"scaling": {"rope_type": "dynamic", "factor": 2}}})"),
            "t.json: rope.scaling: rope_scaling \"max_position_embeddings\" is missing: dynamic "
            "scaling grows the base past the model's max_position_embeddings");
}

}  // namespace
}  // namespace attn
