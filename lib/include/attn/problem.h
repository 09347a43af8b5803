// Problems: an input document turned into what the engine computes: settings
// resolved to their defaults, inputs given a leading batch axis, parameters
// in math layout and whole form (per-head weights concatenated), masks
// broadcast to rank 4 with the keep-convention already applied. Every shape
// check of docs/spec.md happens here, before anything is computed.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attn/document.h"
#include "attn/options.h"
#include "attn/tensor.h"

namespace attn {

using MatrixR = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct Params {
  // Projections, math layout [in][out], heads concatenated in column blocks.
  std::optional<MatrixR> W_q, W_k, W_v, W_o;
  std::optional<Eigen::VectorXd> b_q, b_k, b_v, b_o;
  // Scoring parameters of the additive variant: [dq][h], [dk][h], [h].
  std::optional<MatrixR> additive_W_q, additive_W_k;
  std::optional<Eigen::VectorXd> w_v;
  // single_layer: [dk]. biattention: [d] each.
  std::optional<Eigen::VectorXd> w, w_in, w_mem, dot_scale;
  // Q/K norm weights, [head width] each (ones when not given).
  std::optional<Eigen::VectorXd> q_norm, k_norm;
};

struct Masks {
  Tensor<uint8_t> mask;             // [Bm][Hm][Lq][Lk], Bm in {1,B}, Hm in {1,H}; empty if none
  Tensor<uint8_t> key_padding;      // [Bk][Lk], Bk in {1,B}; empty if none
  std::vector<int64_t> valid_lens;  // [B][Lq] flattened; empty if none
  bool causal = false;
  // The document's mask and key_padding_mask said 1 = keep (mask_convention
  // keep): mask and key_padding hold their complement.
  bool flipped = false;
  Tensor<double> bias;  // like mask; empty if none
  // Sliding window: query i sees keys i - left .. i + right (-1: unbounded).
  bool window = false;
  int64_t window_left = -1, window_right = -1;
  // Positions: query i sits at q_offset + i, key j at k_offset + j; causal,
  // the window and ALiBi compare them, so they see the diagonal j = i +
  // diagonal (diagonal = q_offset - k_offset) where the indices alone see
  // j = i.
  int64_t diagonal = 0;

  bool any() const {
    return !mask.empty() || !key_padding.empty() || !valid_lens.empty() || causal ||
           !bias.empty() || window;
  }
};

// Rotary position embedding of each head of Q and K.
struct Rope {
  double theta = 10000;
  int64_t dims = 0;  // rotated features at the start of each head (even)
  RopeLayout layout = RopeLayout::kHalf;
  int64_t q_offset = 0, k_offset = 0;  // positions of query 0 and key 0
  std::optional<RopeScaling> scaling;
  // Resolved from the above when the problem is built: the inverse
  // frequency of each rotated pair, and the factor on cos and sin.
  std::vector<double> inv_freq;
  double attention = 1;
};

struct Problem {
  std::string source;  // the document's name, for messages and warnings

  Mode mode = Mode::kSelf;
  Variant variant = Variant::kScaledDot;
  int64_t heads = 1;
  Scale scale;
  bool scale_explicit = false;  // given by the user rather than the variant default
  double temperature = 1.0;
  ScaleAt scale_at = ScaleAt::kScores;
  double mask_fill = -INFINITY;
  FullyMasked fully_masked = FullyMasked::kZero;
  double dropout = 0.0;
  uint64_t seed = 0;
  ParamsLayout params_layout = ParamsLayout::kMath;

  int64_t batch = 1;
  bool batched = false;  // the input had a batch axis
  bool four_d = false;   // Q/K/V given as [batch][heads][len][dim]
  int64_t len_q = 0, len_k = 0;
  // Where query 0 and key 0 sit (RoPE, causal, window and ALiBi use them).
  int64_t q_offset = 0, k_offset = 0;
  bool causal_bottom_right = false;  // q_offset was set to align the last query and key

  // Sources of queries, keys and values: [B][L][d], or [B][H][L][d] when
  // four_d. In self mode all three hold X; in cross mode keys and values Y.
  Tensor<double> query_in, key_in, value_in;
  std::string query_name = "X", key_name = "X", value_name = "X";
  Shape query_shape, key_shape, value_shape;  // as given, for messages

  Params params;
  Masks masks;

  // Grouped-query attention: K and V carry kv_heads heads; query head h
  // reads key/value head kv_head(h).
  int64_t kv_heads = 0;              // 0 until resolved: as many as heads
  int64_t kv_heads_from_shapes = 0;  // 4-D K/V with fewer heads than Q: their count
  std::optional<Rope> rope;
  std::vector<double> alibi;  // one slope per head; empty: no ALiBi
  double softcap = 0;         // 0: no capping
  double qk_norm = 0;         // Q/K norm's epsilon; 0: no Q/K norm
  std::vector<double> sinks;  // one sink logit per head; empty: no sinks

  // Widths after projection, over all heads: d_q over the query heads,
  // d_k and d_v over the kv_heads key/value heads.
  int64_t d_q = 0, d_k = 0, d_v = 0;
  int64_t d_out = 0;  // width of an output row

  std::vector<std::string> query_labels, key_labels;  // empty if not given
  std::string title, description, source_text;
  std::optional<Expected> expected;

  // The files the document's tensors were read from, by their name in the
  // document ("X", "K", "W_q", "mask", "attn_bias", ...), each with its
  // shape as the document held it; tensors written in the document or
  // computed have none. --emit-pytorch loads large tensors from them.
  std::map<std::string, TensorOrigin> origins;

  int64_t head_dim_q() const { return d_q / heads; }
  int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
  int64_t head_dim_v() const { return d_v / kv(); }
  // Width of the concatenated head outputs (the input of W_o).
  int64_t concat_width() const { return heads * head_dim_v(); }
  int64_t kv_head(int64_t h) const { return h / (heads / kv()); }
  bool grouped() const { return kv() != heads; }
};

// Validates a document and resolves it into a Problem. Throws attn::Error
// (kInput) naming the place and, for shapes, both shapes. A document
// given up (an rvalue) has its X, Y, Q, K and V moved into the problem
// instead of copied: only their shapes and places remain in it.
Problem build_problem(const InputDocument& doc);
Problem build_problem(InputDocument&& doc);

// The run's settings in one line, as tables, traces and heatmaps show them:
// "scaled_dot, self, scale sqrt_dk, 2 heads, causal, mask_fill -1e+06".
std::string describe_run(const Problem& p);

// The scale factor that multiplies the raw scores of one head (before the
// temperature), for the scalar scalings; 1 for none and cosine. `norm` is
// data-dependent and handled by the engine.
double scale_factor(const Problem& p);

}  // namespace attn
