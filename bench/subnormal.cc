// Subnormal numbers against the engine: times compute() on ordinary inputs,
// on inputs full of subnormals, and on scores whose exponentials underflow
// into the subnormal range, in float64 and float32, and prints each time
// and its ratio to the ordinary run. x86 cores take a microcode assist on
// many subnormal operands and results, which can make such runs many times
// slower; this measures how much that costs attn.
//
//   attn_bench_subnormal [len] [dim] [repeats]     (default 512 64 15)
//
// The causal cases compare masked scores of -inf with d2l's finite -1e6:
// exp(-1e6) underflows to 0 through the same slow path of the C library's
// exp as a subnormal result does.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/document.h"
#include "attn/problem.h"

namespace {

using attn::Tensor;

struct Case {
  std::string name;
  attn::InputDocument doc;
};

Tensor<double> random_matrix(int64_t rows, int64_t cols, double scale, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.5, 1.0);
  std::bernoulli_distribution sign(0.5);
  attn::Values<double> v(static_cast<size_t>(rows * cols));
  for (double& x : v) x = (sign(rng) ? -1 : 1) * u(rng) * scale;
  return Tensor<double>({rows, cols}, std::move(v));
}

attn::InputDocument qkv(Tensor<double> q, Tensor<double> k, Tensor<double> v) {
  attn::InputDocument doc;
  doc.source = doc.settings_place = "bench";
  doc.Q = attn::Input{std::move(q), "Q"};
  doc.K = attn::Input{std::move(k), "K"};
  doc.V = attn::Input{std::move(v), "V"};
  return doc;
}

// Keys whose scores against every query lie `lo` to `hi` below the best
// key's: exp(s - max) lands in [e^-hi, e^-lo]. Q rows are (1, 0, ...), so a
// key's score is its first coordinate.
attn::InputDocument underflowing_scores(int64_t len, int64_t dim, double lo, double hi,
                                        std::mt19937_64& rng) {
  Tensor<double> q({len, dim}, 0.0), k({len, dim}, 0.0);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < len; ++i) {
    q.data()[i * dim] = 1.0;
    k.data()[i * dim] = i == 0 ? 0.0 : -u(rng);
  }
  attn::InputDocument doc = qkv(std::move(q), std::move(k), random_matrix(len, dim, 1.0, rng));
  doc.settings.scale = attn::Scale{attn::ScaleKind::kNone, 1.0};
  return doc;
}

double seconds(const attn::Problem& p, attn::DType dtype, int repeats) {
  attn::ComputeRequest req;
  req.dtype = dtype;
  std::vector<double> t;
  double sink = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const attn::Result res = attn::compute(p, req);
    const auto stop = std::chrono::steady_clock::now();
    sink += res.output[0];
    t.push_back(std::chrono::duration<double>(stop - start).count());
  }
  std::sort(t.begin(), t.end());
  if (sink == 12345.678) std::puts("");  // keep the results alive
  return t[t.size() / 2];                // the median
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t len = argc > 1 ? std::atoll(argv[1]) : 512;
  const int64_t dim = argc > 2 ? std::atoll(argv[2]) : 64;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 15;
  std::mt19937_64 rng(42);

  // Smallest normals: 2.2e-308 (double), 1.2e-38 (float). Scaling [0.5, 1)
  // by 1e-310 / 1e-40 gives subnormals of the type the run uses.
  struct Spec {
    const char* name;
    attn::DType dtype;
    attn::InputDocument doc;
  };
  std::vector<Spec> specs;
  for (attn::DType dt : {attn::DType::kF64, attn::DType::kF32}) {
    const bool f64 = dt == attn::DType::kF64;
    const double sub = f64 ? 1e-310 : 1e-40;
    specs.push_back({"ordinary inputs", dt,
                     qkv(random_matrix(len, dim, 1.0, rng), random_matrix(len, dim, 1.0, rng),
                         random_matrix(len, dim, 1.0, rng))});
    specs.push_back({"subnormal Q, K, V", dt,
                     qkv(random_matrix(len, dim, sub, rng), random_matrix(len, dim, sub, rng),
                         random_matrix(len, dim, sub, rng))});
    specs.push_back({"subnormal V only", dt,
                     qkv(random_matrix(len, dim, 1.0, rng), random_matrix(len, dim, 1.0, rng),
                         random_matrix(len, dim, sub, rng))});
    // exp(x) is subnormal for x in (-745, -708) (double), (-103, -87) (float).
    specs.push_back({"exp underflows to subnormal", dt,
                     f64 ? underflowing_scores(len, dim, 709, 744, rng)
                         : underflowing_scores(len, dim, 88, 103, rng)});
    // Masked scores set to -inf (skipped by exp) or to d2l's -1e6, whose
    // exponential underflows to 0: half the scores of a causal mask.
    for (double fill : {-HUGE_VAL, -1e6}) {
      attn::InputDocument doc =
          qkv(random_matrix(len, dim, 1.0, rng), random_matrix(len, dim, 1.0, rng),
              random_matrix(len, dim, 1.0, rng));
      doc.settings.causal = true;
      doc.settings.mask_fill = fill;
      specs.push_back({fill < -1e300 ? "causal, mask_fill -inf" : "causal, mask_fill -1e6", dt,
                       std::move(doc)});
    }
  }

  std::printf("attn subnormal benchmark: Q, K, V [%lld][%lld], median of %d runs\n",
              static_cast<long long>(len), static_cast<long long>(dim), repeats);
  std::printf("%-6s %-30s %12s %8s\n", "dtype", "case", "ms", "ratio");
  double base = 0;
  for (const Spec& s : specs) {
    const attn::Problem p = attn::build_problem(s.doc);
    const double t = seconds(p, s.dtype, repeats);
    if (std::string(s.name) == "ordinary inputs") base = t;
    std::printf("%-6s %-30s %12.3f %8.2f\n", s.dtype == attn::DType::kF64 ? "f64" : "f32", s.name,
                t * 1e3, t / base);
  }
  return 0;
}
