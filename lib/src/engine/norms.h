// Bounds the overflow guards take before a run: the largest row norm of a
// matrix, and per-piece values computed on the threads. Shared by the range
// check of every path (score_range.cc) and the fast path's guard on its
// prepared heads (attention_fast.cc).
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "base/parallel.h"
#include "kernel/reductions.h"

namespace attn::detail {

// The largest L2 norm of the `rows` rows of `d` values at x (row-major):
// summed in double, in vectors (the caller's doubles by the kernels, in
// the CPU's widest vectors: Eigen's reduction in this plain x86-64 build
// took half a cycle a value; float copies by Eigen; a scalar sum is one
// chain of dependent additions, and a float's square cannot overflow in
// double), and with Eigen's stableNorm, which rescales as it goes, only
// where the double sum overflows.
template <class T>
double max_row_norm(const T* x, int64_t rows, int64_t d) {
  if (rows == 0 || d == 0) return 0;
  using Rows = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Map<const Rows> m(x, rows, d);
  double sq = 0;
  if constexpr (std::is_same_v<T, double>) {
    sq = kernel::max_row_square(x, rows, d);  // the inputs: in the CPU's own vectors
  } else {
    sq = m.template cast<double>().rowwise().squaredNorm().maxCoeff();
  }
  if (std::isfinite(sq)) return std::sqrt(sq);
  double best = 0;
  for (int64_t i = 0; i < rows; ++i) {
    best = std::max(best, static_cast<double>(m.row(i).stableNorm()));
  }
  return best;
}

// f(i) for i in [0, n), on up to `threads` threads. The passes before the
// kernels read every input once; on one thread they held back the
// two-thread speed-up. Callers take maxima of the values, so the result is
// the same for any thread count.
template <class F>
std::vector<double> parallel_values(int64_t n, int threads, F f) {
  std::vector<double> v(static_cast<size_t>(n), 0.0);
  kernel::parallel_for(n, threads, [&](int64_t i, int) { v[static_cast<size_t>(i)] = f(i); });
  return v;
}

}  // namespace attn::detail
