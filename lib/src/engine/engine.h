// The engine's per-scalar implementation, shared by the float and double
// instantiations in attention.cc, and the engine as a variant's own
// pipeline sees it (EngineItem). Private to the library.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attn/attention.h"
#include "attn/observer.h"
#include "base/mat.h"
#include "engine/score_range.h"
#include "kernel/mask_view.h"

namespace attn::detail {

// Matrix `index` of a tensor seen as consecutive rows x cols matrices
// (batch b of [B][L][d], or (batch, head) bh of [B][H][L][d]), in T.
template <class T>
Mat<T> slice(const Tensor<double>& t, int64_t index, int64_t rows, int64_t cols) {
  Eigen::Map<const MatrixR> m(t.data() + index * rows * cols, rows, cols);
  return m.template cast<T>();
}

template <class T>
std::optional<Mat<T>> cast(const std::optional<MatrixR>& m) {
  if (!m) return std::nullopt;
  return m->template cast<T>();
}

template <class T>
std::optional<Vec<T>> cast(const std::optional<Eigen::VectorXd>& v) {
  if (!v) return std::nullopt;
  return v->template cast<T>();
}

// The Q, K, V projections of a problem, in T: cast once per run.
template <class T>
struct Projections {
  std::optional<Mat<T>> W_q, W_k, W_v;
  std::optional<Vec<T>> b_q, b_k, b_v;
  explicit Projections(const Params& w)
      : W_q(cast<T>(w.W_q)),
        W_k(cast<T>(w.W_k)),
        W_v(cast<T>(w.W_v)),
        b_q(cast<T>(w.b_q)),
        b_k(cast<T>(w.b_k)),
        b_v(cast<T>(w.b_v)) {}
};

// x·W + b, or x itself without W.
template <class T>
Mat<T> project(const Mat<T>& x, const std::optional<Mat<T>>& W, const std::optional<Vec<T>>& b) {
  if (!W) return x;
  Mat<T> y = x * *W;
  if (b) y.rowwise() += b->transpose();
  return y;
}

// One batch item of a problem with 2D/3D inputs: the query, key and value
// sources (X, Y, or Q, K, V) and their projections, Q and K only when
// `project_qk` (the additive variant projects them its own way).
template <class T>
struct ItemInputs {
  Mat<T> xq, xk, xv;  // as given
  Mat<T> q, k, v;     // projected
};

template <class T>
ItemInputs<T> item_inputs(const Problem& p, int64_t b, const Projections<T>& w, bool project_qk) {
  const Tensor<double>& qi = p.query_in;
  const Tensor<double>& ki = p.key_in;
  const Tensor<double>& vi = p.value_in;
  ItemInputs<T> x;
  x.xq = slice<T>(qi, b, qi.dim(1), qi.dim(2));
  x.xk = slice<T>(ki, b, ki.dim(1), ki.dim(2));
  x.xv = slice<T>(vi, b, vi.dim(1), vi.dim(2));
  x.q = project_qk ? project(x.xq, w.W_q, w.b_q) : x.xq;
  x.k = project_qk ? project(x.xk, w.W_k, w.b_k) : x.xk;
  x.v = project(x.xv, w.W_v, w.b_v);
  return x;
}

// Block g of `count` equal blocks of columns: query head g of Q, or key/
// value head g of K and V (query head h reads block p.kv_head(h)).
template <class T>
Mat<T> head_block(const Mat<T>& m, int64_t g, int64_t count) {
  const int64_t w = m.cols() / count;
  return m.middleCols(g * w, w);
}

// Query head h of batch item b of 4D Q ([B][H][Lq][d]), or key/value head
// g of 4D K or V ([B][KV][Lk][d]).
template <class T>
Mat<T> four_d_head(const Tensor<double>& t, int64_t b, int64_t h) {
  return slice<T>(t, b * t.dim(1) + h, t.dim(2), t.dim(3));
}

// The reference engine (attention.cc) as a variant's own pipeline (a
// VariantUnit's ItemFn, BiDAF's) computes a batch item with it: the steps
// it reports, the maps a request keeps and the output, as the engine's
// per-head pipeline does them.
template <class T>
class EngineItem {
 public:
  virtual ~EngineItem() = default;

  virtual const Problem& problem() const = 0;

  // Whether an observer takes the steps; emit reports one (observing()
  // only): step `id` of batch item b and head h (-1 for none) with its
  // facts (the run's mode and variant filled in), its numbers, the labels
  // of their rows and columns and the cells shown masked.
  virtual bool observing() const = 0;
  template <class M>
  void emit(StepId id, StepFacts facts, int64_t b, int64_t h, const M& values,
            const std::vector<std::string>& rows, const std::vector<std::string>& cols = {},
            const std::vector<uint8_t>* masked = nullptr) {
    emit_step(id, std::move(facts), b, h, MatrixR(values.template cast<double>()), rows, cols,
              masked);
  }
  virtual void emit_step(StepId id, StepFacts facts, int64_t b, int64_t h, MatrixR values,
                         const std::vector<std::string>& rows, const std::vector<std::string>& cols,
                         const std::vector<uint8_t>* masked) = 0;

  // Facts naming the matrix a step shows or defines (when its id does not
  // say it), and the one it comes from.
  static StepFacts symbols(std::string symbol, std::string source = "") {
    StepFacts f;
    f.symbol = std::move(symbol);
    f.source = std::move(source);
    return f;
  }
  static StepFacts reading(std::string source) { return symbols("", std::move(source)); }
  // The facts of the masked scores sn: what masked cells become, and the
  // window.
  virtual StepFacts mask_facts(const std::string& sn) const = 0;

  // The variant's scores of queries q against keys k, its terms and the
  // scores reported as steps.
  virtual Mat<T> scored(int64_t b, int64_t h, const Mat<T>& q, const Mat<T>& k) = 0;

  // The scores (before the masks), the weights and the masked cells of
  // (b, h), where the request keeps them.
  virtual void keep_scores(int64_t b, int64_t h, const Mat<T>& s) = 0;
  virtual void keep_weights(int64_t b, int64_t h, const Mat<T>& w) = 0;
  virtual void keep_flags(int64_t b, int64_t h, const std::vector<uint8_t>& flags) = 0;

  // Row i of (b, h) (n weights) has every key masked: fully_masked's
  // policy fills it, or raises its error.
  virtual void fully_masked(int64_t b, int64_t h, int64_t i, T* row, int64_t n) = 0;

  // The output of batch item b (and head h, of 4D inputs; -1 otherwise).
  virtual void store_output(int64_t b, int64_t h, const Mat<T>& out) = 0;
  // Progress: units are (batch, head) pairs, done in order.
  virtual void report_progress(int64_t b, int64_t h, int64_t heads) const = 0;
};

// Statistics of one softmax row, reported to observers.
template <class T>
struct RowStats {
  T max = 0;
  T sum = 0;
  bool fully_masked = false;
};

// exp(row - m) in place, copied to `exps` when given, then divided by its
// sum plus `extra` (the exponential of a sink's logit, or 0); returns that
// sum.
template <class T>
T exponentiate_and_normalize(T* row, int64_t n, T m, T extra, T* exps) {
  T sum = extra;
  for (int64_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - m);
    sum += row[j];
  }
  if (exps) {
    for (int64_t j = 0; j < n; ++j) exps[j] = row[j];
  }
  for (int64_t j = 0; j < n; ++j) row[j] /= sum;
  return sum;
}

// Softmax of one row in place, max-subtracted so that scores up to +-1e300
// neither overflow nor underflow to all zeros. A row whose maximum is -inf
// has every key masked and is left to the caller (fully_masked policy). A
// row holding +inf (scores that overflowed) gets the limit: equal weight on
// the +inf entries. When `exps` is given it receives exp(s - max).
template <class T>
RowStats<T> softmax_row(T* row, int64_t n, T* exps = nullptr) {
  RowStats<T> st;
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j) m = row[j] > m ? row[j] : m;
  st.max = m;
  if (m == -std::numeric_limits<T>::infinity()) {
    st.fully_masked = true;
    return st;
  }
  if (m == std::numeric_limits<T>::infinity()) {
    T count = 0;
    for (int64_t j = 0; j < n; ++j) count += row[j] == m ? T(1) : T(0);
    for (int64_t j = 0; j < n; ++j) row[j] = row[j] == m ? T(1) / count : T(0);
    st.sum = count;
    if (exps) {
      for (int64_t j = 0; j < n; ++j) exps[j] = row[j] * count;
    }
    return st;
  }
  st.sum = exponentiate_and_normalize(row, n, m, T(0), exps);
  return st;
}

// Softmax of one row with an attention sink: the sink's logit joins the
// normalisation without a value, so the row's weights sum to less than 1.
// A row with every key masked is left for the caller (which zeroes it:
// the sink takes all). `sink_share`, when given, receives the sink's part.
template <class T>
RowStats<T> softmax_row_sink(T* row, int64_t n, T sink, T* exps = nullptr,
                             T* sink_share = nullptr) {
  RowStats<T> st;
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j) m = row[j] > m ? row[j] : m;
  if (m == -std::numeric_limits<T>::infinity()) {
    st.max = m;
    st.fully_masked = true;
    if (sink_share) *sink_share = T(1);
    return st;
  }
  if (m == std::numeric_limits<T>::infinity()) {
    // Overflowed scores: the sink's finite logit counts for nothing.
    st = softmax_row(row, n, exps);
    if (sink_share) *sink_share = T(0);
    return st;
  }
  m = std::max(m, sink);
  st.max = m;
  const T e_sink = std::exp(sink - m);
  st.sum = exponentiate_and_normalize(row, n, m, e_sink, exps);
  if (sink_share) *sink_share = e_sink / st.sum;
  return st;
}

// Rotary position embedding of the rows of heads in place: row i of each
// sits at position offset + i, and feature pair p (p, p + dims/2 in the
// half layout, 2p, 2p + 1 interleaved) turns by (offset + i)·theta^(-2p/dims).
// Angles and their cosines and sines are computed in double whatever T,
// once per position for all the heads given (the sines and cosines cost
// more than the rotations).
template <class T>
void apply_rope(const std::vector<Mat<T>*>& heads, const Rope& r, int64_t offset) {
  const int64_t half = r.dims / 2;
  const std::vector<double>& freq = r.inv_freq;  // resolved with the problem
  int64_t rows = 0;
  for (const Mat<T>* x : heads) rows = std::max<int64_t>(rows, x->rows());
  std::vector<T> cos_row(static_cast<size_t>(half)), sin_row(cos_row.size());
  for (int64_t i = 0; i < rows; ++i) {
    const double t = static_cast<double>(offset + i);
    for (int64_t p = 0; p < half; ++p) {
      double sin_a, cos_a;  // glibc's sincos: one argument reduction for both
      ::sincos(t * freq[static_cast<size_t>(p)], &sin_a, &cos_a);
      // YaRN's and LongRoPE's attention factor scales both (1 otherwise).
      cos_row[static_cast<size_t>(p)] = static_cast<T>(cos_a * r.attention);
      sin_row[static_cast<size_t>(p)] = static_cast<T>(sin_a * r.attention);
    }
    for (Mat<T>* x : heads) {
      if (i >= x->rows()) continue;
      for (int64_t p = 0; p < half; ++p) {
        const T c = cos_row[static_cast<size_t>(p)], s = sin_row[static_cast<size_t>(p)];
        const int64_t ia = r.layout == RopeLayout::kHalf ? p : 2 * p;
        const int64_t ib = r.layout == RopeLayout::kHalf ? p + half : 2 * p + 1;
        const T a = (*x)(i, ia), b = (*x)(i, ib);
        (*x)(i, ia) = a * c - b * s;
        (*x)(i, ib) = b * c + a * s;
      }
    }
  }
}

template <class T>
void apply_rope(Mat<T>& x, const Rope& r, int64_t offset) {
  apply_rope<T>(std::vector<Mat<T>*>{&x}, r, offset);
}

// The Q/K norm of one head's rows in place: transformers' RMSNorm over
// the head's features, x / sqrt(mean(x²) + eps) · w (w all ones when not
// given).
template <class T>
void apply_qk_norm(Mat<T>& x, double eps, const std::optional<Eigen::VectorXd>& w) {
  const auto n = static_cast<double>(x.cols());
  for (int64_t i = 0; i < x.rows(); ++i) {
    double ms = 0;
    for (int64_t c = 0; c < x.cols(); ++c)
      ms += static_cast<double>(x(i, c)) * static_cast<double>(x(i, c));
    const double inv = 1.0 / std::sqrt(ms / n + eps);
    for (int64_t c = 0; c < x.cols(); ++c) {
      const double v = static_cast<double>(x(i, c)) * inv;
      x(i, c) = static_cast<T>(w ? v * (*w)[c] : v);
    }
  }
}

// Soft-capping of scores: c·tanh(s/c) (infinite scores go to ±c).
template <class T>
inline T softcap_score(T s, T cap) {
  return cap * std::tanh(s / cap);
}

// Fills a fully masked row according to the policy (error is raised by the
// caller, which knows the row's name).
template <class T>
void fill_fully_masked(T* row, int64_t n, FullyMasked policy) {
  T v = 0;
  if (policy == FullyMasked::kUniform) v = T(1) / static_cast<T>(n);
  if (policy == FullyMasked::kNan) v = std::numeric_limits<T>::quiet_NaN();
  for (int64_t j = 0; j < n; ++j) row[j] = v;
}

// L2-normalises each row as torch.nn.functional.normalize does: divide by
// max(||row||, 1e-12). The norm is computed without overflow for large rows.
template <class T>
void normalize_rows(Mat<T>& m) {
  for (int64_t i = 0; i < m.rows(); ++i) {
    const T norm = m.row(i).stableNorm();
    m.row(i) /= std::max(norm, T(1e-12));
  }
}

// Gives the kept [batch][heads][q][k] maps their reported shape (and the
// head mean with average_heads) and moves them into r.
void finish_maps(const Problem& p, const ComputeRequest& req, Values<double>* weights,
                 Values<double>* scores, Values<uint8_t>& masked, Result& r);

// The input error of fully_masked "error" for row i of batch b, head h.
[[noreturn]] void raise_fully_masked(const Problem& p, int64_t b, int64_t h, int64_t i);

// The fast kernels cover scaled_dot and dot with every scaling and mask,
// as long as no score can overflow (then the reference path, which handles
// infinite scores, is used) and the packed keys are not much larger than
// the keys.
bool fast_path_applies(const Problem& p, DType dtype);

// Nothing when a score of the prepared heads could overflow T (|q·k| <=
// ‖q‖‖k‖ is checked once RoPE and the projections are applied, unless
// `norms`, from the range check, already show it cannot): the caller
// computes such a problem on the reference path. `output_finite`, when
// given, is set to whether the output is known to be all finite already
// (the range check then need not read it).
template <class T>
std::optional<Result> compute_fast(const Problem& p, const ComputeRequest& req,
                                   const HeadNorms& norms, bool* output_finite = nullptr);

}  // namespace attn::detail
