// The reductions of the overflow guard (engine/score_range.cc,
// engine/norms.h through kernel/reductions.h) and of the kernels' check of
// their output, in the vectors of one instruction set: whether values are
// all finite, the largest sum of squares of a row, the largest |x|.
//
// Not a normal header: attention_kernel_impl.h includes it, inside the
// namespace of attention_kernel_<isa>.cc, after kernel/simd.h, once per
// instruction set (the rules in kernel/isa_region.h). Everything here has
// internal linkage; the guard reaches max_row_square and
// largest_abs_finite through the instruction set's table kKernels.
#ifndef ATTN_KERNEL_ISA_REGION
#error "kernel/reductions_impl.h is included by kernel/attention_kernel_impl.h only"
#endif

namespace {

// Whether x[0..n) are all finite, in vectors (finite_marks): the scalar
// test of each value was 17% of Block::stream's own time, paid once per
// output row.
template <class T>
bool all_finite(const T* x, int64_t n) {
  Vec<T> z = splat<T>(0);
  int64_t j = 0;
  for (; j + Simd<T>::W <= n; j += Simd<T>::W) z += finite_marks(load(x + j));
  bool ok = no_mark_set(z);
  for (; j < n; ++j) ok &= std::fabs(x[j]) <= std::numeric_limits<T>::max();
  return ok;
}

// The largest sum of squares of a row of x ([rows][d], row-major), in
// double; the first sum that is not finite (inf or NaN) where there is
// one. Each row in two accumulators (the rows are independent, so the
// core overlaps them). Eigen's reduction in the engine's plain x86-64
// build took half a cycle a value: with its largest |x| the range check
// was 3% of a 512-token run.
double max_row_square(const double* x, int64_t rows, int64_t d) {
  constexpr int W = Simd<double>::W;
  const auto row_sum = [&](const double* r) {
    Vec<double> a = splat(0.0), b = splat(0.0);
    int64_t c = 0;
    for (; c + 2 * W <= d; c += 2 * W) {
      const Vec<double> u = load(r + c), w = load(r + c + W);
      a = fma(u, u, a);
      b = fma(w, w, b);
    }
    for (; c + W <= d; c += W) {
      const Vec<double> u = load(r + c);
      a = fma(u, u, a);
    }
    double sum = hsum(a + b);
    for (; c < d; ++c) sum += r[c] * r[c];
    return sum;
  };
  double best = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const double sum = row_sum(x + i * d);
    if (!(sum <= std::numeric_limits<double>::max())) return sum;
    best = std::max(best, sum);
  }
  return best;
}

// The largest |x[i]| for i < n, or NaN where some x[i] is not finite.
double largest_abs_finite(const double* x, int64_t n) {
  constexpr int W = Simd<double>::W;
  const Vec<double> zero = splat(0.0);
  Vec<double> m0 = zero, m1 = zero, z = zero;
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const Vec<double> u = load(x + i), w = load(x + i + W);
    m0 = vmax(m0, vmax(u, zero - u));
    m1 = vmax(m1, vmax(w, zero - w));
    z += finite_marks(u) + finite_marks(w);
  }
  if (!no_mark_set(z) || !all_finite(x + i, n - i)) return std::numeric_limits<double>::quiet_NaN();
  double best = hmax(vmax(m0, m1));
  for (; i < n; ++i) best = std::max(best, std::fabs(x[i]));
  return best;
}

}  // namespace
