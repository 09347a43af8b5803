// Part of kernel/simd.h: how the softmax's exponentials (vexp_softmax_n in
// simd_math.h) get 2^y from y's parts with AVX2 and at the baseline:
// 2^n from the bits of the rounding and 2^r from a polynomial.
// simd_avx2.h and simd_generic.h include it; simd_avx512.h has a table.
// (With AVX2, a table of 2^(j/8) picked by a permute, with a polynomial
// two instructions shorter, measured 1% slower in f32: the permute and the
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

template <class T>
using SoftmaxExp2 = Exp2Poly<T>;

// 2^y from y rounded to a whole n (`shifted`, whose low bits hold
// n + bias) and q(r): 2^n·(1 + r·q(r)), 0 below the smallest normal result
// and for y = -inf.
template <class T>
struct Exp2Assemble {
  Vec<T> operator()(Vec<T> y, Vec<T> shifted, Vec<T>, Vec<T> r, Vec<T> q) const {
    return y < splat(ExpLimits<T>::kMinExponent) ? splat(T(0))
                                                 : fma(q, r, splat(T(1))) * pow2_of<T>(shifted);
  }
};
