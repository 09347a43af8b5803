// The kernels' vectorized exp, in every build of the kernels this CPU runs:
// within 1 ulp of the correctly rounded value over the range softmax uses
// (x <= 0), 0 for -inf and below the smallest normal result, exactly 1 at 0;
// and the tanh of soft-capping.
#include <gtest/gtest.h>

#include <cmath>
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

enum class Fn { kExp, kTanh };

// The largest error, in ulp of the correctly rounded value, of the kernels'
// exp or tanh over uniform samples of [lo, hi] (normal results only).
template <class T>
double worst_ulp(Isa isa, Fn fn, double lo, double hi) {
  std::mt19937_64 g(1);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> x(160000 + 3);  // not a whole number of vectors: the tail too
  for (T& v : x) v = static_cast<T>(u(g));
  std::vector<T> y(x.size());
  const TypedKernels<T>& k = kernels_for(isa).of<T>();
  (fn == Fn::kExp ? k.exp : k.tanh)(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const long double xi = x[i];
    const T ref = static_cast<T>(fn == Fn::kExp ? std::exp(xi) : std::tanh(xi));
    if (!std::isnormal(ref)) continue;
    const T a = std::fabs(ref);
    const double ulp = std::nextafter(a, static_cast<T>(INFINITY)) - a;
    worst = std::max(worst, std::fabs(static_cast<double>(y[i] - ref)) / ulp);
  }
  return worst;
}

TEST(Simd, ExpFloatWithinOneUlp) {
  for (Isa isa : runnable()) {
    EXPECT_LE(worst_ulp<float>(isa, Fn::kExp, -87, 0), 1.0) << isa_name(isa);
    EXPECT_LE(worst_ulp<float>(isa, Fn::kExp, -1, 1), 1.0) << isa_name(isa);
  }
}

TEST(Simd, ExpDoubleWithinOneUlp) {
  for (Isa isa : runnable()) {
    EXPECT_LE(worst_ulp<double>(isa, Fn::kExp, -708, 0), 1.0) << isa_name(isa);
    EXPECT_LE(worst_ulp<double>(isa, Fn::kExp, -1, 1), 1.0) << isa_name(isa);
  }
}

// The soft-capping's tanh: within 4 ulp of the correctly rounded value,
// near 0 too (where 1 - exp(-2|x|) would lose every digit), on both sides
// of 0.625 (below it a polynomial, above the exp formula, and vectors
// holding both), odd with the sign of zero kept, and ±1 far out and at
// ±inf.
TEST(Simd, TanhWithinFourUlp) {
  for (Isa isa : runnable()) {
    EXPECT_LE(worst_ulp<float>(isa, Fn::kTanh, -20, 20), 4.0) << isa_name(isa);
    EXPECT_LE(worst_ulp<float>(isa, Fn::kTanh, -1e-3, 1e-3), 4.0) << isa_name(isa);
    EXPECT_LE(worst_ulp<float>(isa, Fn::kTanh, -0.7, 0.7), 4.0) << isa_name(isa);
    EXPECT_LE(worst_ulp<float>(isa, Fn::kTanh, 0.6, 0.65), 4.0) << isa_name(isa);
    EXPECT_LE(worst_ulp<double>(isa, Fn::kTanh, -40, 40), 4.0) << isa_name(isa);
    EXPECT_LE(worst_ulp<double>(isa, Fn::kTanh, -1e-6, 1e-6), 4.0) << isa_name(isa);
    EXPECT_LE(worst_ulp<double>(isa, Fn::kTanh, -0.7, 0.7), 4.0) << isa_name(isa);
    EXPECT_LE(worst_ulp<double>(isa, Fn::kTanh, 0.6, 0.65), 4.0) << isa_name(isa);
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

TEST(Simd, ExpEdges) {
  for (Isa isa : runnable()) {
    EXPECT_EQ(vexp<double>(isa, {-INFINITY, -800.0, 0.0}), (std::vector<double>{0.0, 0.0, 1.0}))
        << isa_name(isa);  // no subnormal results
    EXPECT_EQ(vexp<float>(isa, {-INFINITY, 0.0f}), (std::vector<float>{0.0f, 1.0f}))
        << isa_name(isa);
  }
}

}  // namespace
}  // namespace attn::kernel
