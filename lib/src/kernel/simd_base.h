// Part of kernel/simd.h: what the three instruction sets' files share, at
// the width kVectorBytes each sets before including this. The vector types
// and their memory moves are the same for all; so are the scalar
// reductions the wide ones must match bit for bit, and the bit steps and
// limits of the exponentials.

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

// x in every lane: each instruction set's file defines splat_impl.
inline Vec<float> splat_impl(float x);
inline Vec<double> splat_impl(double x);
template <class T>
inline Vec<T> splat(T x) {
  return splat_impl(x);
}

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
