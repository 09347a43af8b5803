// The forward pass's float32 products with weights, alone: attn's kernel
// (lib/src/kernel/linear_kernel.h, widening bfloat16 as it packs) against
// OpenBLAS's sgemm on the same weights already widened to float32, on the
// shapes of a Qwen2.5-0.5B layer over 128 tokens. Usage:
//   linear_bench [threads] [tokens] [repeats]       (default 2, 128, 20)
// Prints one line per shape and engine: GFLOP/s and the percentage of the
// FMA peak given in ATTN_FMA_PEAK (GFLOP/s for those threads, from
// fma_peak) when set. A benchmark, not a test: nothing here asserts a time.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernel/linear_kernel.h"

extern "C" void openblas_set_num_threads(int threads);

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
  openblas_set_num_threads(threads);
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
    const int64_t block = attn::kernel::linear_row_block();
    std::vector<float> x(static_cast<size_t>((n + block - 1) / block * block * s.in), 0.0f);
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
    std::vector<attn::kernel::LinearWeight> ws;
    int64_t at = 0;
    for (int64_t o : s.outs) {
      attn::kernel::LinearWeight w;
      w.data = reinterpret_cast<const unsigned char*>(wb.data() + at * s.in);
      w.type = attn::ElementType::kBF16;
      w.rows = o;
      w.cols = s.in;
      ws.push_back(w);
      at += o;
    }
    std::vector<float> y(static_cast<size_t>(n * total)), yb(y.size());
    const double flop = 2.0 * static_cast<double>(n * total * s.in);
    double best_attn = 1e30, best_blas = 1e30;
    // Each engine's repeats together: OpenBLAS's threads spin for a while
    // after a call, on the cores attn's would use.
    for (int r = 0; r < repeats; ++r) {
      const double t = seconds();
      attn::kernel::linear_f32(x.data(), n, s.in, ws.data(), static_cast<int>(ws.size()), y.data(),
                               total, threads);
      best_attn = std::min(best_attn, seconds() - t);
    }
    for (int r = 0; r < repeats; ++r) {
      const double t = seconds();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n),
                  static_cast<int>(total), static_cast<int>(s.in), 1.0f, x.data(),
                  static_cast<int>(s.in), wf.data(), static_cast<int>(s.in), 0.0f, yb.data(),
                  static_cast<int>(total));
      best_blas = std::min(best_blas, seconds() - t);
    }
    double diff = 0;
    for (size_t i = 0; i < y.size(); ++i) diff = std::max(diff, double(std::fabs(y[i] - yb[i])));
    for (int e = 0; e < 2; ++e) {
      const double t = e == 0 ? best_attn : best_blas;
      const double g = flop / t / 1e9;
      std::printf("%-26s %-28s %8.3f ms %7.1f GFLOP/s", s.name,
                  e == 0 ? "attn (bf16, packs widening)" : "OpenBLAS sgemm (f32 weights)", t * 1e3,
                  g);
      if (peak > 0) std::printf("  %5.1f%% of peak", 100 * g / peak);
      std::printf(e == 0 ? "  max|diff| %.2g\n" : "\n", diff);
    }
  }
  return 0;
}
