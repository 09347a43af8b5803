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

template <class T>
double worst_ulp(Isa isa, double lo, double hi) {
  std::mt19937_64 g(1);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> x(160000 + 3);  // not a whole number of vectors: the tail too
  for (T& v : x) v = static_cast<T>(u(g));
  const std::vector<T> e = vexp(isa, x);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const T ref = static_cast<T>(std::exp(static_cast<long double>(x[i])));
    if (!std::isnormal(ref)) continue;
    const double ulp = std::nextafter(ref, static_cast<T>(INFINITY)) - ref;
    worst = std::max(worst, std::fabs(static_cast<double>(e[i] - ref)) / ulp);
  }
  return worst;
}

TEST(Simd, ExpFloatWithinOneUlp) {
  for (Isa isa : runnable()) {
    EXPECT_LE(worst_ulp<float>(isa, -87, 0), 1.0) << isa_name(isa);
    EXPECT_LE(worst_ulp<float>(isa, -1, 1), 1.0) << isa_name(isa);
  }
}

TEST(Simd, ExpDoubleWithinOneUlp) {
  for (Isa isa : runnable()) {
    EXPECT_LE(worst_ulp<double>(isa, -708, 0), 1.0) << isa_name(isa);
    EXPECT_LE(worst_ulp<double>(isa, -1, 1), 1.0) << isa_name(isa);
  }
}

// The soft-capping's tanh: within 4 ulp of the correctly rounded value,
// near 0 too (where 1 - exp(-2|x|) would lose every digit), odd, and ±1 far
// out and at ±inf.
template <class T>
double worst_tanh_ulp(Isa isa, double lo, double hi) {
  std::mt19937_64 g(2);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> x(100000 + 5);
  for (T& v : x) v = static_cast<T>(u(g));
  std::vector<T> y(x.size());
  kernels_for(isa).of<T>().tanh(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const T ref = static_cast<T>(std::tanh(static_cast<long double>(x[i])));
    if (ref == 0) continue;
    const T a = std::fabs(ref);
    const double ulp = std::nextafter(a, static_cast<T>(INFINITY)) - a;
    worst = std::max(worst, std::fabs(static_cast<double>(y[i] - ref)) / ulp);
  }
  return worst;
}

TEST(Simd, TanhWithinFourUlp) {
  for (Isa isa : runnable()) {
    EXPECT_LE(worst_tanh_ulp<float>(isa, -20, 20), 4.0) << isa_name(isa);
    EXPECT_LE(worst_tanh_ulp<float>(isa, -1e-3, 1e-3), 4.0) << isa_name(isa);
    EXPECT_LE(worst_tanh_ulp<double>(isa, -40, 40), 4.0) << isa_name(isa);
    EXPECT_LE(worst_tanh_ulp<double>(isa, -1e-6, 1e-6), 4.0) << isa_name(isa);
    const std::vector<double> x = {0.0, -INFINITY, INFINITY, 400.0, -400.0};
    std::vector<double> y(x.size());
    kernels_for(isa).of<double>().tanh(x.data(), y.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(y, (std::vector<double>{0.0, -1.0, 1.0, 1.0, -1.0})) << isa_name(isa);
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
