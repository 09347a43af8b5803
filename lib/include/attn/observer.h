// Observers: the engine reports each step of a computation (projections,
// scores, scaling, masking, softmax parts, weighted sums, output) to an
// Observer. A step is data: what was computed (its id, the symbols and
// quantities involved) and the numbers. The trace renderers word it
// (step_words in attn/trace.h), so traces show exactly what was computed
// and cannot drift from the engine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attn/problem.h"

namespace attn {

// The kinds of step, in the order a run reports them. Each has a stable
// name (name(StepId)): "scores", "weights", ... as JSON traces write it.
enum class StepId {
  // Inputs, projections, heads.
  kInputX,
  kInputY,
  kInputQ,
  kInputK,
  kInputV,
  kSources,
  kProjectionQ,
  kProjectionK,
  kProjectionV,
  kHeadQ,
  kHeadK,
  kHeadV,
  // Current models' steps before the scores: Q/K norm, RoPE.
  kQkNormQ,
  kQkNormK,
  kRopeAngles,
  kRopeCos,
  kRopeSin,
  kRopeQ,
  kRopeK,
  // Scores: cosine rows, each variant's own terms, the scores.
  kCosineQ,
  kCosineK,
  kAdditiveQ,
  kAdditiveK,
  kSingleLayerPre,
  kBiInputDot,
  kBiMemoryDot,
  kBiCrossDot,
  kScores,
  // Scaling, softcap, bias, ALiBi, masks.
  kScaled,
  kSoftcapRaw,
  kSoftcap,
  kBiased,
  kAlibiBias,
  kAlibi,
  kMasked,
  // Softmax, dropout, the weighted sum, the output.
  kRowMax,
  kExp,
  kRowSum,
  kSinkShare,
  kWeights,
  kDropout,
  kWeightedSum,
  kOutputScaled,
  kHeadOutput,
  kConcat,
  kOutputProjection,
  kOutput,
  // BiAttention's second attention.
  kBiO1,
  kBiRowMax,
  kBiW2,
  kBiO2,
  // What attn run adds: row similarities, the expected numbers.
  kSimilarityInput,
  kSimilarityOutput,
  kExpected,
  kExpectedReading,
  // A model's steps before a layer's attention.
  kTokenIds,
  kEmbeddings,
  kHiddenIn,
  kInputNorm,
  // A step an observer of its own adds: TraceStep::custom_name names it.
  kCustom,
};

// The stable name of a step kind ("input_X", "scores", "weighted_sum").
std::string_view name(StepId id);

// Every step kind, in the order above.
const std::vector<StepId>& step_ids();

// The step kind of a name; nullopt when no step has it.
std::optional<StepId> parse_step_id(std::string_view name);

// What a step computed besides its numbers: the symbols and quantities its
// title, formula and note are worded from. A step sets the members its id
// uses; the others keep their defaults.
struct StepFacts {
  // The names that vary from run to run (the others belong to the step's
  // kind): the matrix a step shows or defines ("Q" of projection_Q, head_q
  // and input_Q), and the one it is computed from ("X" or "Y" of a
  // projection; "S" or "S'", the scores so far, of the bias, masks and
  // softmax; "C" or "O" of the output projection; the rows of a similarity).
  std::string symbol, source;
  // sources: each unprojected matrix and what it is, {"K", "X"} for K = X.
  std::vector<std::pair<std::string, std::string>> aliases;
  Mode mode = Mode::kSelf;
  Variant variant = Variant::kScaledDot;
  bool cosine = false;  // scores of L2-normalised rows, Q̂ and K̂
  bool weight = false;  // output_projection: through W_o
  bool bias = false;    // projections: a bias added
  // Heads: how many (concat); the columns [first_col, end_col) of a head
  // block; the key/value head a grouped query head reads, of kv_heads
  // (-1: the heads are not grouped).
  int64_t heads = 1, first_col = 0, end_col = 0, kv_head = -1, kv_heads = 0;
  // Scaling (scaled, output_scaled, expected_reading): the factor, its kind
  // and what it is computed from, and the temperature.
  ScaleKind scale = ScaleKind::kSqrtDk;
  double factor = 1, temperature = 1;
  int64_t d_k = 0, len_k = 0;
  double softcap = 0;  // softcap: c
  double qk_norm = 0;  // qk_norm_q, qk_norm_k: epsilon (bias: weighted)
  // The model's steps before a layer's attention (token_ids, embeddings,
  // hidden_in, input_norm): how they were computed, in words, and the layer.
  std::string detail;
  int64_t layer = 0;
  double slope = 0;            // alibi_bias: m
  std::optional<double> sink;  // row_max, row_sum, weights: the sink logit
  double mask_fill = 0;        // masked: what masked scores become
  bool window = false;         // masked: a sliding window, keys i - left .. i + right
  int64_t diagonal = 0;        // masked: q_offset - k_offset, where key j is query i's position
  int64_t window_left = -1, window_right = -1;  // -1: unbounded
  double dropout = 0;                           // dropout, weighted_sum: p
  uint64_t seed = 0;                            // dropout: the generator's seed
  // weights: whether some row had every key masked, and what it got.
  bool fully_masked_rows = false;
  FullyMasked fully_masked = FullyMasked::kZero;
  Rope rope;               // rope_angles
  int64_t rope_width = 0;  // rope_angles: the features of a head
  // expected, expected_reading: whether the output matches the expected
  // numbers; when not, why (attn/check.h) and the setting that gives them.
  bool matches = false;
  std::string explanation, setting;
};

struct TraceStep {
  StepId id = StepId::kCustom;  // what kind of step: its words and its name in JSON
  std::string custom_name;      // of a kCustom step: its name (its title in a trace)
  StepFacts facts;              // what the step computed, for its words
  int64_t batch = -1;           // -1: not per batch
  int64_t head = -1;            // -1: not per head
  MatrixR values;               // the numbers (rows x cols); empty for text-only steps
  std::vector<uint8_t> masked;  // optional: one flag per value, 1 = masked cell
  std::vector<std::string> row_labels, col_labels;
  // For the weighted sum: weights (rows x keys) and the value rows; the
  // trace writes out row i as sum_j w_ij · v_j.
  MatrixR weights, value_rows;
  std::vector<std::string> value_labels;
};

// A step's name: its kind's, or a kCustom step's own.
std::string_view name(const TraceStep& s);

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void step(const TraceStep& step) = 0;
};

}  // namespace attn
