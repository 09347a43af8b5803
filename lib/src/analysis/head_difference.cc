// The per-head difference of two stacks of a model's weights: where two
// runs (two sentences, two models of one shape, a model and its quantized
// copy) attend differently, one number per layer and head.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/analysis.h"
#include "attn/compare.h"
#include "attn/error.h"

namespace attn {

HeadDifferences compare_heads(const Tensor<double>& a, const Tensor<double>& b,
                              const std::vector<int64_t>& rows_a,
                              const std::vector<int64_t>& rows_b) {
  if (a.rank() != 5 || b.rank() != 5 || a.dim(0) != b.dim(0) || a.dim(1) != b.dim(1) ||
      a.dim(2) != b.dim(2)) {
    throw_internal("compare_heads: stacks " + shape_string(a.shape()) + " and " +
                   shape_string(b.shape()));
  }
  const int64_t L = a.dim(0), B = a.dim(1), H = a.dim(2);
  const int64_t qa = a.dim(3), ka = a.dim(4), qb = b.dim(3), kb = b.dim(4);
  std::vector<int64_t> ta = rows_a, tb = rows_b;
  if (ta.empty() && tb.empty()) {
    if (qa != qb || ka != kb || qa != ka) {
      throw_internal("compare_heads: panels " + shape_string(a.shape()) + " and " +
                     shape_string(b.shape()) + " without an alignment");
    }
    for (int64_t t = 0; t < qa; ++t) {
      ta.push_back(t);
      tb.push_back(t);
    }
  }
  if (ta.size() != tb.size()) throw_internal("compare_heads: alignments of different lengths");
  const auto n = static_cast<int64_t>(ta.size());
  HeadDifferences out;
  out.layers = L;
  out.heads = H;
  std::vector<double> ra(static_cast<size_t>(n)), rb(static_cast<size_t>(n));
  for (int64_t l = 0; l < L; ++l) {
    for (int64_t h = 0; h < H; ++h) {
      double max_abs = n > 0 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
      double js = 0;
      int64_t rows = 0;
      for (int64_t bi = 0; bi < B; ++bi) {
        const double* pa = a.data() + ((l * B + bi) * H + h) * qa * ka;
        const double* pb = b.data() + ((l * B + bi) * H + h) * qb * kb;
        for (int64_t r = 0; r < n; ++r) {
          for (int64_t c = 0; c < n; ++c) {
            ra[static_cast<size_t>(c)] =
                pa[ta[static_cast<size_t>(r)] * ka + ta[static_cast<size_t>(c)]];
            rb[static_cast<size_t>(c)] =
                pb[tb[static_cast<size_t>(r)] * kb + tb[static_cast<size_t>(c)]];
            // NaN on one side only counts as the largest difference, and stays.
            const double d =
                std::fabs(cell_difference(ra[static_cast<size_t>(c)], rb[static_cast<size_t>(c)]));
            if (std::isnan(d) || d > max_abs) max_abs = d;
          }
          if (!is_distribution(ra.data(), n) || !is_distribution(rb.data(), n)) {
            ++out.rows_skipped;
            continue;
          }
          js += js_divergence(ra.data(), rb.data(), n);
          ++rows;
          ++out.rows_compared;
        }
      }
      out.max_abs.push_back(max_abs);
      out.js.push_back(rows ? js / static_cast<double>(rows)
                            : std::numeric_limits<double>::quiet_NaN());
    }
  }
  return out;
}

}  // namespace attn
