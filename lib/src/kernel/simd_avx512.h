// Part of kernel/simd.h: the vector operations with AVX-512 F, DQ, BW and
// VL, in intrinsics on 64 bytes (16 floats, 8 doubles). The same
// operations as simd_avx2.h and simd_generic.h; the softmax's 2^y comes
// from a table here (Exp2Table), not from simd_exp2_poly.h.

constexpr Isa kIsa = Isa::kAvx512;
constexpr int kVectorBytes = 64;

#include "kernel/simd_base.h"

inline Vec<float> splat_impl(float x) { return _mm512_set1_ps(x); }
inline Vec<double> splat_impl(double x) { return _mm512_set1_pd(x); }

inline Vec<float> fma(Vec<float> a, Vec<float> b, Vec<float> c) { return _mm512_fmadd_ps(a, b, c); }
inline Vec<double> fma(Vec<double> a, Vec<double> b, Vec<double> c) {
  return _mm512_fmadd_pd(a, b, c);
}

// Overloads rather than templates: Vec<T> is not deducible.
// a > b ? a : b (with a NaN, b), which is what the max and min instructions
// compute; GCC writes the expression as a compare and a blend, two
// instructions in a row where the softmax's chains of maxima wait on each.
inline Vec<float> vmax(Vec<float> a, Vec<float> b) { return _mm512_max_ps(a, b); }
inline Vec<double> vmax(Vec<double> a, Vec<double> b) { return _mm512_max_pd(a, b); }
inline Vec<float> vmin(Vec<float> a, Vec<float> b) { return _mm512_min_ps(a, b); }
inline Vec<double> vmin(Vec<double> a, Vec<double> b) { return _mm512_min_pd(a, b); }

// Whether a < b in every lane (false where a lane is NaN): one compare and
// one mask test, for a branch taken per vector.
inline bool all_less(Vec<float> a, Vec<float> b) {
  return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ) == 0xFFFF;
}
inline bool all_less(Vec<double> a, Vec<double> b) {
  return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ) == 0xFF;
}

// The lanes of v folded into one 128-bit vector by op, as hsum_impl's
// first steps: lane i with lane i + W/2, then with i + W/4.
template <class Op>
inline __m128 lanes128(Vec<float> v, Op op) {
  const __m128 lo = op(_mm512_castps512_ps128(v), _mm512_extractf32x4_ps(v, 2));
  const __m128 hi = op(_mm512_extractf32x4_ps(v, 1), _mm512_extractf32x4_ps(v, 3));
  return op(lo, hi);
}
template <class Op>
inline __m128d lanes128(Vec<double> v, Op op) {
  const __m128d lo = op(_mm512_castpd512_pd128(v), _mm512_extractf64x2_pd(v, 2));
  const __m128d hi = op(_mm512_extractf64x2_pd(v, 1), _mm512_extractf64x2_pd(v, 3));
  return op(lo, hi);
}
inline bool any_nan(Vec<float> v) { return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0; }
inline bool any_nan(Vec<double> v) { return _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q) != 0; }

#include "kernel/simd_hsum_x86.h"

// p·2^n where x is not below lo (a NaN x included), 0 where it is: the
// generic form's shift, multiply and blend in one scalef under a mask,
// exact like them for a normal result. Taken from the mask, the lanes of
// x = -inf (NaN parts) give 0 as well.
inline Vec<float> scaled_unless_below(Vec<float> p, Vec<float> n, Vec<float> x, float lo) {
  const __mmask16 keep = _mm512_cmp_ps_mask(x, splat(lo), _CMP_NLT_UQ);
  return _mm512_maskz_scalef_ps(keep, p, n);
}
inline Vec<double> scaled_unless_below(Vec<double> p, Vec<double> n, Vec<double> x, double lo) {
  const __mmask8 keep = _mm512_cmp_pd_mask(x, splat(lo), _CMP_NLT_UQ);
  return _mm512_maskz_scalef_pd(keep, p, n);
}

// The softmax's 2^y (vexp_softmax_n in simd_math.h): y = n + j/2^b + r,
// where t = n + j/2^b is y rounded to a multiple of 2^-b (b = 4 in float,
// 3 in double) by the same magic-number addition, whose low bits then hold
// j, and |r| <= 2^-(b+1). 2^y = 2^n·T_j·2^r with T_j = 2^(j/2^b) picked by
// one vpermps (vpermpd) from a register, which uses only the index's low b
// bits, and 2^n applied by the scalef, which takes floor(t) = n itself. On
// that short range 2^r = 1 + r·q(r) with q of degree 2 in float (relative
// error 1.6e-9) and 6 in double (2.8e-18), fitted with mpmath
// (scripts/fit_exp2_table.py prints these), and T_j·2^r = T_j +
// (T_j·r)·q(r). A vector of scores then costs 6 instructions on the FMA
// ports in float (10 in double) instead of 8 (13) with simd_exp2_poly.h,
// where the permute and the scalef run beside the FMAs on a Zen 4: the
// loop of exponentials alone ran 17% faster in float, the whole run 0.7%
// faster in float and 1.1% in double. The price is a little accuracy: on
// top of y's rounding, up to 0.81 ulp in float and 0.91 in double (T_j's
// rounding and the final FMA's) where Exp2Poly's reach 0.66 and 0.75, over
// two million points of [-1, 0]; the bound of vexp_softmax_n holds. A
// result is normal wherever y >= -126 (-1022): there n >= -126 and, where
// n is -126 and j is 0, r >= 0, so T_j·2^r >= 1.
template <class T>
struct Exp2Table;
template <>
struct Exp2Table<float> {
  static constexpr float kT[16] = {1.0f,
                                   1.0442737340927124f,
                                   1.0905077457427979f,
                                   1.1387885808944702f,
                                   1.1892070770263672f,
                                   1.2418577671051025f,
                                   1.2968395948410034f,
                                   1.3542555570602417f,
                                   1.4142135381698608f,
                                   1.4768261909484863f,
                                   1.5422108173370361f,
                                   1.610490322113037f,
                                   1.6817928552627563f,
                                   1.7562521696090698f,
                                   1.8340080976486206f,
                                   1.9152065515518188f};
  static constexpr int kTerms = 3;  // q from its highest coefficient
  static constexpr float kQ[kTerms] = {0.055502135306596756f, 0.24023428559303284f,
                                       0.6931471824645996f};
  static constexpr float kMagic = 0x1.8p19f;  // 1.5·2^(23-4): a step of 1/16
};
template <>
struct Exp2Table<double> {
  static constexpr double kT[8] = {1.0,
                                   1.0905077326652577,
                                   1.189207115002721,
                                   1.2968395546510096,
                                   1.4142135623730951,
                                   1.5422108254079407,
                                   1.681792830507429,
                                   1.8340080864093424};
  static constexpr int kTerms = 7;
  static constexpr double kQ[kTerms] = {
      1.525184436193458e-05, 0.00015404521950558329, 0.0013333558238947222, 0.009618129085178456,
      0.055504108664802355,  0.24022650695911515,    0.6931471805599453};
  static constexpr double kMagic = 0x1.8p49;  // 1.5·2^(52-3): a step of 1/8
};

// T_j for the j in the low bits of `shifted` (see Exp2Table).
inline Vec<float> table_entry(Vec<float> table, Vec<float> shifted) {
  return _mm512_permutexvar_ps(_mm512_castps_si512(shifted), table);
}
inline Vec<double> table_entry(Vec<double> table, Vec<double> shifted) {
  return _mm512_permutexvar_pd(_mm512_castpd_si512(shifted), table);
}

template <class T>
using SoftmaxExp2 = Exp2Table<T>;

// 2^y from y rounded to n + j/2^b (t, and `shifted` with j in its low
// bits) and q(r): T_j·2^r = T_j + (T_j·r)·q(r), scaled by 2^n, 0 below the
// smallest normal result and for y = -inf. The table is loaded once.
template <class T>
struct Exp2Assemble {
  Exp2Assemble() { std::memcpy(&table, Exp2Table<T>::kT, sizeof table); }
  Vec<T> operator()(Vec<T> y, Vec<T> shifted, Vec<T> t, Vec<T> r, Vec<T> q) const {
    const Vec<T> tj = table_entry(table, shifted);
    return scaled_unless_below(fma(tj * r, q, tj), t, y, ExpLimits<T>::kMinExponent);
  }
  Vec<T> table;
};
