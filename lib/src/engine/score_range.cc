// Overflow guard. Scores past the floating-point range become inf inside the
// products, and inf - inf is NaN inside the softmax: the row then comes out
// uniform or NaN and looks like an answer. A bound on |S| from the norms of
// the inputs and parameters clears nearly every problem at the cost of one
// pass over them; only when the bound reaches the range are the actual
// scores computed (reference path) and checked, and the first non-finite
// one is reported as an input error.
#include "engine/score_range.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "attn/error.h"
#include "base/number_text.h"
#include "engine/norms.h"
#include "kernel/reductions.h"
#include "problem/variant_unit.h"

namespace attn::detail {

namespace {

// The largest f(begin, end) over [0, n) cut in chunks of at least `grain`,
// one chunk a thread.
template <class F>
double chunked_max(int64_t n, int64_t grain, int threads, F f) {
  const int64_t chunks = std::clamp<int64_t>(n / grain, 1, std::max(threads, 1));
  const std::vector<double> part = parallel_values(
      chunks, threads, [&](int64_t c) { return f(n * c / chunks, n * (c + 1) / chunks); });
  return *std::max_element(part.begin(), part.end());
}

constexpr int64_t kGrain = int64_t{1} << 18;  // elements worth a thread

// The largest finite |x[i]|, 0 when there is none: the kernels' vectorized
// maximum, and a second look skipping the non-finite values only when
// there are some (a bias of -inf cells).
double largest_abs_range(const double* x, int64_t n) {
  if (n == 0) return 0;
  const double big = std::numeric_limits<double>::max();
  const double all = kernel::largest_abs_finite(x, n);
  if (all <= big) return all;
  double best = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(x[i])) best = std::max(best, std::abs(x[i]));
  }
  return best;
}

double largest_abs(const double* x, int64_t n, int threads = 1) {
  return chunked_max(n, kGrain, threads,
                     [&](int64_t a, int64_t z) { return largest_abs_range(x + a, z - a); });
}

// The largest L2 norm of a row (last axis) of t.
double max_row_norm(const Tensor<double>& t, int threads) {
  if (t.rank() == 0 || t.size() == 0) return 0;
  const int64_t d = t.shape().back();
  if (d == 0) return 0;
  const int64_t rows = t.size() / d;
  return chunked_max(rows, std::max<int64_t>(1, kGrain / d), threads, [&](int64_t a, int64_t z) {
    return detail::max_row_norm(t.data() + a * d, z - a, d);
  });
}

double frobenius(const std::optional<MatrixR>& m) { return m ? m->norm() : 0.0; }
double norm2(const std::optional<Eigen::VectorXd>& v) { return v ? v->norm() : 0.0; }

// ‖x·W + b‖ <= ‖x‖·‖W‖_F + ‖b‖; no W means the identity.
double projected(double row_norm, const std::optional<MatrixR>& w,
                 const std::optional<Eigen::VectorXd>& b) {
  return (w ? row_norm * frobenius(w) : row_norm) + norm2(b);
}

// The largest magnitude any parameter holds, for the float32 check (the
// inputs' is taken with their row norms): the weights and biases, and the
// soft cap and sink logits, which the kernels also take in float32.
double largest_param(const Problem& p) {
  double m = std::abs(p.softcap);
  for (double s : p.sinks) m = std::max(m, std::abs(s));
  const Params& q = p.params;
  for (const auto* w : {&q.W_q, &q.W_k, &q.W_v, &q.W_o, &q.additive_W_q, &q.additive_W_k}) {
    if (*w) m = std::max(m, largest_abs((*w)->data(), (*w)->size()));
  }
  for (const auto* v : {&q.b_q, &q.b_k, &q.b_v, &q.b_o, &q.w_v, &q.w, &q.w_in, &q.w_mem,
                        &q.dot_scale, &q.q_norm, &q.k_norm}) {
    if (*v) m = std::max(m, largest_abs((*v)->data(), (*v)->size()));
  }
  return m;
}

std::string dtype_name(DType d) { return d == DType::kF32 ? "float32" : "float64"; }

// The projected heads' norms from the inputs' largest row norms.
HeadNorms head_norms(const Problem& p, double q_norm, double k_norm) {
  const Params& w = p.params;
  HeadNorms n{projected(q_norm, w.W_q, w.b_q), projected(k_norm, w.W_k, w.b_k)};
  if (p.qk_norm > 0) {
    // An RMS-normed row has norm at most √d (its weights scale that), and
    // a finite projection keeps it finite.
    const double root = std::sqrt(static_cast<double>(p.head_dim_q()));
    const auto cap = [&](const std::optional<Eigen::VectorXd>& g) {
      return root * (g ? g->lpNorm<Eigen::Infinity>() : 1.0);
    };
    if (std::isfinite(n.q)) n.q = std::min(n.q, cap(w.q_norm));
    if (std::isfinite(n.k)) n.k = std::min(n.k, cap(w.k_norm));
  }
  // RoPE rotates (norms kept); YaRN's and LongRoPE's factor scales.
  if (p.rope && p.rope->attention > 1) {
    n.q *= p.rope->attention;
    n.k *= p.rope->attention;
  }
  return n;
}

// An upper bound on |score| over every head, query and key of p from the
// projected heads' norms and the parameters (inf when the norms overflow).
double bound_from_norms(const Problem& p, const HeadNorms& heads, int threads) {
  double s = variant_unit(p.variant).score_bound(p, heads.q, heads.k);
  if (!p.masks.bias.empty()) {
    s += largest_abs(p.masks.bias.data(), p.masks.bias.size(), threads);
  }
  return s;
}

}  // namespace

HeadNorms check_score_range(const Problem& p, const ComputeRequest& request) {
  const int threads = request.threads > 0 ? request.threads : kernel::hardware_threads();
  const double limit = request.dtype == DType::kF32
                           ? static_cast<double>(std::numeric_limits<float>::max())
                           : std::numeric_limits<double>::max();
  const double q = max_row_norm(p.query_in, threads);
  const double k = max_row_norm(p.key_in, threads);
  if (request.dtype == DType::kF32) {
    // No |x| exceeds its row's norm: Q and K need a look of their own only
    // when a norm is past the range.
    const auto largest = [&](const Tensor<double>& t, double norm) {
      return norm <= limit ? norm : largest_abs(t.data(), t.size(), threads);
    };
    const double m = std::max({largest(p.query_in, q), largest(p.key_in, k), largest_param(p),
                               largest_abs(p.value_in.data(), p.value_in.size(), threads)});
    if (m > limit) {
      throw_input(p.source, "the value " + format_shortest(m) +
                                " is outside the float32 range; use --dtype f64");
    }
  }
  const HeadNorms heads = head_norms(p, q, k);
  const double bound = bound_from_norms(p, heads, threads);
  if (std::isfinite(bound) && bound < 0.5 * limit) return heads;

  // The bound is loose; look at the scores themselves.
  const int64_t cells = p.batch * p.heads * p.len_q * p.len_k;
  if (cells > (int64_t{1} << 26)) {
    throw_input(p.source, "the scores may exceed the " + dtype_name(request.dtype) +
                              " range (inputs this large need every score checked, and there "
                              "are too many); scale the inputs down");
  }
  ComputeRequest check;
  check.reference = true;
  check.scores = true;
  check.weights = true;
  check.dtype = request.dtype;
  check.threads = 1;
  check.check_range = false;
  const Result r = compute(p, check);
  bool bias_has_minus_inf = false;
  for (double x : p.masks.bias.values()) bias_has_minus_inf |= x == -INFINITY;
  const Tensor<double>& s = *r.scores;
  const int64_t lq = p.len_q, lk = p.len_k;
  for (int64_t i = 0; i < s.size(); ++i) {
    const double x = s[i];
    const bool masked = r.masked && (*r.masked)[i] != 0;
    const bool bad =
        std::isnan(x) || x == INFINITY || (x == -INFINITY && !masked && !bias_has_minus_inf);
    if (!bad) continue;
    const int64_t key = i % lk, query = (i / lk) % lq;
    const int64_t panel = i / (lq * lk);
    std::string where = "query " + std::to_string(query) + ", key " + std::to_string(key);
    if (p.batched) where += ", batch " + std::to_string(panel / p.heads);
    if (p.heads > 1) where += ", head " + std::to_string(panel % p.heads);
    throw_input(p.source, "the score of " + where + " is " + format_shortest(x) +
                              ": it overflows the " + dtype_name(request.dtype) +
                              " range; scale the inputs down");
  }
  return {};  // finite scores, but no bound
}

void check_output_range(const Problem& p, const Result& r) {
  const Tensor<double>& o = r.output;
  if (Eigen::Map<const Eigen::ArrayXd>(o.data(), o.size()).allFinite()) return;
  for (int64_t i = 0; i < o.size(); ++i) {
    const double x = o[i];
    if (std::isinf(x) || (std::isnan(x) && p.fully_masked != FullyMasked::kNan)) {
      throw_input(p.source, "output element " + std::to_string(i) + " (row-major) is " +
                                format_shortest(x) +
                                ": the values or the output projection "
                                "overflow the " +
                                dtype_name(r.dtype) +
                                " range; scale the "
                                "inputs down");
    }
  }
}

}  // namespace attn::detail
