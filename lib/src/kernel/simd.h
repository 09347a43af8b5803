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
  typedef int32_t I __attribute__((vector_size(kVectorBytes)));
};

template <>
struct Simd<double> {
  static constexpr int W = kVectorBytes / 8;
  typedef double V __attribute__((vector_size(kVectorBytes)));
  typedef int64_t I __attribute__((vector_size(kVectorBytes)));
};

template <class T>
using Vec = typename Simd<T>::V;

template <class T>
inline Vec<T> load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof v);
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
inline Vec<float> vmax(Vec<float> a, Vec<float> b) { return a > b ? a : b; }
inline Vec<double> vmax(Vec<double> a, Vec<double> b) { return a > b ? a : b; }
inline Vec<float> vmin(Vec<float> a, Vec<float> b) { return a < b ? a : b; }
inline Vec<double> vmin(Vec<double> a, Vec<double> b) { return a < b ? a : b; }

template <class T, class V>
inline T hmax_impl(V v) {
  T m = v[0];
  for (int i = 1; i < Simd<T>::W; ++i) m = v[i] > m ? v[i] : m;
  return m;
}
inline float hmax(Vec<float> v) { return hmax_impl<float>(v); }
inline double hmax(Vec<double> v) { return hmax_impl<double>(v); }

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
inline float hsum(Vec<float> v) { return hsum_impl<float>(v); }
inline double hsum(Vec<double> v) { return hsum_impl<double>(v); }

// exp(x) for a vector, to about 1 ulp. Arguments below the smallest normal
// result give 0 (exp(-inf) = 0; no subnormal results, which are slow on
// many CPUs and have no weight next to the row's largest term, exp(0) = 1).
// Callers pass x <= 0 (scores minus the row maximum) or -inf.
inline Vec<float> vexp(Vec<float> x) {
  const Vec<float> lo = splat(-87.33654f);  // log(FLT_MIN)
  const Vec<float> hi = splat(88.72283f);
  const Vec<float> underflow = x < lo ? splat(0.0f) + 1 : splat(0.0f);
  const Vec<float> t = vmin(vmax(x, lo), hi);
  // t = n·ln2 + r, |r| <= ln2/2, with ln2 split in two for accuracy.
  Vec<float> n = t * 1.44269504088896341f;
#if defined(ATTN_SIMD_AVX512)
  // The masked form: the plain one reads an undefined register, which
  // GCC 12 reports as uninitialized.
  n = _mm512_mask_roundscale_ps(n, 0xFFFF, n, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#elif defined(ATTN_SIMD_AVX2)
  n = _mm256_round_ps(n, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
  // Rounded to nearest (even) as the round instructions do: adding 1.5·2^23
  // leaves no fraction bits, |n| <= 128 stays exact. std::nearbyint per lane
  // is a library call that saves and restores the floating-point state.
  n = (n + 0x1.8p23f) - 0x1.8p23f;
#endif
  Vec<float> r = fma(n, splat(-0.693359375f), t);
  r = fma(n, splat(2.12194440e-4f), r);
  // exp(r): Taylor to degree 7 (error < 0.1 ulp on |r| <= 0.347).
  Vec<float> p = splat(1.0f / 5040);
  p = fma(p, r, splat(1.0f / 720));
  p = fma(p, r, splat(1.0f / 120));
  p = fma(p, r, splat(1.0f / 24));
  p = fma(p, r, splat(1.0f / 6));
  p = fma(p, r, splat(0.5f));
  p = fma(p, r, splat(1.0f));
  p = fma(p, r, splat(1.0f));
  // Multiply by 2^n through the exponent bits.
  Simd<float>::I ni = __builtin_convertvector(n, Simd<float>::I);
  Simd<float>::I bits = (ni + 127) << 23;
  Vec<float> scale;
  std::memcpy(&scale, &bits, sizeof scale);
  Vec<float> e = p * scale;
  return underflow != 0 ? splat(0.0f) : e;
}

inline Vec<double> vexp(Vec<double> x) {
  const Vec<double> lo = splat(-708.3964185322641);  // log(DBL_MIN)
  const Vec<double> hi = splat(709.782712893384);
  const Vec<double> underflow = x < lo ? splat(0.0) + 1 : splat(0.0);
  const Vec<double> t = vmin(vmax(x, lo), hi);
  Vec<double> n = t * 1.4426950408889634;
#if defined(ATTN_SIMD_AVX512)
  n = _mm512_mask_roundscale_pd(n, 0xFF, n, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#elif defined(ATTN_SIMD_AVX2)
  n = _mm256_round_pd(n, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
  n = (n + 0x1.8p52) - 0x1.8p52;  // as for float, with 1.5·2^52
#endif
  Vec<double> r = fma(n, splat(-6.93145751953125e-1), t);
  r = fma(n, splat(-1.42860682030941723212e-6), r);
  // exp(r): Taylor to degree 13 (error < 0.01 ulp on |r| <= 0.347).
  Vec<double> p = splat(1.0 / 6227020800.0);
  p = fma(p, r, splat(1.0 / 479001600.0));
  p = fma(p, r, splat(1.0 / 39916800.0));
  p = fma(p, r, splat(1.0 / 3628800.0));
  p = fma(p, r, splat(1.0 / 362880.0));
  p = fma(p, r, splat(1.0 / 40320.0));
  p = fma(p, r, splat(1.0 / 5040.0));
  p = fma(p, r, splat(1.0 / 720.0));
  p = fma(p, r, splat(1.0 / 120.0));
  p = fma(p, r, splat(1.0 / 24.0));
  p = fma(p, r, splat(1.0 / 6.0));
  p = fma(p, r, splat(0.5));
  p = fma(p, r, splat(1.0));
  p = fma(p, r, splat(1.0));
  Simd<double>::I ni = __builtin_convertvector(n, Simd<double>::I);
  Simd<double>::I bits = (ni + 1023) << 52;
  Vec<double> scale;
  std::memcpy(&scale, &bits, sizeof scale);
  Vec<double> e = p * scale;
  return underflow != 0 ? splat(0.0) : e;
}
