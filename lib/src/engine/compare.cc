#include "attn/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/error.h"

namespace attn {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Whether |difference| x beats the largest so far: NaN beats every number,
// and the first of equals stays.
bool beats(double x, double best) {
  if (std::isnan(best)) return false;
  return std::isnan(x) || x > best;
}

double row_sum(const double* p, int64_t n) {
  double s = 0;
  for (int64_t j = 0; j < n; ++j) s += p[j];
  return s;
}

// The statistics of one [rows][cols] matrix of A and B; `masked` (may be
// null) flags the cells masked on both sides.
MatrixComparison compare_one(const double* a, const double* b, double* diff, int64_t rows,
                             int64_t cols, const uint8_t* masked) {
  MatrixComparison m;
  double sum_abs = 0, kl_sum = 0, h_a = 0, h_b = 0;
  bool first = true;
  for (int64_t i = 0; i < rows; ++i) {
    const double* ar = a + i * cols;
    const double* br = b + i * cols;
    for (int64_t j = 0; j < cols; ++j) {
      if (masked && masked[i * cols + j]) {
        diff[i * cols + j] = 0;
        ++m.cells_masked;
        continue;
      }
      const double d = cell_difference(ar[j], br[j]);
      diff[i * cols + j] = d;
      const double ad = std::fabs(d);
      sum_abs += ad;
      if (first || beats(ad, m.max_abs_diff)) {
        first = false;
        m.max_abs_diff = ad;
        m.max_row = i;
        m.max_col = j;
        m.a_at_max = ar[j];
        m.b_at_max = br[j];
      }
    }
    if (!is_distribution(ar, cols) || !is_distribution(br, cols)) {
      ++m.rows_skipped;
      continue;
    }
    ++m.rows_compared;
    const double kl = kl_divergence(ar, br, cols);
    if (std::isinf(kl)) ++m.rows_kl_infinite;
    kl_sum += kl;
    if (m.kl_max_row < 0 || kl > m.kl_max) {
      m.kl_max = kl;
      m.kl_max_row = i;
    }
    h_a += entropy(ar, cols);
    h_b += entropy(br, cols);
  }
  const int64_t shown = rows * cols - m.cells_masked;
  m.mean_abs_diff = shown > 0 ? sum_abs / static_cast<double>(shown) : 0.0;
  if (m.rows_compared == 0) {
    m.kl_mean = m.kl_max = m.entropy_a = m.entropy_b = kNaN;
  } else {
    const double n = static_cast<double>(m.rows_compared);
    m.kl_mean = kl_sum / n;
    m.entropy_a = h_a / n;
    m.entropy_b = h_b / n;
  }
  return m;
}

}  // namespace

double cell_difference(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (a == b) return 0;  // also the same infinity, whose difference would be NaN
  return b - a;
}

bool is_distribution(const double* row, int64_t n) {
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (!std::isfinite(row[j]) || row[j] < 0) return false;
    sum += row[j];
  }
  return sum > 0 && sum <= kMaxRowSum;
}

double kl_divergence(const double* p, const double* q, int64_t n) {
  // log(p_j/q_j) with p_j = a_j/sum_a and q_j = b_j/sum_b, as differences of
  // logarithms: the quotients of tiny or huge numbers would underflow or
  // overflow where their logarithms do not.
  const double sp = row_sum(p, n), sq = row_sum(q, n);
  const double shift = std::log(sq) - std::log(sp);
  double kl = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (p[j] == 0) continue;  // 0·log 0 = 0
    if (q[j] == 0) return kInf;
    kl += p[j] / sp * (std::log(p[j]) - std::log(q[j]) + shift);
  }
  // KL is never negative; rounding can leave -1e-17 for rows that agree.
  return std::max(0.0, kl);
}

double js_divergence(const double* p, const double* q, int64_t n) {
  // JS = ½ KL(p‖m) + ½ KL(q‖m), m = (p + q)/2, each side divided by its
  // sum first; finite, at most ln 2.
  const double sp = row_sum(p, n), sq = row_sum(q, n);
  double js = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double pj = p[j] / sp, qj = q[j] / sq, m = 0.5 * (pj + qj);
    if (pj > 0) js += 0.5 * pj * std::log(pj / m);
    if (qj > 0) js += 0.5 * qj * std::log(qj / m);
  }
  return std::max(0.0, js);
}

double entropy(const double* p, int64_t n) {
  const double sp = row_sum(p, n), log_sp = std::log(sp);
  double h = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (p[j] > 0) h -= p[j] / sp * (std::log(p[j]) - log_sp);
  }
  return std::max(0.0, h);
}

Comparison compare_matrices(const Tensor<double>& a, const Tensor<double>& b,
                            const std::string& name_a, const std::string& name_b,
                            const uint8_t* masked_both) {
  if (a.shape() != b.shape()) {
    throw_input(name_a + " and " + name_b, "shapes differ: " + shape_string(a.shape()) + " in " +
                                               name_a + ", " + shape_string(b.shape()) + " in " +
                                               name_b);
  }
  if (a.rank() > 4) {
    throw_input(name_a, "array of rank " + std::to_string(a.rank()) +
                            "; attn diff compares arrays of rank 1 to 4");
  }
  for (const auto& [t, name] :
       {std::pair<const Tensor<double>*, const std::string*>{&a, &name_a}, {&b, &name_b}}) {
    if (t->size() == 0) {
      throw_input(
          *name, "nothing to compare: the array is empty (shape " + shape_string(t->shape()) + ")");
    }
  }
  Comparison c;
  c.shape = a.shape();
  const Shape& s = c.shape;
  const size_t n = s.size();
  c.cols = n >= 1 ? s[n - 1] : 1;
  c.rows = n >= 2 ? s[n - 2] : 1;
  c.heads = n >= 3 ? s[n - 3] : 1;
  c.batch = n >= 4 ? s[0] : 1;
  c.diff = Tensor<double>(s);
  const int64_t cells = c.rows * c.cols;
  double sum_abs = 0;
  for (int64_t k = 0; k < c.batch * c.heads; ++k) {
    MatrixComparison m =
        compare_one(a.data() + k * cells, b.data() + k * cells, c.diff.data() + k * cells, c.rows,
                    c.cols, masked_both ? masked_both + k * cells : nullptr);
    m.batch = k / c.heads;
    m.head = k % c.heads;
    sum_abs += m.mean_abs_diff * static_cast<double>(cells - m.cells_masked);
    c.cells_masked += m.cells_masked;
    c.rows_compared += m.rows_compared;
    c.rows_skipped += m.rows_skipped;
    if (k > 0 && beats(m.max_abs_diff, c.matrices[c.max_matrix].max_abs_diff)) {
      c.max_matrix = static_cast<size_t>(k);
    }
    c.matrices.push_back(m);
  }
  const int64_t shown = a.size() - c.cells_masked;
  c.mean_abs_diff = shown > 0 ? sum_abs / static_cast<double>(shown) : 0.0;
  return c;
}

}  // namespace attn
