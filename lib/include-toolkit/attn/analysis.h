// Analyses of a model's attention (docs/analyses.md): head summaries, the
// numbers that find previous-token, sink and local heads, over one
// sentence or many; attention rollout (Abnar & Zuidema 2020); value-weighted
// norms (Kobayashi et al. 2020); the model's predictions and its logit
// lens; the per-head difference of two stacks; and the alignment of two
// token sequences, as Python's difflib finds it. Each is a definition that
// a test holds to a float64 re-implementation.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/checkpoint.h"
#include "attn/tensor.h"

namespace attn {

// ---- Head summaries ------------------------------------------------------
//
// One number per head, the mean over the query rows of
//   entropy   −Σ_j w_ij ln w_ij (nats; 0 when one key takes everything)
//   first     w_i0, the weight on the first token (sink heads)
//   previous  the weight on the key just before the query's position
//   self      the weight on the query's own position
//   distance  Σ_j w_ij |pos_i − j|, how far a head looks
// leaving out the rows whose query sees a single key (a causal model's
// first query: its weight there is 1 by construction), the rows whose
// weights are all 0 (fully masked), and for `previous` a query with no
// previous token. Query i sits at key position pos_i = i + shift (see
// query_shift); the weights are causal when every weight right of a
// query's position is 0, and then query i sees keys 0 … pos_i. A NaN
// weight in a counted row makes the head's value NaN.
enum class HeadStat { kEntropy, kFirst, kPrevious, kSelf, kDistance };
const std::vector<std::string>& head_stat_names();
HeadStat parse_head_stat(const std::string& text);  // usage error naming --summary
const std::string& name(HeadStat stat);
// "weight on the previous token", for figures and tables.
const char* head_stat_meaning(HeadStat stat);

// Where the queries of [q][k] panels sit among the keys: 0 (top-left, as
// PyTorch's is_causal) unless there are more keys than queries and the
// first row `row0` gives weight past the first key, as a decode step after
// a KV cache does (bottom-right): k − q.
int64_t query_shift(const double* row0, int64_t q, int64_t k);

// One head's summary, its rows added one by one (so a mapped stack is read
// a row at a time).
class HeadSummary {
 public:
  HeadSummary(HeadStat stat, int64_t q, int64_t k, int64_t shift);
  // Row i (k weights).
  void add_row(int64_t i, const double* w);
  // Whether every row added had only zeros right of its query's position.
  bool causal() const { return causal_; }
  // The mean over the rows counted, with the weights of the panels read
  // together (every head of a layer or a stack) causal or not; NaN when no
  // row is counted.
  double value(bool causal) const;
  int64_t rows_counted(bool causal) const;
  int64_t rows_fully_masked() const { return fully_masked_; }

 private:
  HeadStat stat_;
  int64_t q_, k_, shift_;
  bool causal_ = true;
  double sum_ = 0, first_ = 0;  // rows past the first position; the first position's
  int64_t rows_ = 0, fully_masked_ = 0;
  bool has_first_ = false;
};

// Summaries of panels read together, [panels] (a layer's heads, or a
// stack's layers × heads), and what they left out in words.
struct HeadSummaries {
  HeadStat stat = HeadStat::kEntropy;
  std::vector<double> values;  // one per panel
  bool causal = false;
  int64_t shift = 0;
  int64_t rows_counted = 0;  // of a panel's q rows (the most over the panels)
  // "query 0, which sees a single key (causal)", "" when nothing was.
  std::string left_out;
};

// What the rules leave out of panels of q × k weights, in words.
std::string left_out_text(HeadStat stat, int64_t q, int64_t k, int64_t shift, bool causal,
                          int64_t fully_masked_rows);

// The summaries of every [q][k] panel of `weights` (rank 2 or more: the
// panels are its last two axes, e.g. a layer's [1][heads][q][k]).
HeadSummaries summarise_heads(const Tensor<double>& weights, HeadStat stat);

// The mean and numpy.std (ddof 0) of a [layers][heads] summary over
// sentences; a sentence whose value is NaN for a head (no row counted: a
// one-token sentence) is left out of that head's.
class SummaryMoments {
 public:
  explicit SummaryMoments(int64_t cells) : n_(cells, 0), mean_(cells, 0.0), m2_(cells, 0.0) {}
  void add(const std::vector<double>& values);
  std::vector<double> mean() const;
  std::vector<double> sd() const;
  // The sentences that gave each cell a value.
  const std::vector<int64_t>& counts() const { return n_; }

 private:
  std::vector<int64_t> n_;
  std::vector<double> mean_, m2_;  // Welford's running mean and squared deviations
};

// The n cells with the largest values (for entropy: the smallest), NaN
// left out, the first cell first among equals: their indices.
std::vector<int64_t> top_cells(const std::vector<double>& values, HeadStat stat, int64_t n);

// ---- Attention rollout ---------------------------------------------------
//
// Abnar & Zuidema (2020): Â_l = rownorm(0.5 · fuse_h(A_l) + 0.5 · I), R_0 =
// Â_0, R_l = Â_l · R_(l−1), where fuse_h takes the mean (default), the
// largest or the smallest weight over the heads, and rownorm divides each
// row by its sum.
enum class RolloutFusion { kMean, kMax, kMin };
const std::vector<std::string>& rollout_fusion_names();
RolloutFusion parse_rollout_fusion(const std::string& text);  // usage error naming --rollout-fusion

class Rollout {
 public:
  explicit Rollout(RolloutFusion fusion) : fusion_(fusion) {}
  // The next layer's weights [batch][heads][q][q]; returns R_l,
  // [batch][1][q][q]. The panels must be square (self-attention) and keep
  // their shape from layer to layer.
  Tensor<double> add_layer(const Tensor<double>& weights);

 private:
  RolloutFusion fusion_;
  Tensor<double> r_;  // R_(l−1), [batch][1][q][q]
};

// ---- Value norms ---------------------------------------------------------
//
// Kobayashi et al. (2020), "Attention is not only a weight": α^h_ij ·
// ‖v^h_j W_O^h‖₂, the size of what key j passes to query i through head h
// (v with its bias, W_O^h without the output bias, nothing after W_O).
// `weights` [1][heads][q][k] and `values` of the same layer; the result has
// the weights' shape.
Tensor<double> value_norms(const Tensor<double>& weights, const LayerValues& values);

// ---- Predictions and the logit lens -------------------------------------

struct TokenProbability {
  int64_t id = 0;
  double p = 0;  // softmax over the vocabulary
};

// The k most likely tokens of each row of `logits` (its last axis the
// vocabulary) under softmax, most likely first, the lower id first among
// equals. k must be at most the vocabulary (a usage error naming `flag`).
std::vector<std::vector<TokenProbability>> top_tokens(const Tensor<double>& logits, int64_t k,
                                                      const std::string& flag);

// ---- Differences of two stacks ------------------------------------------

// Per (layer, head) of two stacks [layers][batch][heads][q][k]: the largest
// |B − A| over the cells compared, and the mean over the query rows of the
// Jensen–Shannon divergence (nats) of A's and B's rows, each read as a
// distribution over the keys compared (divided by its sum; a row that is
// not one on both sides is skipped, attn/compare.h's rule). The cells
// compared are the tokens both keep: `rows_a`[t] of A against `rows_b`[t]
// of B, for queries and keys alike (empty: every token, which needs equal
// shapes); every batch entry.
struct HeadDifferences {
  int64_t layers = 0, heads = 0;
  std::vector<double> max_abs, js;  // [layers][heads]
  int64_t rows_compared = 0, rows_skipped = 0;
};
HeadDifferences compare_heads(const Tensor<double>& a, const Tensor<double>& b,
                              const std::vector<int64_t>& rows_a = {},
                              const std::vector<int64_t>& rows_b = {});

// The positions two token sequences have in common, as Python's
// difflib.SequenceMatcher(None, a, b).get_matching_blocks() matches them
// (its popular-token rule for sequences of 200 or more included): pairs
// (i, j), a[i] == b[j], increasing in both.
std::vector<std::pair<int64_t, int64_t>> matching_tokens(const std::vector<std::string>& a,
                                                         const std::vector<std::string>& b);

}  // namespace attn
