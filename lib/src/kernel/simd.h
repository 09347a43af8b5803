// A thin SIMD layer for the attention kernels: one vector of float or
// double with load, store, broadcast, fused multiply-add, max and a
// vectorized exp. With AVX-512 (64 bytes) or AVX2+FMA (32 bytes) the
// operations are intrinsics; the generic build uses GCC's vector
// extensions at the baseline flags, the same code paths, just slower.
//
// Not a normal header: attention_kernel_<isa>.cc includes it inside its own
// namespace, after kernel/isa_region.h (which includes everything this
// file uses) and with ATTN_SIMD_AVX512, ATTN_SIMD_AVX2 or neither defined.
// The choice cannot come from the compiler's __AVX2__ and __AVX512F__: g++
// does not define them under #pragma GCC target, clang under its attribute
// pragma neither.
#ifndef ATTN_KERNEL_ISA_REGION
#error "kernel/simd.h is included by kernel/attention_kernel_<isa>.cc only"
#endif

#if defined(ATTN_SIMD_AVX512)
constexpr Isa kIsa = Isa::kAvx512;
constexpr int kVectorBytes = 64;
#elif defined(ATTN_SIMD_AVX2)
constexpr Isa kIsa = Isa::kAvx2;
constexpr int kVectorBytes = 32;
#else
// 16 bytes: the SSE2 registers of every x86-64 (and NEON's). Wider generic
// vectors have no machine mode there; GCC kept them in memory, and the
// kernels ran five times slower.
constexpr Isa kIsa = Isa::kGeneric;
constexpr int kVectorBytes = 16;
#endif

template <class T>
struct Simd;

template <>
struct Simd<float> {
  static constexpr int W = kVectorBytes / 4;
  typedef float V __attribute__((vector_size(kVectorBytes)));
  typedef uint32_t I __attribute__((vector_size(kVectorBytes)));
};

template <>
struct Simd<double> {
  static constexpr int W = kVectorBytes / 8;
  typedef double V __attribute__((vector_size(kVectorBytes)));
  typedef uint64_t I __attribute__((vector_size(kVectorBytes)));
};

template <class T>
using Vec = typename Simd<T>::V;

template <class T>
inline Vec<T> load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Keeps v in a register where it is used: the micro-kernels load each
// vector of K or V once and use it in several FMAs. Left to itself, GCC
// under -mtune=znver3 (what GCC 12's -march=native makes of a Zen 4)
// folded the load into every FMA instead, four times the loads of the
// value product, which on a Zen 4 (one 512-bit load a cycle) then waited
// on them: the whole run 10% slower in f32, 24% with the weights kept.
// (Taken and returned by value: an asm operand bound to an array element
// made GCC keep the whole array on the stack.)
template <class V>
inline V in_register(V v) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__("" : "+v"(v));
#endif
  return v;
}

inline void store(float* p, Vec<float> v) { std::memcpy(p, &v, sizeof v); }
inline void store(double* p, Vec<double> v) { std::memcpy(p, &v, sizeof v); }

inline Vec<float> splat_impl(float x) {
#if defined(ATTN_SIMD_AVX512)
  return _mm512_set1_ps(x);
#elif defined(ATTN_SIMD_AVX2)
  return _mm256_set1_ps(x);
#else
  return Vec<float>{} + x;
#endif
}
inline Vec<double> splat_impl(double x) {
#if defined(ATTN_SIMD_AVX512)
  return _mm512_set1_pd(x);
#elif defined(ATTN_SIMD_AVX2)
  return _mm256_set1_pd(x);
#else
  return Vec<double>{} + x;
#endif
}
template <class T>
inline Vec<T> splat(T x) {
  return splat_impl(x);
}

inline Vec<float> fma(Vec<float> a, Vec<float> b, Vec<float> c) {
#if defined(ATTN_SIMD_AVX512)
  return _mm512_fmadd_ps(a, b, c);
#elif defined(ATTN_SIMD_AVX2)
  return _mm256_fmadd_ps(a, b, c);
#else
  return a * b + c;
#endif
}

inline Vec<double> fma(Vec<double> a, Vec<double> b, Vec<double> c) {
#if defined(ATTN_SIMD_AVX512)
  return _mm512_fmadd_pd(a, b, c);
#elif defined(ATTN_SIMD_AVX2)
  return _mm256_fmadd_pd(a, b, c);
#else
  return a * b + c;
#endif
}

// Overloads rather than templates: Vec<T> is not deducible.
// a > b ? a : b (with a NaN, b), which is what the max and min instructions
// compute; GCC writes the expression as a compare and a blend, two
// instructions in a row where the softmax's chains of maxima wait on each.
#if defined(ATTN_SIMD_AVX512)
inline Vec<float> vmax(Vec<float> a, Vec<float> b) { return _mm512_max_ps(a, b); }
inline Vec<double> vmax(Vec<double> a, Vec<double> b) { return _mm512_max_pd(a, b); }
inline Vec<float> vmin(Vec<float> a, Vec<float> b) { return _mm512_min_ps(a, b); }
inline Vec<double> vmin(Vec<double> a, Vec<double> b) { return _mm512_min_pd(a, b); }
#elif defined(ATTN_SIMD_AVX2)
inline Vec<float> vmax(Vec<float> a, Vec<float> b) { return _mm256_max_ps(a, b); }
inline Vec<double> vmax(Vec<double> a, Vec<double> b) { return _mm256_max_pd(a, b); }
inline Vec<float> vmin(Vec<float> a, Vec<float> b) { return _mm256_min_ps(a, b); }
inline Vec<double> vmin(Vec<double> a, Vec<double> b) { return _mm256_min_pd(a, b); }
#else
inline Vec<float> vmax(Vec<float> a, Vec<float> b) { return a > b ? a : b; }
inline Vec<double> vmax(Vec<double> a, Vec<double> b) { return a > b ? a : b; }
inline Vec<float> vmin(Vec<float> a, Vec<float> b) { return a < b ? a : b; }
inline Vec<double> vmin(Vec<double> a, Vec<double> b) { return a < b ? a : b; }
#endif

// Whether a < b in every lane (false where a lane is NaN): one compare and
// one mask test, for a branch taken per vector.
#if defined(ATTN_SIMD_AVX512)
inline bool all_less(Vec<float> a, Vec<float> b) {
  return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ) == 0xFFFF;
}
inline bool all_less(Vec<double> a, Vec<double> b) {
  return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ) == 0xFF;
}
#elif defined(ATTN_SIMD_AVX2)
inline bool all_less(Vec<float> a, Vec<float> b) {
  return _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ)) == 0xFF;
}
inline bool all_less(Vec<double> a, Vec<double> b) {
  return _mm256_movemask_pd(_mm256_cmp_pd(a, b, _CMP_LT_OQ)) == 0xF;
}
#else
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
#endif

template <class T, class V>
inline T hmax_impl(V v) {
  T m = v[0];
  for (int i = 1; i < Simd<T>::W; ++i) m = v[i] > m ? v[i] : m;
  return m;
}

// Pairwise, in a fixed order, so results do not depend on the caller.
template <class T, class V>
inline T hsum_impl(V v) {
  T s[Simd<T>::W];
  std::memcpy(s, &v, sizeof v);
  for (int w = Simd<T>::W / 2; w > 0; w /= 2) {
    for (int i = 0; i < w; ++i) s[i] += s[i + w];
  }
  return s[0];
}

// 0 in each lane where v is finite, NaN where it is inf or NaN: a sum of
// these marks is NaN exactly when one of the values was not finite, which
// no_mark_set tests once at the end.
template <class V>
inline V finite_marks(V v) {
  return v - v;
}
inline bool no_mark_set(Vec<float> sum) { return all_less(sum, splat(1.0f)); }
inline bool no_mark_set(Vec<double> sum) { return all_less(sum, splat(1.0)); }

// With AVX2 or AVX-512 the same reductions in registers: the loops above
// went through memory, a wide store read back a lane at a time, which
// waited on store forwarding (the online softmax takes one sum and one
// maximum per row and key tile: 1.3% of a long run with AVX-512). Each
// step halves the vector, lane i with lane i + w as in hsum_impl, so the
// sums are the same bits. The maximum's tree gives the same value as the
// scan whenever no lane is NaN; with one, the scan decides.
#if defined(ATTN_SIMD_AVX512) || defined(ATTN_SIMD_AVX2)
// The lanes of v folded into one 128-bit vector by op, as hsum_impl's
// first steps: lane i with lane i + W/2, then (AVX-512) with i + W/4.
template <class Op>
inline __m128 lanes128(Vec<float> v, Op op) {
#if defined(ATTN_SIMD_AVX512)
  const __m128 lo = op(_mm512_castps512_ps128(v), _mm512_extractf32x4_ps(v, 2));
  const __m128 hi = op(_mm512_extractf32x4_ps(v, 1), _mm512_extractf32x4_ps(v, 3));
  return op(lo, hi);
#else
  return op(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
#endif
}
template <class Op>
inline __m128d lanes128(Vec<double> v, Op op) {
#if defined(ATTN_SIMD_AVX512)
  const __m128d lo = op(_mm512_castpd512_pd128(v), _mm512_extractf64x2_pd(v, 2));
  const __m128d hi = op(_mm512_extractf64x2_pd(v, 1), _mm512_extractf64x2_pd(v, 3));
  return op(lo, hi);
#else
  return op(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
#endif
}
inline float hsum(Vec<float> v) {
  const __m128 x = lanes128(v, [](__m128 a, __m128 b) { return _mm_add_ps(a, b); });
  const __m128 y = _mm_add_ps(x, _mm_movehl_ps(x, x));  // lanes 0 + 2, 1 + 3
  return _mm_cvtss_f32(_mm_add_ss(y, _mm_movehdup_ps(y)));
}
inline double hsum(Vec<double> v) {
  const __m128d x = lanes128(v, [](__m128d a, __m128d b) { return _mm_add_pd(a, b); });
  return _mm_cvtsd_f64(_mm_add_sd(x, _mm_unpackhi_pd(x, x)));
}
#if defined(ATTN_SIMD_AVX512)
inline bool any_nan(Vec<float> v) { return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0; }
inline bool any_nan(Vec<double> v) { return _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q) != 0; }
#else
inline bool any_nan(Vec<float> v) { return _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)); }
inline bool any_nan(Vec<double> v) { return _mm256_movemask_pd(_mm256_cmp_pd(v, v, _CMP_UNORD_Q)); }
#endif
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
#else
inline float hmax(Vec<float> v) { return hmax_impl<float>(v); }
inline double hmax(Vec<double> v) { return hmax_impl<double>(v); }
inline float hsum(Vec<float> v) { return hsum_impl<float>(v); }
inline double hsum(Vec<double> v) { return hsum_impl<double>(v); }
#endif

// The parts of exp(x) vexpm1 uses: exp(x) = 2^n·(1 + r·p1), scale = 2^n.
template <class T>
struct ExpParts {
  Vec<T> r, p1, scale;
};

// The log of the smallest normal number, where exp_parts clamps, its
// exponent, below which the softmax's exponentials are 0, and log2(e).
template <class T>
struct ExpLimits;
template <>
struct ExpLimits<float> {
  static constexpr float kLogMin = -87.33654f;  // log(FLT_MIN)
  static constexpr float kMinExponent = -126;
  static constexpr float kLog2e = 1.44269504088896341f;
};
template <>
struct ExpLimits<double> {
  static constexpr double kLogMin = -708.3964185322641;  // log(DBL_MIN)
  static constexpr double kMinExponent = -1022;
  static constexpr double kLog2e = 1.4426950408889634;
};

// Steps over N vectors in lockstep: each step of a function is done for
// every vector before the next, so the chains of dependent instructions of
// N vectors run side by side (see vtanh_n).
#define ATTN_EACH _Pragma("GCC unroll 8") for (int i = 0; i < N; ++i)

// 2^n from `shifted`, a float whose low mantissa bits hold n plus the
// exponent bias (see exp_parts): those bits moved into the exponent field.
template <class T>
inline Vec<T> pow2_of(Vec<T> shifted) {
  typename Simd<T>::I bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  bits <<= std::numeric_limits<T>::digits - 1;  // 23 or 52 mantissa bits
  Vec<T> p;
  std::memcpy(&p, &bits, sizeof p);
  return p;
}

// x is first raised to the log of the smallest normal, as vexpm1 needs
// for its -1 below that range (its x <= 0 needs no upper bound).
template <int N>
inline void exp_parts(const Vec<float> (&x)[N], ExpParts<float> (&e)[N]) {
  const Vec<float> lo = splat(ExpLimits<float>::kLogMin);
  Vec<float> t[N], shifted[N], q[N];
  ATTN_EACH t[i] = vmax(x[i], lo);
  // n = round(t / ln2) and the bits of 2^n in one step: t·log2(e) plus
  // 1.5·2^23 + 127 has no fraction bits left, so the addition rounds
  // t·log2(e) to the nearest integer (ties to even) and the low mantissa
  // bits of the sum hold n + 127, the biased exponent of 2^n (1 to 255 for
  // the clamped t, so the shift below leaves the sign bit clear). No round
  // or convert instruction: AVX2 has no double-to-int64 conversion, and GCC
  // split that one into scalar instructions.
  const Vec<float> magic = splat(0x1.8p23f + 127);
  ATTN_EACH shifted[i] = fma(t[i], splat(1.44269504088896341f), magic);
  // t = n·ln2 + r, |r| <= ln2/2, with ln2 split in two for accuracy.
  ATTN_EACH e[i].r = fma(shifted[i] - magic, splat(-0.693359375f), t[i]);
  ATTN_EACH e[i].r = fma(shifted[i] - magic, splat(2.12194440e-4f), e[i].r);
  // exp(r) = 1 + r·(1 + r·q(r)), q of degree 4 fitted to (e^r - 1 - r)/r²
  // on |r| <= 0.35 (Chebyshev, relative error 1e-8, under 0.1 ulp; it
  // replaced a Taylor polynomial of degree 7), q in Horner's order. The
  // softmax's exponentials are independent of each other, so the
  // out-of-order core overlaps their chains and what limits is the number
  // of instructions on the FMA ports: Horner's 4 against Estrin's 5 (with
  // r²) measured +0.6% in f32 and +0.5% in f64 (n = 8192, one thread).
  ATTN_EACH q[i] = fma(e[i].r, splat(0.0013926926767453551f), splat(0.008363774046301842f));
  ATTN_EACH q[i] = fma(q[i], e[i].r, splat(0.04166654869914055f));
  ATTN_EACH q[i] = fma(q[i], e[i].r, splat(0.16666573286056519f));
  ATTN_EACH q[i] = fma(q[i], e[i].r, splat(0.5f));
  ATTN_EACH e[i].p1 = fma(q[i], e[i].r, splat(1.0f));
  ATTN_EACH e[i].scale = pow2_of<float>(shifted[i]);
}

template <int N>
inline void exp_parts(const Vec<double> (&x)[N], ExpParts<double> (&e)[N]) {
  const Vec<double> lo = splat(ExpLimits<double>::kLogMin);
  Vec<double> t[N], shifted[N], q[N];
  ATTN_EACH t[i] = vmax(x[i], lo);
  // As for float, with 1.5·2^52 + 1023 (n + 1023 from 1 to 2047).
  const Vec<double> magic = splat(0x1.8p52 + 1023);
  ATTN_EACH shifted[i] = fma(t[i], splat(1.4426950408889634), magic);
  ATTN_EACH e[i].r = fma(shifted[i] - magic, splat(-6.93145751953125e-1), t[i]);
  ATTN_EACH e[i].r = fma(shifted[i] - magic, splat(-1.42860682030941723212e-6), e[i].r);
  // As for float, q of degree 9 (relative error 2e-17, under 0.1 ulp; it
  // replaced a Taylor polynomial of degree 13), in Horner's order: 9
  // instructions against Estrin's 11.
  ATTN_EACH q[i] = fma(e[i].r, splat(2.510134692835034e-08), splat(2.7621338669142925e-07));
  ATTN_EACH q[i] = fma(q[i], e[i].r, splat(2.75572664186123e-06));
  ATTN_EACH q[i] = fma(q[i], e[i].r, splat(2.4801518641395993e-05));
  ATTN_EACH q[i] = fma(q[i], e[i].r, splat(0.00019841269864380513));
  ATTN_EACH q[i] = fma(q[i], e[i].r, splat(0.0013888888918939168));
  ATTN_EACH q[i] = fma(q[i], e[i].r, splat(0.008333333333329793));
  ATTN_EACH q[i] = fma(q[i], e[i].r, splat(0.04166666666662064));
  ATTN_EACH q[i] = fma(q[i], e[i].r, splat(0.16666666666666669));
  ATTN_EACH q[i] = fma(q[i], e[i].r, splat(0.5000000000000001));
  ATTN_EACH e[i].p1 = fma(q[i], e[i].r, splat(1.0));
  ATTN_EACH e[i].scale = pow2_of<double>(shifted[i]);
}

// exp(x) - 1 for x <= 0 (or -inf: -1), without the cancellation of
// exp(x) - 1 near 0: 2^n·r·p1 + (2^n - 1), which is r·p1 exactly when
// n = 0. Below the smallest normal exp(x) the result is -1 to the last bit.
template <class T, int N>
inline void vexpm1_n(Vec<T> (&x)[N]) {
  ExpParts<T> e[N];
  exp_parts(x, e);
  ATTN_EACH x[i] = fma(e[i].scale, e[i].r * e[i].p1, e[i].scale - splat(T(1)));
}

#if defined(ATTN_SIMD_AVX512)
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
#endif

// The softmax's exponentials: exp(x) for x <= 0 (scores minus the row
// maximum) or -inf, as 2^y with y = x·log2(e) rounded once. n = round(y)
// and r = y - n are then exact subtractions on the add ports. The FMA
// ports are what the row's exponentials (about 7% of a long run) wait on,
// and the usual reduction, x - n·ln2 with ln2 in two parts, spends three
// instructions there: this way a vector of scores costs 8 FMA-port
// instructions instead of 10 (with AVX-512), and the loop of
// exponentials ran 9% faster on Zen 4. The price is the rounding of y
// (and of log2(e)): a relative error of up to 1.25·|x|·2^-24 (2^-53 in
// double) on top of about 1.5 ulp, which stays within 2^-23 (2^-52) in
// absolute terms since |x|·e^x <= 1/e, and the weights are these terms
// over a sum of at least exp(0) = 1 (simd_test.cc checks both bounds).
// Results below the smallest normal are 0, never subnormal (slow on many
// CPUs, and of no weight next to the row's largest term, exp(0) = 1). The
// kernel passes four vectors, done in lockstep: one vector's steps are a
// chain of some 40 cycles. With AVX-512, 2^r comes from a table and a
// shorter polynomial (Exp2Table below); elsewhere from Exp2Poly. (With
// AVX2, a table of 2^(j/8) picked by a permute, with a polynomial two
// instructions shorter, measured 1% slower in f32: the permute and the
// integer steps that build 2^n there take the same ports.)
// 2^r on |r| <= 1/2 = 1 + r·q(r) with q(r) = ln2 + r·Q(r), Q(r) =
// ln2²·q'(r·ln2) and q' the q of exp_parts: the same fit, scaled
// (scripts/fit_exp2.py prints Q and ln2). kQ is q from its highest
// coefficient down, ln2 last.
template <class T>
struct Exp2Poly;
template <>
struct Exp2Poly<float> {
  static constexpr int kTerms = 6;
  static constexpr float kQ[kTerms] = {0.0001544571714475751f, 0.0013382263714447618f,
                                       0.009618101641535759f,  0.05550379678606987f,
                                       0.24022650718688965f,   0.6931471824645996f};
  static constexpr float kMagic = 0x1.8p23f + 127;  // see exp_parts
};
template <>
struct Exp2Poly<double> {
  static constexpr int kTerms = 11;
  static constexpr double kQ[kTerms] = {
      4.454275733148866e-10,  7.0713011514345125e-09, 1.0178066505977071e-07,
      1.3215450204669348e-06, 1.5252733821825886e-05, 0.00015403530426708997,
      0.001333355814642278,   0.009618129107617853,   0.05550410866482159,
      0.24022650695910075,    0.6931471805599453};
  static constexpr double kMagic = 0x1.8p52 + 1023;
};

#if defined(ATTN_SIMD_AVX512)
// With AVX-512, y = n + j/2^b + r: t = n + j/2^b is y rounded to a multiple
// of 2^-b (b = 4 in float, 3 in double) by the same magic-number addition,
// whose low bits then hold j, and |r| <= 2^-(b+1). 2^y = 2^n·T_j·2^r with
// T_j = 2^(j/2^b) picked by one vpermps (vpermpd) from a register, which
// uses only the index's low b bits, and 2^n applied by the scalef, which
// takes floor(t) = n itself. On that short range 2^r = 1 + r·q(r) with q
// of degree 2 in float (relative error 1.6e-9) and 6 in double (2.8e-18),
// fitted with mpmath (scripts/fit_exp2_table.py prints these), and
// T_j·2^r = T_j + (T_j·r)·q(r). A vector of scores then costs 6
// instructions on the FMA ports in float (10 in double) instead of 8 (13),
// where the permute and the scalef run beside the FMAs on a Zen 4: the
// loop of exponentials alone ran 17% faster in float, the whole run 0.7%
// faster in float and 1.1% in double. The price is a little accuracy: on
// top of y's rounding, up to 0.81 ulp in float and 0.91 in double (T_j's
// rounding and the final FMA's) where Exp2Poly's reach 0.66 and 0.75, over
// two million points of [-1, 0]; the bound above holds. A result is
// normal wherever y >= -126 (-1022): there n >= -126 and, where n is -126
// and j is 0, r >= 0, so T_j·2^r >= 1.
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
#else
template <class T>
using SoftmaxExp2 = Exp2Poly<T>;
#endif

template <class T, int N>
inline void vexp_softmax_n(Vec<T> (&x)[N]) {
  using P = SoftmaxExp2<T>;
  using L = ExpLimits<T>;
  const Vec<T> magic = splat(P::kMagic);
  Vec<T> y[N], shifted[N], t[N], r[N], q[N];
  ATTN_EACH y[i] = x[i] * splat(L::kLog2e);
  // t: y rounded to a whole n (n + bias in the low bits, as in exp_parts)
  // or, with the table, to n + j/2^b (j in the low bits).
  ATTN_EACH shifted[i] = y[i] + magic;
  ATTN_EACH t[i] = shifted[i] - magic;
  ATTN_EACH r[i] = y[i] - t[i];
  ATTN_EACH q[i] = fma(r[i], splat(P::kQ[0]), splat(P::kQ[1]));
  _Pragma("GCC unroll 16") for (int k = 2; k < P::kTerms; ++k) {
    ATTN_EACH q[i] = fma(q[i], r[i], splat(P::kQ[k]));
  }
  // From y = -126 (-1022 in double) up, n >= -126 with r >= 0 where n is
  // -126 (and j is 0): a normal result. Below, and for y = -inf, 0.
#if defined(ATTN_SIMD_AVX512)
  Vec<T> table;
  std::memcpy(&table, P::kT, sizeof table);
  ATTN_EACH {
    const Vec<T> tj = table_entry(table, shifted[i]);  // T_j·2^r = T_j + (T_j·r)·q(r)
    x[i] = scaled_unless_below(fma(tj * r[i], q[i], tj), t[i], y[i], L::kMinExponent);
  }
#else
  ATTN_EACH x[i] = y[i] < splat(L::kMinExponent)
                       ? splat(T(0))
                       : fma(q[i], r[i], splat(T(1))) * pow2_of<T>(shifted[i]);
#endif
}

// tanh(u) = u·(1 + z·P(z)), z = u², for |u| < 0.625 (z < 0.390625): P
// fitted to (tanh(u) - u) / u³ on that range (scripts/fit_small_tanh.py), of
// degree 4 for float (relative error 4e-8, 0.85 ulp in all with the
// rounding of the steps) and 10 for double (1e-16, 1 ulp), in Horner's
// order from the highest coefficient.
template <class T>
struct SmallTanh;
template <>
struct SmallTanh<float> {
  static constexpr int kTerms = 5;
  static constexpr float kP[kTerms] = {-0.006096714165908197f, 0.020997178999074752f,
                                       -0.05385090957851358f, 0.13332769736976327f,
                                       -0.33333328944134255f};
};
template <>
struct SmallTanh<double> {
  static constexpr int kTerms = 11;
  static constexpr double kP[kTerms] = {
      -1.724487449484433e-05, 7.959955735264808e-05, -0.00023077616269519857, 0.0005874372860094381,
      -0.001455309297534642,  0.0035920589774734554, -0.008863229830925709,   0.021869488260559115,
      -0.05396825396139557,   0.13333333333326658,   -0.3333333333333332};
};

// x·(1 + z·P(z)) = cap·tanh(x / cap) where z = (x / cap)² < 0.390625: the
// soft cap of scores well inside the cap, the usual case (Gemma 2 caps
// its attention logits at 50), in about half the instructions of the
// general formula below. x times a factor in (0.87, 1] keeps the sign of
// zero.
template <class T, int N>
inline void small_softcap_n(Vec<T> (&x)[N], const Vec<T> (&z)[N]) {
  Vec<T> p[N];
  ATTN_EACH p[i] = splat(SmallTanh<T>::kP[0]);
  for (int k = 1; k < SmallTanh<T>::kTerms; ++k) {
    ATTN_EACH p[i] = fma(p[i], z[i], splat(SmallTanh<T>::kP[k]));
  }
  ATTN_EACH x[i] = x[i] * fma(z[i], p[i], splat(T(1)));
}

// The scores' soft cap, cap·tanh(x / cap), for N vectors; 2/cap is
// `two_inv`. Vectors whose every |x| is under 0.625·cap take the
// polynomial above; the others the general formula, each vector on its
// own, so the value of a score depends on the scores of its own vector
// only, never on how a row is cut into groups of N (the ranged and
// full-tile paths start their groups at different keys).
// tanh(y/2) = sign(y)·(-m / (2 + m)), m = exp(-|y|) - 1, with
// y = x·(2/cap): a few ulp relative, also for |y| near 0 where
// 1 - exp(-|y|) would cancel; ±1 for |y| large and infinite. The sign and
// |y| are taken with bit operations and the cap multiplied into the
// numerator. The kernel passes four vectors, done in lockstep (each step
// for every vector before the next): one vector's steps are a single chain
// of about 75 cycles, the division alone 10. Measured, n = 4096, causal,
// f32, one thread: soft-capping cost 18% over plain causal one vector at a
// time with max, compare and blend for |x| and the sign, 11% this way.
template <class T, int N>
inline void vsoftcap_general_n(Vec<T> (&x)[N], T cap, T two_inv) {
  using I = typename Simd<T>::I;
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const I sign_bit = I{} + (U(1) << (8 * sizeof(T) - 1));
  Vec<T> m[N];
  I sign[N];
  ATTN_EACH {
    const Vec<T> y = x[i] * splat(two_inv);
    I b;
    std::memcpy(&b, &y, sizeof b);
    sign[i] = b & sign_bit;
    b |= sign_bit;  // -|y|
    std::memcpy(&m[i], &b, sizeof b);
  }
  vexpm1_n<T, N>(m);
  ATTN_EACH {
    const Vec<T> t = (m[i] * splat(-cap)) / (splat(T(2)) + m[i]);
    I b;
    std::memcpy(&b, &t, sizeof b);
    b = (b & ~sign_bit) | sign[i];  // t is +0 or -0 (from m = 0) or more
    std::memcpy(&x[i], &b, sizeof b);
  }
}

template <class T, int N>
inline void vsoftcap_n(Vec<T> (&x)[N], T cap, T two_inv) {
  const Vec<T> inv = splat(two_inv * T(0.5));  // 1/cap, rounded once: 2/cap halved exactly
  const Vec<T> limit = splat(T(0.390625));     // 0.625²
  Vec<T> z[N];
  bool small[N], all = true, none = true;
  ATTN_EACH {
    const Vec<T> u = x[i] * inv;
    z[i] = u * u;
    small[i] = all_less(z[i], limit);
    all = all && small[i];
    none = none && !small[i];
  }
  if (all) {
    small_softcap_n<T, N>(x, z);
    return;
  }
  if (none) {
    vsoftcap_general_n<T, N>(x, cap, two_inv);
    return;
  }
  // Mixed: the general formula on all N in lockstep, then the small
  // vectors from their own polynomial.
  Vec<T> in[N];
  ATTN_EACH in[i] = x[i];
  vsoftcap_general_n<T, N>(x, cap, two_inv);
  ATTN_EACH {
    if (!small[i]) continue;
    Vec<T> one[1] = {in[i]};
    const Vec<T> zi[1] = {z[i]};
    small_softcap_n<T, 1>(one, zi);
    x[i] = one[0];
  }
}

// tanh(x): the soft cap with cap 1.
template <class T>
inline Vec<T> vtanh_impl(Vec<T> x) {
  Vec<T> v[1] = {x};
  vsoftcap_n<T, 1>(v, T(1), T(2));
  return v[0];
}

// Overloads rather than templates, as for vmax.
template <class T>
inline Vec<T> vexp_softmax_impl(Vec<T> x) {
  Vec<T> v[1] = {x};
  vexp_softmax_n<T, 1>(v);
  return v[0];
}
inline Vec<float> vexp_softmax(Vec<float> x) { return vexp_softmax_impl<float>(x); }
inline Vec<double> vexp_softmax(Vec<double> x) { return vexp_softmax_impl<double>(x); }
inline Vec<float> vtanh(Vec<float> x) { return vtanh_impl<float>(x); }
inline Vec<double> vtanh(Vec<double> x) { return vtanh_impl<double>(x); }
