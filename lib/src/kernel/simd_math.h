// Part of kernel/simd.h: the kernels' exponentials and tanh, and the
// finiteness test, written once on the operations that simd_avx512.h,
// simd_avx2.h or simd_generic.h define for their instruction set.

// 0 in each lane where v is finite, NaN where it is inf or NaN: a sum of
// these marks is NaN exactly when one of the values was not finite, which
// no_mark_set tests once at the end.
template <class V>
inline V finite_marks(V v) {
  return v - v;
}
inline bool no_mark_set(Vec<float> sum) { return all_less(sum, splat(1.0f)); }
inline bool no_mark_set(Vec<double> sum) { return all_less(sum, splat(1.0)); }

// The parts of exp(x) vexpm1 uses: exp(x) = 2^n·(1 + r·p1), scale = 2^n.
template <class T>
struct ExpParts {
  Vec<T> r, p1, scale;
};

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
// chain of some 40 cycles. 2^y is put together from its parts by the
// instruction set's SoftmaxExp2 and Exp2Assemble: with AVX-512 from a
// table and a shorter polynomial (Exp2Table in simd_avx512.h), elsewhere
// from Exp2Poly (simd_exp2_poly.h).
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
  const Exp2Assemble<T> assemble;
  ATTN_EACH x[i] = assemble(y[i], shifted[i], t[i], r[i], q[i]);
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
