// The forward pass's float32 products with weights, alone: attn's kernel
// (lib/src/kernel/linear_kernel.h, widening bfloat16 as it packs) against
// OpenBLAS's sgemm on the same weights already widened to float32, on the
// shapes of a Qwen2.5-0.5B layer over 128 tokens. Usage:
//   linear_bench [threads] [tokens] [repeats]       (default 2, 128, 20)
// Prints one line per shape and engine: GFLOP/s and the percentage of the
// FMA peak given in ATTN_FMA_PEAK (GFLOP/s for those threads, from
// fma_peak) when set. attn's kernel runs twice: on weights hot in the
// cache, and cold, cycling through copies of them larger than the L3 (as
// the forward pass meets a layer's weights, once each). A benchmark, not a
// test: nothing here asserts a time.
#if defined(ATTN_BENCH_OPENBLAS)
#include <cblas.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernel/linear_kernel.h"

#if defined(ATTN_BENCH_OPENBLAS)
extern "C" void openblas_set_num_threads(int threads);
#endif

namespace {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Shape {
  const char* name;
  int64_t in;
  std::vector<int64_t> outs;
};

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 128;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 20;
  const double peak = std::getenv("ATTN_FMA_PEAK") ? std::atof(std::getenv("ATTN_FMA_PEAK")) : 0;
#if defined(ATTN_BENCH_OPENBLAS)
  openblas_set_num_threads(threads);
#endif
  const std::vector<Shape> shapes = {
      {"q,k,v 896->896+128+128", 896, {896, 128, 128}},
      {"o 896->896", 896, {896}},
      {"gate,up 896->4864+4864", 896, {4864, 4864}},
      {"down 4864->896", 4864, {896}},
  };
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1, 1);
  for (const Shape& s : shapes) {
    int64_t total = 0;
    for (int64_t o : s.outs) total += o;
    std::vector<float> x(static_cast<size_t>(n * s.in));
    for (int64_t i = 0; i < n * s.in; ++i) x[static_cast<size_t>(i)] = d(rng);
    // The weights, [out][in], in bfloat16 and widened.
    std::vector<uint16_t> wb(static_cast<size_t>(total * s.in));
    std::vector<float> wf(wb.size());
    for (size_t i = 0; i < wb.size(); ++i) {
      const float v = d(rng);
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      wb[i] = static_cast<uint16_t>(bits >> 16);
      bits = static_cast<uint32_t>(wb[i]) << 16;
      std::memcpy(&wf[i], &bits, 4);
    }
    // Copies of the bf16 weights, 256 MB in all, for the cold runs.
    const int copies =
        static_cast<int>(std::max<size_t>(2, (256u << 20) / (wb.size() * sizeof(uint16_t))));
    std::vector<std::vector<uint16_t>> cold(static_cast<size_t>(copies), wb);
    auto views = [&](const uint16_t* base) {
      std::vector<attn::kernel::LinearWeight> ws;
      int64_t at = 0;
      for (int64_t o : s.outs) {
        attn::kernel::LinearWeight w;
        w.data = reinterpret_cast<const unsigned char*>(base + at * s.in);
        w.type = attn::ElementType::kBF16;
        w.rows = o;
        w.cols = s.in;
        ws.push_back(w);
        at += o;
      }
      return ws;
    };
    const std::vector<attn::kernel::LinearWeight> ws = views(wb.data());
    std::vector<float> y(static_cast<size_t>(n * total)), yb(y.size());
    const double flop = 2.0 * static_cast<double>(n * total * s.in);
    double best_attn = 1e30, best_blas = 1e30, best_cold = 1e30;
    // Each engine's repeats together: OpenBLAS's threads spin for a while
    // after a call, on the cores attn's would use.
    for (int r = 0; r < repeats; ++r) {
      const double t = seconds();
      attn::kernel::linear(x.data(), n, s.in, ws.data(), static_cast<int>(ws.size()), y.data(),
                           total, threads);
      best_attn = std::min(best_attn, seconds() - t);
    }
    // Twice through the copies, the second time timed: each is out of the
    // caches when its turn comes.
    for (int r = 0; r < 2 * copies; ++r) {
      const std::vector<attn::kernel::LinearWeight> c =
          views(cold[static_cast<size_t>(r % copies)].data());
      const double t = seconds();
      attn::kernel::linear(x.data(), n, s.in, c.data(), static_cast<int>(c.size()), y.data(), total,
                           threads);
      if (r >= copies) best_cold = std::min(best_cold, seconds() - t);
    }
    int engines = 2;
    double diff = -1;
#if defined(ATTN_BENCH_OPENBLAS)
    for (int r = 0; r < repeats; ++r) {
      const double t = seconds();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n),
                  static_cast<int>(total), static_cast<int>(s.in), 1.0f, x.data(),
                  static_cast<int>(s.in), wf.data(), static_cast<int>(s.in), 0.0f, yb.data(),
                  static_cast<int>(total));
      best_blas = std::min(best_blas, seconds() - t);
    }
    engines = 3;
    diff = 0;
    for (size_t i = 0; i < y.size(); ++i) diff = std::max(diff, double(std::fabs(y[i] - yb[i])));
#endif
    const char* names[] = {"attn (bf16, packs widening)", "attn, cold weights",
                           "OpenBLAS sgemm (f32 weights)"};
    for (int e = 0; e < engines; ++e) {
      const double t = e == 0 ? best_attn : e == 1 ? best_cold : best_blas;
      const double g = flop / t / 1e9;
      std::printf("%-26s %-28s %8.3f ms %7.1f GFLOP/s", s.name, names[e], t * 1e3, g);
      if (peak > 0) std::printf("  %5.1f%% of peak", 100 * g / peak);
      if (e == 0 && diff >= 0) std::printf("  max|diff| from sgemm %.2g", diff);
      std::printf("\n");
    }
  }
  return 0;
}
