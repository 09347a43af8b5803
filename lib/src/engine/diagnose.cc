// Why a check failed: the mistakes people make when they write attention by
// hand, each planted into the problem (or the computation) and tried
// against the expected numbers. The first that reproduces them is named,
// with the flag that reproduces it when one does.
//
// A mistake is one row of kMistakes below: how to plant it, and what to
// tell the user. The order matters where two could match the same numbers
// (the more specific first).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "attn/check.h"
#include "attn/error.h"
#include "base/number_text.h"
#include "problem/variant_unit.h"

namespace attn {

namespace {

using Plant = std::function<std::optional<Result>(const Problem&, const ComputeRequest&)>;

using Words = std::function<std::string(const Problem&)>;

struct Mistake {
  const char* name;
  Plant plant;
  // The flag that reproduces the expected numbers (empty: none does) and
  // the paragraph for people, given the problem as run.
  Words setting, explanation;
};

// A setting that does not depend on the problem ("" when no flag
// reproduces the mistake).
Words fixed(const char* setting) {
  return [setting](const Problem&) { return std::string(setting); };
}

// A problem transform as a planting: nullopt where it does not apply.
Plant planted(std::function<std::optional<Problem>(const Problem&)> change) {
  return [change](const Problem& p, const ComputeRequest& req) -> std::optional<Result> {
    std::optional<Problem> alt = change(p);
    if (!alt) return std::nullopt;
    return compute(*alt, req);
  };
}

bool scalar_scale(const Problem& p) {
  return p.scale.kind != ScaleKind::kCosine && p.scale.kind != ScaleKind::kNorm;
}

std::string factor_text(const Problem& p) {
  const double f = scale_factor(p);
  return p.scale.kind == ScaleKind::kSqrtDk ? "f = 1/√d_k = " + format_shortest(f)
                                            : "f = " + format_shortest(f);
}

// The mask as a [Bm][Hm][Lq][Lk] tensor with every cell where `masked`
// holds set, or-ed into the problem's own mask.
void add_mask(Problem& p, const std::function<bool(int64_t i, int64_t j)>& masked) {
  Tensor<uint8_t>& m = p.masks.mask;
  if (m.empty()) m = Tensor<uint8_t>({1, 1, p.len_q, p.len_k}, uint8_t{0});
  const int64_t planes = m.size() / (p.len_q * p.len_k);
  for (int64_t s = 0; s < planes; ++s) {
    for (int64_t i = 0; i < p.len_q; ++i) {
      for (int64_t j = 0; j < p.len_k; ++j) {
        if (masked(i, j)) m[(s * p.len_q + i) * p.len_k + j] = 1;
      }
    }
  }
}

// Columns of a [rows][cols] block of `x` (a flat row-major [..][cols]
// tensor or matrix) permuted: new column c takes old column from(c).
template <typename Get, typename Set>
void permute_columns(int64_t rows, int64_t cols, const std::function<int64_t(int64_t)>& from,
                     Get get, Set set) {
  std::vector<double> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) row[static_cast<size_t>(c)] = get(r, from(c));
    for (int64_t c = 0; c < cols; ++c) set(r, c, row[static_cast<size_t>(c)]);
  }
}

void permute_tensor_columns(Tensor<double>& t, const std::function<int64_t(int64_t)>& from) {
  const int64_t cols = t.dim(t.rank() - 1), rows = t.size() / cols;
  permute_columns(
      rows, cols, from, [&](int64_t r, int64_t c) { return t[r * cols + c]; },
      [&](int64_t r, int64_t c, double v) { t[r * cols + c] = v; });
}

void permute_matrix_columns(MatrixR& m, const std::function<int64_t(int64_t)>& from) {
  permute_columns(
      m.rows(), m.cols(), from, [&](int64_t r, int64_t c) { return m(r, c); },
      [&](int64_t r, int64_t c, double v) { m(r, c) = v; });
}

void permute_vector(Eigen::VectorXd& v, const std::function<int64_t(int64_t)>& from) {
  const Eigen::VectorXd old = v;
  for (int64_t c = 0; c < v.size(); ++c) v(c) = old(from(c));
}

// Heads split from the columns the other way round: [L][H·d] viewed as
// [L][d][H] (column i·H + h is feature i of head h) where attn (and
// view(L, H, d)) takes column h·d + i.
std::optional<Problem> heads_split_wrong(const Problem& p, bool merged_wrong) {
  if (p.heads < 2 || p.four_d || p.grouped() || p.variant == Variant::kSingleLayer) {
    return std::nullopt;
  }
  const int64_t H = p.heads;
  auto from = [H](int64_t width) {
    const int64_t d = width / H;
    return [H, d](int64_t c) { return (c % d) * H + c / d; };
  };
  Problem alt = p;
  Params& w = alt.params;
  struct Side {
    std::optional<MatrixR>& W;
    std::optional<Eigen::VectorXd>& b;
    Tensor<double>& in;
    int64_t width;
  };
  for (Side s : {Side{w.W_q, w.b_q, alt.query_in, p.d_q}, Side{w.W_k, w.b_k, alt.key_in, p.d_k},
                 Side{w.W_v, w.b_v, alt.value_in, p.d_v}}) {
    if (s.width % H != 0) return std::nullopt;
    if (s.W) {
      permute_matrix_columns(*s.W, from(s.width));
      if (s.b) permute_vector(*s.b, from(s.width));
    } else {
      if (s.in.dim(s.in.rank() - 1) != s.width) return std::nullopt;
      permute_tensor_columns(s.in, from(s.width));
    }
  }
  // In self mode query_in, key_in and value_in are copies of X: each was
  // permuted once above. Merged back the same wrong way, the concatenated
  // output's column i·H + h is feature i of head h.
  if (merged_wrong) {
    const int64_t width = p.concat_width();
    if (w.W_o) {
      // W_o's rows meet the concatenation: row i·H + h meets head h's feature i.
      MatrixR t = w.W_o->transpose();
      permute_matrix_columns(t, from(width));
      w.W_o = t.transpose();
    }  // without W_o, the caller puts the output's columns back
  }
  return alt;
}

// Key/value heads tiled (k.repeat) instead of repeated per group
// (repeat_interleave): query head h reads kv head h mod KV.
std::optional<Problem> kv_heads_tiled(const Problem& p) {
  if (!p.grouped()) return std::nullopt;
  const int64_t H = p.heads, KV = p.kv();
  Problem alt = p;
  Params& w = alt.params;
  auto expand_tensor_heads = [&](Tensor<double>& t) {  // [B][KV][L][d] -> [B][H][L][d]
    const int64_t B = t.dim(0), L = t.dim(2), d = t.dim(3);
    Tensor<double> out({B, H, L, d});
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < H; ++h) {
        std::copy_n(t.data() + ((b * KV + h % KV) * L) * d, L * d,
                    out.data() + ((b * H + h) * L) * d);
      }
    }
    t = std::move(out);
  };
  auto expand_columns = [&](int64_t width) {  // KV blocks of width/KV -> H blocks
    const int64_t d = width / KV;
    return [KV, d](int64_t c) { return ((c / d) % KV) * d + c % d; };
  };
  auto widen = [&](Tensor<double>& t, int64_t width) {
    const int64_t rows = t.size() / width;
    Shape s = t.shape();
    s.back() = width / KV * H;
    Tensor<double> out(s);
    const auto from = expand_columns(width);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < s.back(); ++c) out[r * s.back() + c] = t[r * width + from(c)];
    }
    t = std::move(out);
  };
  auto widen_matrix = [&](MatrixR& m) {
    const int64_t width = m.cols();
    MatrixR out(m.rows(), width / KV * H);
    const auto from = expand_columns(width);
    for (int64_t c = 0; c < out.cols(); ++c) out.col(c) = m.col(from(c));
    m = std::move(out);
  };
  auto widen_vector = [&](Eigen::VectorXd& v) {
    const int64_t width = v.size();
    Eigen::VectorXd out(width / KV * H);
    const auto from = expand_columns(width);
    for (int64_t c = 0; c < out.size(); ++c) out(c) = v(from(c));
    v = std::move(out);
  };
  if (p.four_d) {
    if (p.key_in.rank() != 4 || p.value_in.rank() != 4) return std::nullopt;
    expand_tensor_heads(alt.key_in);
    expand_tensor_heads(alt.value_in);
  } else {
    if (w.W_k) {
      widen_matrix(*w.W_k);
      if (w.b_k) widen_vector(*w.b_k);
    } else {
      if (alt.key_in.dim(alt.key_in.rank() - 1) != p.d_k) return std::nullopt;
      widen(alt.key_in, p.d_k);
    }
    if (w.W_v) {
      widen_matrix(*w.W_v);
      if (w.b_v) widen_vector(*w.b_v);
    } else {
      if (alt.value_in.dim(alt.value_in.rank() - 1) != p.d_v) return std::nullopt;
      widen(alt.value_in, p.d_v);
    }
  }
  alt.d_k = p.d_k / KV * H;
  alt.d_v = p.d_v / KV * H;
  alt.kv_heads = H;
  alt.kv_heads_from_shapes = 0;
  return alt;
}

Plant heads_split(bool merged_wrong) {
  return [merged_wrong](const Problem& p, const ComputeRequest& req) -> std::optional<Result> {
    std::optional<Problem> alt = heads_split_wrong(p, merged_wrong);
    if (!alt) return std::nullopt;
    Result r = compute(*alt, req);
    if (merged_wrong && !p.params.W_o) {
      // The reference's column i·H + h is feature i of head h.
      const int64_t H = p.heads, d = p.concat_width() / H;
      permute_tensor_columns(r.output, [H, d](int64_t c) { return (c % H) * d + c / H; });
    }
    return r;
  };
}

// softmax over the queries (dim=-2) instead of the keys: the scores are
// computed as usual, then each key's column is normalised, and the values
// weighted with those columns.
std::optional<Result> softmax_over_queries(const Problem& p, const ComputeRequest& req) {
  if (detail::bidaf_pipeline(p.variant) || !p.sinks.empty() || p.dropout > 0) return std::nullopt;
  ComputeRequest r2 = req;
  r2.scores = true;
  r2.weights = true;
  r2.average_heads = false;
  r2.check_range = false;
  Result r = compute(p, r2);
  const int64_t B = p.batch, H = p.heads, Lq = p.len_q, Lk = p.len_k;
  const Tensor<double>& s = *r.scores;
  const Tensor<uint8_t>& masked = *r.masked;
  Tensor<double> w(r.weights->shape(), 0.0);
  for (int64_t bh = 0; bh < B * H; ++bh) {
    const int64_t base = bh * Lq * Lk;
    for (int64_t j = 0; j < Lk; ++j) {
      double m = -INFINITY;
      for (int64_t i = 0; i < Lq; ++i) {
        const int64_t at = base + i * Lk + j;
        if (!masked[at]) m = std::max(m, s[at]);
      }
      if (m == -INFINITY) continue;
      double sum = 0;
      for (int64_t i = 0; i < Lq; ++i) {
        const int64_t at = base + i * Lk + j;
        if (!masked[at]) sum += w[at] = std::exp(s[at] - m);
      }
      for (int64_t i = 0; i < Lq; ++i) w[base + i * Lk + j] /= sum;
    }
  }
  // The values each head reads, as the engine projects them.
  const int64_t hdv = p.head_dim_v();
  const double after = p.scale_at == ScaleAt::kOutput ? scale_factor(p) : 1.0;
  Tensor<double> out(r.output.shape(), 0.0);
  for (int64_t b = 0; b < B; ++b) {
    MatrixR concat = MatrixR::Zero(Lq, p.four_d ? hdv : p.concat_width());
    MatrixR values;
    if (!p.four_d) {
      const int64_t din = p.value_in.dim(2);
      values = Eigen::Map<const MatrixR>(p.value_in.data() + b * Lk * din, Lk, din);
      if (p.params.W_v) values = values * *p.params.W_v;
      if (p.params.b_v) values.rowwise() += p.params.b_v->transpose();
    }
    for (int64_t h = 0; h < H; ++h) {
      const Eigen::Map<const MatrixR> wh(w.data() + (b * H + h) * Lq * Lk, Lq, Lk);
      if (p.four_d) {
        const int64_t kvh = p.kv_head(h);
        const Eigen::Map<const MatrixR> vh(p.value_in.data() + (b * p.kv() + kvh) * Lk * hdv, Lk,
                                           hdv);
        Eigen::Map<MatrixR>(out.data() + (b * H + h) * Lq * hdv, Lq, hdv) = wh * vh * after;
      } else {
        concat.middleCols(h * hdv, hdv) = wh * values.middleCols(p.kv_head(h) * hdv, hdv) * after;
      }
    }
    if (p.four_d) continue;
    if (p.params.W_o) concat = concat * *p.params.W_o;
    if (p.params.b_o) concat.rowwise() += p.params.b_o->transpose();
    std::copy_n(concat.data(), concat.size(), out.data() + b * concat.size());
  }
  Result alt;
  alt.dtype = r.dtype;
  alt.output = std::move(out);
  if (req.weights) alt.weights = std::move(w);
  return alt;
}

std::string heads_split_words(const Problem& p) {
  const std::string H = std::to_string(p.heads), d = std::to_string(p.head_dim_q());
  return "The expected numbers split the features into heads the other way round: "
         "x.view(L, " +
         d + ", " + H + ") (head h takes the features h, h + " + H + ", h + 2·" + H +
         ", …) where attn, like x.view(L, " + H + ", " + d +
         ").transpose(0, 1), gives head h the features h·" + d + " … h·" + d + " + " +
         std::to_string(p.head_dim_q() - 1) +
         ". Split with view(batch, L, heads, head_dim) and transpose(1, 2), and merge "
         "back with the inverse.";
}

// The flag of a window of `left` keys back and `right` ahead: Hugging
// Face's count (--sliding-window) where nothing is ahead.
std::string window_flag(const Problem& p, int64_t left, int64_t right) {
  if (left >= 0 && (right == 0 || p.masks.causal)) {
    return "--sliding-window " + std::to_string(left + 1);
  }
  return "--window " + std::to_string(left) + "," + std::to_string(right);
}

// The window of this run with `by` more keys back (one key too wide or
// too narrow: --window W where --sliding-window W was meant, or the
// reverse).
std::optional<Problem> window_wider(const Problem& p, int64_t by) {
  if (!p.masks.window || p.masks.window_left < 0) return std::nullopt;
  const int64_t left = p.masks.window_left + by;
  if (left < 0 || left >= p.len_k) return std::nullopt;
  Problem alt = p;
  alt.masks.window_left = left;
  return alt;
}

std::string window_words(const Problem& p, int64_t by) {
  const int64_t w = p.masks.window_left;
  const std::string seen = std::to_string(w + by + 1);
  std::string s = "The expected numbers let each query see " + seen +
                  " keys up to and including itself, one " + (by < 0 ? "fewer" : "more") +
                  " than this run's window (" + std::to_string(w) + " keys back plus the query). ";
  if (by < 0) {
    s += "Hugging Face's sliding_window " + seen +
         " (Mistral, Gemma 2) counts the query among its keys, where --window " + seen +
         " counts the keys before it: --sliding-window " + seen + " is Hugging Face's reading.";
  } else {
    s += "--window W counts the W keys before the query and the query itself, Hugging "
         "Face's sliding_window W counts the query among the W.";
  }
  return s + " Run with " + window_flag(p, w + by, p.masks.window_right) + " to reproduce them.";
}

// RoPE's positions of the queries as a reference that forgot them in a
// decode step computes: the queries at 0 (or, the reverse, the queries
// after the keys where this run left them at 0).
std::optional<Problem> rope_queries_at(const Problem& p, int64_t q_offset) {
  if (!p.rope || p.rope->q_offset == q_offset || p.rope->scaling) return std::nullopt;
  Problem alt = p;
  alt.rope->q_offset = q_offset;
  return alt;
}

std::string convention_flag(const Problem& p) {
  return p.masks.flipped ? "--mask-convention block" : "--mask-convention keep";
}

const std::vector<Mistake>& mistakes() {
  static const std::vector<Mistake> table = {
      {"the scale after the softmax", planted([](const Problem& p) -> std::optional<Problem> {
         if (!scalar_scale(p) || p.scale_at != ScaleAt::kScores || scale_factor(p) == 1.0) {
           return std::nullopt;
         }
         Problem alt = p;
         alt.scale_at = ScaleAt::kOutput;
         return alt;
       }),
       fixed("--scale-at output"),
       [](const Problem& p) {
         // "f = 1/√d_k = 0.5" names the factor apart from the formula, so
         // "V·1/√d_k = 0.5" cannot read as the whole product being 0.5.
         return "The expected numbers are softmax(QKᵀ)·V·f with the scale factor " +
                factor_text(p) +
                " applied after the softmax (scale_at: output), not to the scores. The formula "
                "softmax(QKᵀ/√d_k)·V gives the numbers computed here. Run with --scale-at output "
                "to reproduce the expected numbers exactly.";
       }},
      {"no scaling of the scores", planted([](const Problem& p) -> std::optional<Problem> {
         if (p.scale.kind == ScaleKind::kNone || !scalar_scale(p)) return std::nullopt;
         Problem alt = p;
         alt.scale = Scale{ScaleKind::kNone, 1.0};
         alt.temperature = 1.0;
         return alt;
       }),
       fixed("--scale none"),
       [](const Problem&) {
         return std::string(
             "The expected numbers are softmax(QKᵀ)·V without any scaling of the scores. Run "
             "with --scale none to reproduce them.");
       }},
      {"the scale applied twice", planted([](const Problem& p) -> std::optional<Problem> {
         if (p.scale.kind != ScaleKind::kSqrtDk || p.scale_at != ScaleAt::kScores) {
           return std::nullopt;
         }
         Problem alt = p;
         alt.scale = Scale{ScaleKind::kDk, 1.0};
         return alt;
       }),
       fixed("--scale dk"),
       [](const Problem& p) {
         const int64_t d = p.head_dim_q();
         return "The expected numbers divide the scores by d_k = " + std::to_string(d) +
                " instead of √d_k = " + format_shortest(std::sqrt(static_cast<double>(d))) +
                ": the factor 1/√d_k applied twice (say, once to Q and once to the scores). "
                "--scale dk reproduces them.";
       }},
      {"the reference is causal and this run is not",
       planted([](const Problem& p) -> std::optional<Problem> {
         if (p.masks.causal) return std::nullopt;
         Problem alt = p;
         alt.masks.causal = true;
         return alt;
       }),
       fixed("--causal"),
       [](const Problem&) {
         return std::string(
             "The expected numbers are causal: each query sees only the keys at or before its "
             "position (PyTorch's is_causal=True), and this run has no causal mask. Run with "
             "--causal to reproduce them.");
       }},
      {"the causal mask aligned at the other corner",
       planted([](const Problem& p) -> std::optional<Problem> {
         // What the flag does: --causal bottom-right sets q_offset to
         // k_offset + len_k - len_q, which RoPE and the mask both use.
         // Not with more queries than keys (the flag refuses it), offsets
         // of the user's own, or a RoPE scaling that the positions change.
         if (p.len_q >= p.len_k) return std::nullopt;
         const bool bottom_right = p.masks.causal && p.causal_bottom_right;
         if (!bottom_right && p.q_offset != p.k_offset) return std::nullopt;
         if (p.rope && p.rope->scaling) return std::nullopt;
         Problem alt = p;
         alt.masks.causal = true;
         alt.causal_bottom_right = !bottom_right;
         alt.q_offset = bottom_right ? p.k_offset : p.k_offset + p.len_k - p.len_q;
         alt.masks.diagonal = alt.q_offset - alt.k_offset;
         if (alt.rope) alt.rope->q_offset = alt.q_offset;
         return alt;
       }),
       [](const Problem& p) {
         return std::string(p.causal_bottom_right ? "--causal top-left" : "--causal bottom-right");
       },
       [](const Problem& p) {
         if (p.causal_bottom_right) {
           return std::string(
               "The expected numbers use a causal mask aligned at the top left: query i sees "
               "keys 0..i, as PyTorch's is_causal=True does. This run aligns the last query with "
               "the last key (bottom-right). Run with --causal top-left to reproduce them.");
         }
         return "The expected numbers use a causal mask aligned at the bottom right: the last "
                "query sees the last key, as flash-attn and a KV cache do (query i sits at "
                "position " +
                std::to_string(p.len_k - p.len_q) +
                " + i among the keys). PyTorch's is_causal=True and --causal align at the top "
                "left. Run with --causal bottom-right to reproduce them.";
       }},
      {"the reference has no causal mask", planted([](const Problem& p) -> std::optional<Problem> {
         if (!p.masks.causal) return std::nullopt;
         Problem alt = p;
         alt.masks.causal = false;
         return alt;
       }),
       fixed("--causal=false"),
       [](const Problem&) {
         return std::string(
             "The expected numbers have no causal mask: every query sees every key. If the "
             "reference is meant to be causal, it forgot the mask (is_causal=True, or the mask "
             "tensor not passed on); otherwise run without --causal.");
       }},
      {"the causal mask on the wrong side", planted([](const Problem& p) -> std::optional<Problem> {
         if (!p.masks.causal) return std::nullopt;
         Problem alt = p;
         alt.masks.causal = false;
         const int64_t diag = p.masks.diagonal;
         add_mask(alt, [diag](int64_t i, int64_t j) { return j < i + diag; });
         return alt;
       }),
       fixed(""),
       [](const Problem&) {
         return std::string(
             "The expected numbers mask the keys *before* each query and keep the later ones: "
             "the causal mask on the wrong side (torch.triu where torch.tril was meant, or the "
             "mask transposed). A causal attention masks "
             "the keys after the query, as --causal and PyTorch's is_causal=True do.");
       }},
      {"the mask read with the other polarity (keep/block)",
       planted([](const Problem& p) -> std::optional<Problem> {
         if (p.masks.mask.empty() && p.masks.key_padding.empty()) return std::nullopt;
         Problem alt = p;
         for (uint8_t& v : alt.masks.mask.values()) v = !v;
         for (uint8_t& v : alt.masks.key_padding.values()) v = !v;
         return alt;
       }),
       convention_flag,
       [](const Problem& p) {
         const bool keep = p.masks.flipped;
         return std::string(
                    "The expected numbers read the mask the other way round: true "
                    "means ") +
                (keep ? "masked" : "takes part") + ", where this run reads true as " +
                (keep ? "takes part" : "masked") +
                ". PyTorch has both: scaled_dot_product_attention's boolean attn_mask is true "
                "where a key takes part, nn.MultiheadAttention's attn_mask and "
                "key_padding_mask are true where it is masked. Run with " +
                convention_flag(p) + " to reproduce them.";
       }},
      {"the mask transposed", planted([](const Problem& p) -> std::optional<Problem> {
         const Tensor<uint8_t>& m = p.masks.mask;
         if (m.empty() || p.len_q != p.len_k) return std::nullopt;
         Problem alt = p;
         const int64_t L = p.len_q, planes = m.size() / (L * L);
         bool symmetric = true;
         for (int64_t s = 0; s < planes; ++s) {
           for (int64_t i = 0; i < L; ++i) {
             for (int64_t j = 0; j < L; ++j) {
               alt.masks.mask[(s * L + i) * L + j] = m[(s * L + j) * L + i];
               symmetric &= m[(s * L + j) * L + i] == m[(s * L + i) * L + j];
             }
           }
         }
         if (symmetric) return std::nullopt;
         return alt;
       }),
       fixed(""),
       [](const Problem&) {
         return std::string(
             "The expected numbers use the mask transposed: mask[j][i] where mask[i][j] is "
             "meant. attn reads mask[query][key], as PyTorch does; check the reference's mask "
             "(a .T, or a mask built [key][query]).");
       }},
      {"the softmax over the wrong axis", softmax_over_queries, fixed(""),
       [](const Problem&) {
         return std::string(
             "The expected numbers take the softmax over the queries (dim=-2), so each key's "
             "column sums to 1 instead of each query's row. Attention normalises each query's "
             "row: softmax(scores, dim=-1).");
       }},
      {"heads split in the wrong order", heads_split(true), fixed(""), heads_split_words},
      {"heads split in the wrong order, merged right", heads_split(false), fixed(""),
       heads_split_words},
      {"the other RoPE layout", planted([](const Problem& p) -> std::optional<Problem> {
         if (!p.rope) return std::nullopt;
         Problem alt = p;
         alt.rope->layout =
             p.rope->layout == RopeLayout::kHalf ? RopeLayout::kInterleaved : RopeLayout::kHalf;
         return alt;
       }),
       [](const Problem& p) {
         return std::string(p.rope->layout == RopeLayout::kHalf ? "--rope-layout interleaved"
                                                                : "--rope-layout half");
       },
       [](const Problem& p) {
         const bool half = p.rope->layout == RopeLayout::kHalf;
         return std::string("The expected numbers rotate the features in the ") +
                (half ? "interleaved layout (pairs 2i, 2i+1: RoFormer, Meta's Llama code)"
                      : "half layout (pairs i, i + d/2: GPT-NeoX, Hugging Face's "
                        "rotate_half)") +
                "; this run uses the " + (half ? "half" : "interleaved") + " one. Run with " +
                (half ? "--rope-layout interleaved" : "--rope-layout half") + " to reproduce them.";
       }},
      {"the reference has no RoPE", planted([](const Problem& p) -> std::optional<Problem> {
         if (!p.rope) return std::nullopt;
         Problem alt = p;
         alt.rope.reset();
         return alt;
       }),
       fixed("--rope=false"),
       [](const Problem&) {
         return std::string(
             "The expected numbers have no rotary embedding: Q and K enter the scores as "
             "given. If the reference should rotate them, it skipped apply_rotary_pos_emb; "
             "otherwise run without --rope.");
       }},
      {"the sliding window one key too wide",
       planted([](const Problem& p) { return window_wider(p, -1); }),
       [](const Problem& p) {
         return window_flag(p, p.masks.window_left - 1, p.masks.window_right);
       },
       [](const Problem& p) { return window_words(p, -1); }},
      {"the sliding window one key too narrow",
       planted([](const Problem& p) { return window_wider(p, 1); }),
       [](const Problem& p) {
         return window_flag(p, p.masks.window_left + 1, p.masks.window_right);
       },
       [](const Problem& p) { return window_words(p, 1); }},
      {"the reference has no sliding window",
       planted([](const Problem& p) -> std::optional<Problem> {
         if (!p.masks.window) return std::nullopt;
         Problem alt = p;
         alt.masks.window = false;
         alt.masks.window_left = alt.masks.window_right = -1;
         return alt;
       }),
       fixed("--window -1"),
       [](const Problem&) {
         return std::string(
             "The expected numbers have no sliding window: each query sees every key the other "
             "masks leave. If the reference is a sliding-window model (Mistral, Gemma 2's local "
             "layers), it forgot the window; otherwise run without it.");
       }},
      {"the queries' RoPE positions left at 0",
       planted([](const Problem& p) -> std::optional<Problem> {
         if (!p.rope || p.rope->q_offset == 0) return std::nullopt;
         return rope_queries_at(p, 0);
       }),
       fixed(""),
       [](const Problem& p) {
         return "The expected numbers rotate the queries as if they sat at positions 0, 1, …, "
                "where this run puts them at " +
                std::to_string(p.rope->q_offset) +
                ", … after the cached keys: a decode step whose position_ids (or the cache's "
                "offset) were not passed to the rotary embedding. The reference should rotate "
                "the new query at its place in the sequence.";
       }},
      {"the queries' RoPE positions missing in this run",
       planted([](const Problem& p) -> std::optional<Problem> {
         if (!p.rope || p.rope->q_offset != 0 || p.len_q >= p.len_k) return std::nullopt;
         return rope_queries_at(p, p.rope->k_offset + p.len_k - p.len_q);
       }),
       [](const Problem& p) {
         return "--q-offset " + std::to_string(p.rope->k_offset + p.len_k - p.len_q);
       },
       [](const Problem& p) {
         const std::string n = std::to_string(p.rope->k_offset + p.len_k - p.len_q);
         return "The expected numbers rotate the queries at positions " + n +
                ", … after the keys, as a decode step after " + n +
                " cached keys does; this run leaves them at 0. Run with --q-offset " + n +
                " (or --causal bottom-right) to reproduce them.";
       }},
      {"key/value heads tiled instead of repeated per group", planted(kv_heads_tiled), fixed(""),
       [](const Problem& p) {
         const std::string H = std::to_string(p.heads), KV = std::to_string(p.kv()),
                           n = std::to_string(p.heads / p.kv());
         return "The expected numbers pair query head h with key/value head h mod " + KV +
                ": the " + KV + " key/value heads tiled (k.repeat(1, " + n +
                ", 1, 1)). Grouped-query attention repeats each key/value head for its group "
                "of " +
                n + " query heads, so head h reads key/value head h ÷ " + n +
                " (k.repeat_interleave(" + n +
                ", dim=1), Hugging Face's repeat_kv, PyTorch's enable_gqa=True), as attn does.";
       }},
  };
  return table;
}

}  // namespace

std::optional<CheckAlternative> explain_mismatch(const Problem& p, const Expected& e, DType dtype) {
  if (detail::bidaf_pipeline(p.variant) || p.dropout > 0) return std::nullopt;
  // Each mistake reruns the attention: tried on problems of at most
  // kDiagnoseCells score cells, where the reruns take a moment.
  if (p.batch * p.heads * p.len_q * p.len_k > kDiagnoseCells) return std::nullopt;
  ComputeRequest req;
  req.dtype = dtype;
  req.weights = e.weights.has_value();
  std::vector<Mistake> tried = mistakes();
  // A causal run without a window against a reference with one: each width
  // tried, the narrowest first.
  // Each width is a rerun: tried where they all take what one mistake may.
  if (p.masks.causal && !p.masks.window &&
      p.batch * p.heads * p.len_q * p.len_k * p.len_k <= kDiagnoseCells) {
    for (int64_t w = 1; w < p.len_k; ++w) {
      tried.push_back(
          Mistake{"the reference has a sliding window this run forgot",
                  planted([w](const Problem& q) -> std::optional<Problem> {
                    Problem alt = q;
                    alt.masks.window = true;
                    alt.masks.window_left = w - 1;
                    alt.masks.window_right = 0;
                    return alt;
                  }),
                  [w](const Problem&) { return "--sliding-window " + std::to_string(w); },
                  [w](const Problem&) {
                    const std::string n = std::to_string(w);
                    return "The expected numbers let each query see only the " + n +
                           " keys up to and including itself: a sliding window (Hugging Face's "
                           "sliding_window " +
                           n +
                           ", Mistral, Gemma 2's local layers) that this run does not have. Run "
                           "with --sliding-window " +
                           n + " to reproduce them.";
                  }});
    }
  }
  for (const Mistake& m : tried) {
    try {
      std::optional<Result> r = m.plant(p, req);
      if (r && check_result(*r, e).passed()) {
        return CheckAlternative{m.name, m.setting(p), m.explanation(p), std::move(*r)};
      }
    } catch (const Error&) {
      // A planting the problem cannot take (a limit, a fully masked row
      // under fully_masked: error): not the explanation.
    }
  }
  return std::nullopt;
}

}  // namespace attn
