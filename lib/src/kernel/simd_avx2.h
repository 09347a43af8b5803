// Part of kernel/simd.h: the vector operations with AVX2 and FMA, in
// intrinsics on 32 bytes (8 floats, 4 doubles). The same operations as
// simd_avx512.h and simd_generic.h.

constexpr Isa kIsa = Isa::kAvx2;
constexpr int kVectorBytes = 32;

#include "kernel/simd_base.h"

inline Vec<float> splat_impl(float x) { return _mm256_set1_ps(x); }
inline Vec<double> splat_impl(double x) { return _mm256_set1_pd(x); }

inline Vec<float> fma(Vec<float> a, Vec<float> b, Vec<float> c) { return _mm256_fmadd_ps(a, b, c); }
inline Vec<double> fma(Vec<double> a, Vec<double> b, Vec<double> c) {
  return _mm256_fmadd_pd(a, b, c);
}

// Overloads rather than templates: Vec<T> is not deducible.
// a > b ? a : b (with a NaN, b), which is what the max and min instructions
// compute; GCC writes the expression as a compare and a blend, two
// instructions in a row where the softmax's chains of maxima wait on each.
inline Vec<float> vmax(Vec<float> a, Vec<float> b) { return _mm256_max_ps(a, b); }
inline Vec<double> vmax(Vec<double> a, Vec<double> b) { return _mm256_max_pd(a, b); }
inline Vec<float> vmin(Vec<float> a, Vec<float> b) { return _mm256_min_ps(a, b); }
inline Vec<double> vmin(Vec<double> a, Vec<double> b) { return _mm256_min_pd(a, b); }

// Whether a < b in every lane (false where a lane is NaN): one compare and
// one mask test, for a branch taken per vector.
inline bool all_less(Vec<float> a, Vec<float> b) {
  return _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ)) == 0xFF;
}
inline bool all_less(Vec<double> a, Vec<double> b) {
  return _mm256_movemask_pd(_mm256_cmp_pd(a, b, _CMP_LT_OQ)) == 0xF;
}

// The lanes of v folded into one 128-bit vector by op, as hsum_impl's
// first step: lane i with lane i + W/2.
template <class Op>
inline __m128 lanes128(Vec<float> v, Op op) {
  return op(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
}
template <class Op>
inline __m128d lanes128(Vec<double> v, Op op) {
  return op(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
}
inline bool any_nan(Vec<float> v) { return _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)); }
inline bool any_nan(Vec<double> v) { return _mm256_movemask_pd(_mm256_cmp_pd(v, v, _CMP_UNORD_Q)); }

#include "kernel/simd_hsum_x86.h"

#include "kernel/simd_exp2_poly.h"
