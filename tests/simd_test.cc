// The kernels' vectorized exp: within 1 ulp of the correctly rounded value
// over the range softmax uses (x <= 0), 0 for -inf and below the smallest
// normal result, exactly 1 at 0.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernel/simd.h"

namespace attn::kernel {
namespace {

template <class T>
double worst_ulp(double lo, double hi) {
  std::mt19937_64 g(1);
  std::uniform_real_distribution<double> u(lo, hi);
  double worst = 0;
  for (int i = 0; i < 20000; ++i) {
    Vec<T> x;
    for (int k = 0; k < Simd<T>::W; ++k) x[k] = static_cast<T>(u(g));
    const Vec<T> e = vexp(x);
    for (int k = 0; k < Simd<T>::W; ++k) {
      const T ref = static_cast<T>(std::exp(static_cast<long double>(x[k])));
      if (!std::isnormal(ref)) continue;
      const double ulp = std::nextafter(ref, static_cast<T>(INFINITY)) - ref;
      worst = std::max(worst, std::fabs(static_cast<double>(e[k] - ref)) / ulp);
    }
  }
  return worst;
}

TEST(Simd, ExpFloatWithinOneUlp) {
  EXPECT_LE(worst_ulp<float>(-87, 0), 1.0);
  EXPECT_LE(worst_ulp<float>(-1, 1), 1.0);
}

TEST(Simd, ExpDoubleWithinOneUlp) {
  EXPECT_LE(worst_ulp<double>(-708, 0), 1.0);
  EXPECT_LE(worst_ulp<double>(-1, 1), 1.0);
}

TEST(Simd, ExpEdges) {
  EXPECT_EQ(vexp(splat<double>(-INFINITY))[0], 0.0);
  EXPECT_EQ(vexp(splat<double>(-800.0))[0], 0.0);  // no subnormal results
  EXPECT_EQ(vexp(splat<double>(0.0))[0], 1.0);
  EXPECT_EQ(vexp(splat<float>(-INFINITY))[0], 0.0f);
  EXPECT_EQ(vexp(splat<float>(0.0f))[0], 1.0f);
}

}  // namespace
}  // namespace attn::kernel
