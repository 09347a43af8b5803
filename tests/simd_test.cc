// The softmax's vectorized exp, in every build of the kernels this CPU
// runs: within its error bound over the range it is used on (x <= 0), 0 for
// -inf and below the smallest normal result, exactly 1 at 0; and the tanh
// of soft-capping.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernel/instruction_set.h"
#include "kernel/kernels.h"

namespace attn::kernel {
namespace {

std::vector<Isa> runnable() {
  std::vector<Isa> isas;
  for (Isa isa : built_isas()) {
    if (cpu_supports(isa)) isas.push_back(isa);
  }
  return isas;
}

template <class T>
std::vector<T> vexp(Isa isa, const std::vector<T>& x) {
  std::vector<T> y(x.size());
  kernels_for(isa).of<T>().exp(x.data(), y.data(), static_cast<int64_t>(x.size()));
  return y;
}

// The largest error, in ulp of the correctly rounded value, of the kernels'
// tanh over uniform samples of [lo, hi] (normal results only).
template <class T>
double worst_tanh_ulp(Isa isa, double lo, double hi) {
  std::mt19937_64 g(1);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> x(160000 + 3);  // not a whole number of vectors: the tail too
  for (T& v : x) v = static_cast<T>(u(g));
  std::vector<T> y(x.size());
  kernels_for(isa).of<T>().tanh(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const T ref = static_cast<T>(std::tanh(static_cast<long double>(x[i])));
    if (!std::isnormal(ref)) continue;
    const T a = std::fabs(ref);
    const double ulp = std::nextafter(a, static_cast<T>(INFINITY)) - a;
    worst = std::max(worst, std::fabs(static_cast<double>(y[i] - ref)) / ulp);
  }
  return worst;
}

// The soft-capping's tanh: within 4 ulp of the correctly rounded value,
// near 0 too (where 1 - exp(-2|x|) would lose every digit), on both sides
// of 0.625 (below it a polynomial, above the exp formula, and vectors
// holding both), odd with the sign of zero kept, and ±1 far out and at
// ±inf.
TEST(Simd, TanhWithinFourUlp) {
  for (Isa isa : runnable()) {
    EXPECT_LE(worst_tanh_ulp<float>(isa, -20, 20), 4.0) << isa_name(isa);
    EXPECT_LE(worst_tanh_ulp<float>(isa, -1e-3, 1e-3), 4.0) << isa_name(isa);
    EXPECT_LE(worst_tanh_ulp<float>(isa, -0.7, 0.7), 4.0) << isa_name(isa);
    EXPECT_LE(worst_tanh_ulp<float>(isa, 0.6, 0.65), 4.0) << isa_name(isa);
    EXPECT_LE(worst_tanh_ulp<double>(isa, -40, 40), 4.0) << isa_name(isa);
    EXPECT_LE(worst_tanh_ulp<double>(isa, -1e-6, 1e-6), 4.0) << isa_name(isa);
    EXPECT_LE(worst_tanh_ulp<double>(isa, -0.7, 0.7), 4.0) << isa_name(isa);
    EXPECT_LE(worst_tanh_ulp<double>(isa, 0.6, 0.65), 4.0) << isa_name(isa);
    const std::vector<double> x = {0.0, -INFINITY, INFINITY, 400.0, -400.0, -0.0, 0.0, 1e-300};
    std::vector<double> y(x.size());
    kernels_for(isa).of<double>().tanh(x.data(), y.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(y, (std::vector<double>{0.0, -1.0, 1.0, 1.0, -1.0, 0.0, 0.0, 1e-300}))
        << isa_name(isa);
    EXPECT_TRUE(std::signbit(y[5])) << isa_name(isa);
    EXPECT_FALSE(std::signbit(y[6])) << isa_name(isa);
    const std::vector<float> xf = {-0.0f, 0.0f, 0.1f, -0.0f};
    std::vector<float> yf(xf.size());
    kernels_for(isa).of<float>().tanh(xf.data(), yf.data(), static_cast<int64_t>(xf.size()));
    EXPECT_TRUE(std::signbit(yf[0])) << isa_name(isa);
    EXPECT_FALSE(std::signbit(yf[1])) << isa_name(isa);
    EXPECT_TRUE(std::signbit(yf[3])) << isa_name(isa);
  }
}

// The bound of the softmax's exp (vexp_softmax_n in simd.h), which rounds
// y = x·log2(e) once: within 1.5 ulp plus a relative 1.25·|x|·u of exp(x)
// (u = 2^-24 in float, 2^-53 in double), at most 2u off in absolute terms
// (the weights are sums of these next to exp(0) = 1), and 0 only from
// just below the log of the smallest normal on: never a subnormal,
// whatever the steps that build 2^n do at the bottom of the exponent
// range.
template <class T>
void expect_exp_within_bounds(Isa isa, const std::vector<T>& x) {
  const double u = std::numeric_limits<T>::epsilon() / 2;
  const double log_min = std::log(static_cast<double>(std::numeric_limits<T>::min()));
  const std::vector<T> y = vexp<T>(isa, x);
  for (size_t i = 0; i < x.size(); ++i) {
    const long double exact = std::exp(static_cast<long double>(x[i]));
    if (y[i] == 0) {
      ASSERT_LT(static_cast<double>(x[i]), log_min * (1 - 4 * u))
          << isa_name(isa) << " x = " << x[i];
      continue;
    }
    ASSERT_GE(y[i], std::numeric_limits<T>::min()) << isa_name(isa) << " x = " << x[i];
    const T ref = static_cast<T>(exact);
    const double ulp = std::nextafter(ref, static_cast<T>(INFINITY)) - ref;
    const double err = std::fabs(static_cast<double>(y[i] - exact));
    const double bound = 1.5 * ulp + 1.25 * std::fabs(static_cast<double>(x[i])) * u * ref;
    ASSERT_LE(err, bound) << isa_name(isa) << " x = " << x[i];
    ASSERT_LE(err, 2 * u) << isa_name(isa) << " x = " << x[i];
  }
}

// Uniform samples of [log_min - 2, 0] and of [-1, 0], where the weights
// that matter sit; not a whole number of vectors, so the tail too.
template <class T>
std::vector<T> exp_samples() {
  const double log_min = std::log(static_cast<double>(std::numeric_limits<T>::min()));
  std::mt19937_64 g(2);
  std::uniform_real_distribution<double> wide(log_min - 2, 0.0), narrow(-1.0, 0.0);
  std::vector<T> x;
  for (int i = 0; i < 100000; ++i) x.push_back(static_cast<T>(wide(g)));
  for (int i = 0; i < 50003; ++i) x.push_back(static_cast<T>(narrow(g)));
  return x;
}

TEST(Simd, ExpWithinItsBound) {
  for (Isa isa : runnable()) {
    expect_exp_within_bounds<float>(isa, exp_samples<float>());
    expect_exp_within_bounds<double>(isa, exp_samples<double>());
  }
}

// Every number of a stretch around the log of the smallest normal.
template <class T>
std::vector<T> every_number(double lo, double hi) {
  std::vector<T> x;
  for (T v = static_cast<T>(lo); v < static_cast<T>(hi); v = std::nextafter(v, T(0))) {
    x.push_back(v);
    if (x.size() > 200000) break;
  }
  return x;
}

TEST(Simd, ExpNearTheSmallestNormal) {
  for (Isa isa : runnable()) {
    expect_exp_within_bounds<float>(isa, every_number<float>(-87.34, -87.33));
    expect_exp_within_bounds<double>(isa, every_number<double>(-708.3964185323, -708.3964185322));
  }
}

// Where y = x·log2(e) crosses from one table entry or power of 2 to the
// next: the AVX-512 kernels round y to sixteenths in float and eighths in
// double (Exp2Table in simd.h), the others to whole numbers, so x around
// every y = m/32 for m from -64·32 to 0, a few numbers either side.
template <class T>
std::vector<T> exp_seams() {
  std::vector<T> x;
  for (int m = -64 * 32; m <= 0; ++m) {
    T v = static_cast<T>(m / 32.0 / std::log2(std::exp(1.0)));
    for (int k = 0; k < 6; ++k) v = std::nextafter(v, T(-1));
    for (int k = 0; k < 12 && v <= 0; ++k, v = std::nextafter(v, T(1))) x.push_back(v);
  }
  return x;
}

TEST(Simd, ExpAtTheSeamsOfItsReduction) {
  for (Isa isa : runnable()) {
    expect_exp_within_bounds<float>(isa, exp_seams<float>());
    expect_exp_within_bounds<double>(isa, exp_seams<double>());
  }
}

TEST(Simd, ExpEdges) {
  for (Isa isa : runnable()) {
    EXPECT_EQ(vexp<double>(isa, {-INFINITY, -800.0, -1e300, -0.0, 0.0}),
              (std::vector<double>{0.0, 0.0, 0.0, 1.0, 1.0}))
        << isa_name(isa);  // no subnormal results
    EXPECT_EQ(vexp<float>(isa, {-INFINITY, -1e30f, -0.0f, 0.0f}),
              (std::vector<float>{0.0f, 0.0f, 1.0f, 1.0f}))
        << isa_name(isa);
  }
}

// The overflow guard's input bounds: every row width and length, tails
// included, against a scalar pass (the row sums to within their rounding,
// the largest |x| exactly), and a value that is not finite is reported as
// such wherever it sits.
TEST(Simd, InputBoundsMatchAScalarPass) {
  std::mt19937_64 g(7);
  std::normal_distribution<double> nd(0.0, 3.0);
  for (Isa isa : runnable()) {
    const Kernels& k = kernels_for(isa);
    for (int64_t d : {1, 3, 8, 16, 17, 64, 67}) {
      for (int64_t rows : {1, 2, 5}) {
        std::vector<double> x(static_cast<size_t>(rows * d));
        for (double& v : x) v = nd(g);
        double sq = 0, big = 0;
        for (int64_t i = 0; i < rows; ++i) {
          double s = 0;
          for (int64_t c = 0; c < d; ++c)
            s += x[static_cast<size_t>(i * d + c)] * x[static_cast<size_t>(i * d + c)];
          sq = std::max(sq, s);
        }
        for (double v : x) big = std::max(big, std::fabs(v));
        const int64_t n = rows * d;
        EXPECT_NEAR(k.max_row_square(x.data(), rows, d), sq, 1e-13 * sq)
            << isa_name(isa) << " d = " << d;
        EXPECT_EQ(k.largest_abs_finite(x.data(), n), big) << isa_name(isa) << " n = " << n;
        for (double bad : {INFINITY, -INFINITY, NAN}) {
          for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
            std::vector<double> y = x;
            y[static_cast<size_t>(at)] = bad;
            EXPECT_FALSE(std::isfinite(k.max_row_square(y.data(), rows, d)))
                << isa_name(isa) << " at " << at << " of " << n;
            EXPECT_TRUE(std::isnan(k.largest_abs_finite(y.data(), n)))
                << isa_name(isa) << " at " << at << " of " << n;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace attn::kernel
