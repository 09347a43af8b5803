// Part of kernel/simd.h: the vector operations at the baseline flags, in
// GCC's vector extensions, for CPUs without AVX2 and FMA and for every CPU
// that is not x86-64. The same operations as simd_avx2.h and
// simd_avx512.h, the same code paths, just slower.

// 16 bytes: the SSE2 registers of every x86-64 (and NEON's). Wider generic
// vectors have no machine mode there; GCC kept them in memory, and the
// kernels ran five times slower.
constexpr Isa kIsa = Isa::kGeneric;
constexpr int kVectorBytes = 16;

#include "kernel/simd_base.h"

inline Vec<float> splat_impl(float x) { return Vec<float>{} + x; }
inline Vec<double> splat_impl(double x) { return Vec<double>{} + x; }

inline Vec<float> fma(Vec<float> a, Vec<float> b, Vec<float> c) { return a * b + c; }
inline Vec<double> fma(Vec<double> a, Vec<double> b, Vec<double> c) { return a * b + c; }

// Overloads rather than templates: Vec<T> is not deducible.
// a > b ? a : b (with a NaN, b), which is what the max and min instructions
// of simd_avx2.h and simd_avx512.h compute.
inline Vec<float> vmax(Vec<float> a, Vec<float> b) { return a > b ? a : b; }
inline Vec<double> vmax(Vec<double> a, Vec<double> b) { return a > b ? a : b; }
inline Vec<float> vmin(Vec<float> a, Vec<float> b) { return a < b ? a : b; }
inline Vec<double> vmin(Vec<double> a, Vec<double> b) { return a < b ? a : b; }

// Whether a < b in every lane (false where a lane is NaN).
template <class V>
inline bool all_less_impl(V a, V b) {
  const auto m = a < b;
  for (size_t i = 0; i < sizeof(V) / sizeof(a[0]); ++i) {
    if (!m[i]) return false;
  }
  return true;
}
inline bool all_less(Vec<float> a, Vec<float> b) { return all_less_impl(a, b); }
inline bool all_less(Vec<double> a, Vec<double> b) { return all_less_impl(a, b); }

inline float hmax(Vec<float> v) { return hmax_impl<float>(v); }
inline double hmax(Vec<double> v) { return hmax_impl<double>(v); }
inline float hsum(Vec<float> v) { return hsum_impl<float>(v); }
inline double hsum(Vec<double> v) { return hsum_impl<double>(v); }

#include "kernel/simd_exp2_poly.h"
