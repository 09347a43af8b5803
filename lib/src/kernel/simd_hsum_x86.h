// Part of kernel/simd.h: hsum and hmax in registers with AVX2 or AVX-512,
// on top of the lanes128 and any_nan of simd_avx2.h or simd_avx512.h,
// which include this. hsum_impl and hmax_impl went through memory, a wide
// store read back a lane at a time, which waited on store forwarding (the
// online softmax takes one sum and one maximum per row and key tile: 1.3%
// of a long run with AVX-512). Each step halves the vector, lane i with
// lane i + w as in hsum_impl, so the sums are the same bits. The maximum's
// tree gives the same value as the scan whenever no lane is NaN; with one,
// the scan decides.

inline float hsum(Vec<float> v) {
  const __m128 x = lanes128(v, [](__m128 a, __m128 b) { return _mm_add_ps(a, b); });
  const __m128 y = _mm_add_ps(x, _mm_movehl_ps(x, x));  // lanes 0 + 2, 1 + 3
  return _mm_cvtss_f32(_mm_add_ss(y, _mm_movehdup_ps(y)));
}
inline double hsum(Vec<double> v) {
  const __m128d x = lanes128(v, [](__m128d a, __m128d b) { return _mm_add_pd(a, b); });
  return _mm_cvtsd_f64(_mm_add_sd(x, _mm_unpackhi_pd(x, x)));
}
inline float hmax(Vec<float> v) {
  if (any_nan(v)) return hmax_impl<float>(v);
  const __m128 x = lanes128(v, [](__m128 a, __m128 b) { return _mm_max_ps(a, b); });
  const __m128 y = _mm_max_ps(x, _mm_movehl_ps(x, x));
  return _mm_cvtss_f32(_mm_max_ss(y, _mm_movehdup_ps(y)));
}
inline double hmax(Vec<double> v) {
  if (any_nan(v)) return hmax_impl<double>(v);
  const __m128d x = lanes128(v, [](__m128d a, __m128d b) { return _mm_max_pd(a, b); });
  return _mm_cvtsd_f64(_mm_max_sd(x, _mm_unpackhi_pd(x, x)));
}
