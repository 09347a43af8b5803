// The words of trace steps: a step's data (its id and facts) turned into
// its title, its formula in plain text and in LaTeX, and its note.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "attn/trace.h"
#include "test_util.h"

namespace attn {
namespace {

TraceStep step(const std::string& id, const StepFacts& facts = {}, int64_t head = -1) {
  TraceStep s;
  // A name attn does not know is a step of another observer's own.
  if (const std::optional<StepId> known = parse_step_id(id)) {
    s.id = *known;
  } else {
    s.id = StepId::kCustom;
    s.custom_name = id;
  }
  s.facts = facts;
  s.head = head;
  return s;
}

StepFacts facts(const std::string& symbol, const std::string& source = "") {
  StepFacts f;
  f.symbol = symbol;
  f.source = source;
  return f;
}

TEST(Wording, ScoresOfEachHeadAndVariant) {
  StepWords w = step_words(step("scores", facts("S"), 1), 4);
  EXPECT_EQ(w.title, "Scores Q·Kᵀ");
  EXPECT_EQ(w.formula, "S = Q_1·K_1ᵀ");
  EXPECT_EQ(w.latex, "S = Q_1 \\cdot K_1^\\top");
  EXPECT_EQ(w.latex_name, "");  // S is the table's name: "S = Q·Kᵀ ="
  StepFacts cosine = facts("S");
  cosine.cosine = true;
  w = step_words(step("scores", cosine, 10), 4);
  EXPECT_EQ(w.title, "Scores Q̂·K̂ᵀ");
  EXPECT_EQ(w.formula, "S = Q̂_10·K̂_10ᵀ");
  EXPECT_EQ(w.latex, "S = \\hat{Q}_{10} \\cdot \\hat{K}_{10}^\\top");
  StepFacts additive = facts("S");
  additive.variant = Variant::kAdditive;
  w = step_words(step("scores", additive), 4);
  EXPECT_EQ(w.title, "Additive scores");
  EXPECT_EQ(w.formula, "S_ij = w_vᵀ·tanh(f_i + g_j)");
  EXPECT_EQ(w.latex, "S_{ij} = w_v^\\top \\cdot \\tanh(f_i + g_j)");
  EXPECT_EQ(w.latex_name, "S");  // defined element by element: its table is "S ="
  EXPECT_EQ(w.note, "f_i: row i of F, g_j: row j of G");
}

TEST(Wording, ScaleFactorWithThePrecisionOrEveryDigit) {
  StepFacts f = facts("S'", "S");
  f.d_k = 2;
  f.factor = 1 / std::sqrt(2.0);
  StepWords w = step_words(step("scaled", f), 4);
  EXPECT_EQ(w.title, "Scaled scores");
  EXPECT_EQ(w.formula, "S' = S·0.7071");
  EXPECT_EQ(w.latex, "S' = S \\cdot 0.7071");
  EXPECT_EQ(w.note, "factor 1/√d_k = 1/√2 = 0.7071");
  EXPECT_EQ(step_words(step("scaled", f), -1).formula, "S' = S·0.7071067811865475");
  f.temperature = 2;
  EXPECT_EQ(step_words(step("scaled", f), 2).formula, "S' = S·0.71 / 2");
  EXPECT_EQ(step_words(step("scaled", f), 2).note, "factor 1/√d_k = 1/√2 = 0.71, temperature 2");
  // A factor that would round to 0 keeps its significant digits.
  f.scale = ScaleKind::kValue;
  f.factor = 1e-5;
  f.temperature = 1;
  EXPECT_EQ(step_words(step("scaled", f), 4).formula, "S' = S·1e-05");
  EXPECT_EQ(step_words(step("scaled", f), 4).note, "factor 1e-05");
  f.scale = ScaleKind::kLongSeq;
  f.len_k = 8;
  EXPECT_EQ(step_words(step("output_scaled", f, 3), 4).formula, "O_3' = O_3·1e-05");
  EXPECT_EQ(step_words(step("output_scaled", f, 3), 4).note,
            "factor 1/√(d_k·len_k) = 1/√(2·8) = 1e-05");
}

TEST(Wording, RopeStepsNameTheirAngles) {
  StepFacts f;
  f.rope.theta = 500;
  f.rope.dims = 2;
  f.rope.layout = RopeLayout::kInterleaved;
  f.rope.q_offset = 3;
  f.rope_width = 4;
  const StepWords w = step_words(step("rope_angles", f, 0), 4);
  EXPECT_EQ(w.title, "RoPE angles");
  EXPECT_EQ(w.formula, "θ_tp = t·theta^(−2p/dims)");
  EXPECT_EQ(w.latex, "\\theta_{tp} = t \\cdot theta^(-2p/dims)");
  EXPECT_EQ(w.note,
            "theta 500, 2 of 4 features rotate, layout interleaved; query i is at position 3 + "
            "i, key j at 0 + j");
  EXPECT_EQ(step_words(step("rope_cos"), 4).latex, "\\cos \\theta_{tp}");
  const StepWords q = step_words(step("rope_q"), 4);
  EXPECT_EQ(q.title, "Rotated queries");
  // pdflatex knows no θ or →: the LaTeX names them.
  EXPECT_EQ(q.latex,
            "(a, b) \\to (a \\cdot \\cos\\theta - b \\cdot \\sin\\theta, b \\cdot "
            "\\cos\\theta + a \\cdot \\sin\\theta)");
  EXPECT_EQ(q.formula, "(a, b) → (a·cos θ − b·sin θ, b·cos θ + a·sin θ)");
}

TEST(Wording, AlibiSlopeOfItsHead) {
  StepFacts f = facts("B");
  f.slope = 0.25;
  StepWords w = step_words(step("alibi_bias", f, 3), 4);
  EXPECT_EQ(w.title, "ALiBi bias");
  EXPECT_EQ(w.formula, "B_ij = −m·|i − j|, m = 0.25");
  EXPECT_EQ(w.latex, "B_{ij} = -m \\cdot |i - j|, m = 0.25");
  EXPECT_EQ(w.latex_name, "B");
  EXPECT_EQ(w.note, "head 3's slope m = 0.25");
  // One head: the step is not per head, and its slope is head 0's.
  EXPECT_EQ(step_words(step("alibi_bias", f), 4).note, "head 0's slope m = 0.25");
  EXPECT_EQ(step_words(step("alibi", f, 3), 4).formula, "S' = S' + B");
}

TEST(Wording, GroupedHeadsSayWhichKeyValueHeadTheyRead) {
  StepFacts k = facts("K");
  k.first_col = 2;
  k.end_col = 4;
  k.kv_head = 1;
  k.kv_heads = 2;
  const StepWords w = step_words(step("head_k", k, 3), 4);
  EXPECT_EQ(w.title, "Key block");
  EXPECT_EQ(w.formula, "K_3 = K[:, 2:4]");
  EXPECT_EQ(w.note, "query head 3 reads key/value head 1 of 2 (kv_heads)");
  k.symbol = "V";
  EXPECT_EQ(step_words(step("input_V", k, 3), 4).title, "Input V");
  EXPECT_EQ(step_words(step("input_V", k, 3), 4).formula, "V_3");
  // Without grouping, a block says nothing more.
  k.kv_head = -1;
  EXPECT_EQ(step_words(step("head_k", k, 3), 4).note, "");
  EXPECT_EQ(step_words(step("head_q", facts("Q"), 12), 4).latex, "Q_{12} = Q[:, 0:0]");
}

TEST(Wording, MasksSayWhatMaskedCellsBecome) {
  StepFacts f = facts("S'", "S'");
  f.mask_fill = -INFINITY;
  StepWords w = step_words(step("masked", f), 4);
  EXPECT_EQ(w.formula, "S'_ij = mask_fill where masked");
  EXPECT_EQ(w.latex, "S'_{ij} = \\text{mask\\_{fill}} \\text{where masked}");
  EXPECT_EQ(w.latex_name, "S'");
  EXPECT_EQ(w.note, "masked cells are set to -inf");
  f.mask_fill = -1e9;
  f.window = true;
  f.window_left = 2;
  EXPECT_EQ(step_words(step("masked", f), 4).note,
            "masked cells are set to mask_fill = -1e+09; window: query i sees keys i − 2 … i + "
            "unbounded");
  f.variant = Variant::kBiattention;
  w = step_words(step("masked", f), 4);
  EXPECT_EQ(w.formula, "S_ij = mask_fill where memory j is padding");
  EXPECT_EQ(w.latex, "S_{ij} = \\text{mask\\_{fill}} \\text{where memory $j$ is padding}");
  EXPECT_EQ(w.note, "");
}

TEST(Wording, SoftmaxWithAndWithoutASink) {
  StepFacts f = facts("", "S'");
  EXPECT_EQ(step_words(step("row_max", f), 4).formula, "m_i = max_j S'_ij");
  EXPECT_EQ(step_words(step("row_max", f), 4).latex, "m_i = \\max_j S'_{ij}");
  EXPECT_EQ(step_words(step("row_sum", f), 4).title, "Row sums");
  EXPECT_EQ(step_words(step("weights", f), 4).note, "each row sums to 1");
  f.fully_masked_rows = true;
  f.fully_masked = FullyMasked::kUniform;
  EXPECT_EQ(step_words(step("weights", f), 4).note,
            "each row sums to 1, except rows with every key masked (fully_masked: uniform)");
  f.sink = 0.5;
  EXPECT_EQ(step_words(step("row_max", f), 4).formula, "m_i = max(max_j S'_ij, s), s = 0.5");
  EXPECT_EQ(step_words(step("row_max", f), 4).latex, "m_i = \\max(\\max_j S'_{ij}, s), s = 0.5");
  const StepWords sum = step_words(step("row_sum", f), 4);
  EXPECT_EQ(sum.title, "Row sums with the sink");
  EXPECT_EQ(sum.latex, "z_i = \\exp(s - m_i) + \\sum_j  E_{ij}");
  EXPECT_EQ(sum.latex_name, "z");
  EXPECT_EQ(step_words(step("weights", f), 4).note, "each row sums to 1 minus the sink's share");
  EXPECT_EQ(step_words(step("sink_share", f), 4).latex_name, "σ");
}

TEST(Wording, WeightedSumOfTheWeightsAfterDropout) {
  StepFacts f = facts("O", "A");
  EXPECT_EQ(step_words(step("weighted_sum", f), 4).formula, "O = A·V");
  f.dropout = 0.2;
  const StepWords w = step_words(step("weighted_sum", f, 2), 4);
  EXPECT_EQ(w.title, "Weighted sum of values");
  EXPECT_EQ(w.formula, "O_2 = Ã_2·V_2");
  EXPECT_EQ(w.latex, "O_2 = \\tilde{A}_2 \\cdot V_2");
  f.seed = 7;
  const StepWords d = step_words(step("dropout", f, 2), 4);
  EXPECT_EQ(d.formula, "Ã = A ⊙ keep / (1 − p), p = 0.2");
  EXPECT_EQ(d.note, "keep: cells kept by the dropout generator (seed 7)");
}

TEST(Wording, SourcesGroupTheMatricesOfOneInput) {
  StepFacts f;
  f.aliases = {{"Q", "X"}, {"K", "X"}, {"V", "X"}};
  StepWords w = step_words(step("sources", f), 4);
  EXPECT_EQ(w.formula, "Q = K = V = X");
  EXPECT_EQ(w.note, "self-attention: every row of X is a query, a key and a value");
  f.mode = Mode::kCross;
  f.aliases = {{"Q", "X"}, {"K", "Y"}, {"V", "Y"}};
  w = step_words(step("sources", f), 4);
  EXPECT_EQ(w.formula, "Q = X, K = V = Y");
  EXPECT_EQ(w.note, "");
}

TEST(Wording, ProjectionsAndHeads) {
  StepFacts q = facts("Q", "Y");
  q.bias = true;
  StepWords w = step_words(step("projection_Q", q), 4);
  EXPECT_EQ(w.title, "Projection Q");
  EXPECT_EQ(w.formula, "Q = Y·W_q + b_q");
  EXPECT_EQ(w.latex, "Q = Y \\cdot W_q + b_q");
  StepFacts c = facts("C");
  c.heads = 12;
  w = step_words(step("concat", c), 4);
  EXPECT_EQ(w.formula, "C = [O_0 | O_1 | O_2 | O_3 | ... | O_11]");
  EXPECT_EQ(w.latex, "C = [O_0 | O_1 | O_2 | O_3 | \\dots | O_{11}]");
  c.heads = 2;
  EXPECT_EQ(step_words(step("concat", c), 4).formula, "C = [O_0 | O_1]");
  StepFacts z = facts("Z", "C");
  z.weight = true;
  EXPECT_EQ(step_words(step("output_projection", z), 4).formula, "Z = C·W_o");
  EXPECT_EQ(step_words(step("output", {}, 1), 4).latex, "\\mathrm{output}_1");
}

TEST(Wording, InputsSayWhatTheyAreFor) {
  StepFacts x = facts("X");
  EXPECT_EQ(step_words(step("input_X", x), 4).title, "Input X");
  x.mode = Mode::kCross;
  EXPECT_EQ(step_words(step("input_X", x), 4).title, "Input X (queries)");
  EXPECT_EQ(step_words(step("input_Y", facts("Y")), 4).title, "Input Y");
  x.variant = Variant::kBiattention;
  EXPECT_EQ(step_words(step("input_X", x), 4).title, "Input X (document)");
  EXPECT_EQ(step_words(step("output", x), 4).latex, "[x_i, O1_i, x_i \\odot O1_i, o2 \\odot O1_i]");
}

TEST(Wording, ExpectedNumbersAndTheReadingThatGivesThem) {
  StepFacts f;
  f.matches = true;
  EXPECT_EQ(step_words(step("expected", f), 4).note, "the output above matches these numbers");
  f.matches = false;
  EXPECT_EQ(step_words(step("expected", f), 4).note,
            "these differ from the output above, and no common misreading of the formula "
            "explains them");
  f.explanation = "why";
  EXPECT_EQ(step_words(step("expected", f), 4).note, "these differ from the output above: why");
  f.setting = "--scale-at output";
  f.factor = 0.5;
  StepWords w = step_words(step("expected_reading", f), 4);
  EXPECT_EQ(w.title, "Output under --scale-at output (reproduces the expected numbers)");
  EXPECT_EQ(w.formula, "O = softmax(Q·Kᵀ)·V·f, f = 0.5");
  EXPECT_EQ(w.latex, "O = \\mathrm{softmax}(Q \\cdot K^\\top) \\cdot V \\cdot f, f = 0.5");
  f.setting = "--scale none";
  EXPECT_EQ(step_words(step("expected_reading", f), 4).formula, "O = softmax(Q·Kᵀ)·V");
  EXPECT_EQ(step_words(step("similarity_input", facts("", "X")), 4).latex,
            "sim(i, j) = X_i \\cdot X_j");
}

TEST(Wording, AStepOfAnotherObserverGoesByItsId) {
  const StepWords w = step_words(step("my_step"), 4);
  EXPECT_EQ(w.title, "my_step");
  EXPECT_EQ(w.formula, "");
}

// Records the steps of a run.
struct Recorder : Observer {
  std::vector<TraceStep> steps;
  void step(const TraceStep& s) override { steps.push_back(s); }
};

// Every step the engine reports has words, and its LaTeX has no operator
// left in plain text: the two are written from the same pieces.
TEST(Wording, EveryEngineStepHasWordsInBothForms) {
  const char* docs[] = {
      R"({"X": [[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]], "heads": 2, "kv_heads": 1,
          "rope": {}, "alibi": true, "softcap": 2, "window": [1, 0], "sinks": [0.5, 0.25],
          "dropout": 0.5, "params": {"W_k": [[1,0],[0,1],[1,0],[0,1]],
                                     "W_v": [[1,0],[0,1],[1,0],[0,1]]}})",
      R"({"X": [[1, 0], [0, 1]], "Y": [[1, 1], [0, 1], [1, 0]], "variant": "biattention",
          "params": {"w_in": [1, 0], "w_mem": [0, 1], "dot_scale": [1, 1]}})",
      R"({"X": [[1, 0], [0, 1]], "scale": "cosine", "variant": "single_layer",
          "params": {"w": [1, -1]}})",
      R"({"X": [[1, 0], [0, 1]], "variant": "additive",
          "params": {"W_q": [[1, 0], [0, 1]], "W_k": [[1, 0], [0, 1]], "w_v": [1, -1]}})",
      R"({"X": [[1, 0], [0, 1]], "scale": "dk", "scale_at": "output", "temperature": 2,
          "causal": true, "params": {"W_q": [[1, 0], [0, 1]], "b_q": [1, 1],
                                     "W_o": [[1, 0], [0, 1]], "b_o": [0, 1]}})",
  };
  for (const char* json : docs) {
    Recorder r;
    compute(test::problem(json), ComputeRequest{}, &r);
    ASSERT_FALSE(r.steps.empty());
    for (const TraceStep& s : r.steps) {
      const StepWords w = step_words(s, 4);
      EXPECT_NE(w.title, name(s.id)) << name(s.id);
      EXPECT_FALSE(w.formula.empty()) << name(s.id);
      for (const char* op : {"·", "ᵀ", "−", "⊙", "Σ", "‖", "Ã", "\u0302"}) {
        EXPECT_EQ(w.latex.find(op), std::string::npos) << name(s.id) << ": " << w.latex;
      }
    }
  }
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// Every kind of step has one name, which reads back as the same kind: the
// names JSON traces write and tests look steps up by.
TEST(StepIds, EveryIdHasANameThatReadsBack) {
  std::set<std::string> names;
  for (const StepId id : step_ids()) {
    const std::string n(name(id));
    EXPECT_FALSE(n.empty());
    EXPECT_TRUE(names.insert(n).second) << n << " names two kinds";
    EXPECT_EQ(parse_step_id(n), id) << n;
  }
  EXPECT_FALSE(parse_step_id("no_such_step"));
}

}  // namespace
}  // namespace attn
