// The machine's FMA peak, for bench/run_bench.py: twelve independent
// chains of fused multiply-adds held in registers, in float32 and float64,
// with 256-bit (AVX2+FMA) and 512-bit (AVX-512F) vectors, on 1 thread and on
// 2 threads at once. Each FMA counts 2 flops per lane. Prints one JSON object.
//
//     build/fma_peak [seconds per measurement]    # default 0.2
//
// The kernels carry their own target attributes and run only when
// __builtin_cpu_supports says the CPU has the instructions, so the program
// does not depend on -march (bench/CMakeLists.txt builds it without).
// Twelve chains cover the latency of every current x86 core (4 cycles × 2
// FMA pipes = 8 in flight) and, with the two constants, fit in the 16
// registers of AVX2. Each measurement is the best of 5 (a peak is what the
// core can do, and a shared machine only ever makes it slower) and gives two
// rates: "gflops" over wall time, and "gflops_cpu" over each thread's own
// CPU time, which a busy machine does not lower.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kChains = 12;

// The chains compute acc = acc·a + b with a just below 1: every value stays
// a normal number (acc tends to b / (1 − a)), whatever the count.
#define ATTN_FMA12(FMA) \
  c0 = FMA(c0, a, b);   \
  c1 = FMA(c1, a, b);   \
  c2 = FMA(c2, a, b);   \
  c3 = FMA(c3, a, b);   \
  c4 = FMA(c4, a, b);   \
  c5 = FMA(c5, a, b);   \
  c6 = FMA(c6, a, b);   \
  c7 = FMA(c7, a, b);   \
  c8 = FMA(c8, a, b);   \
  c9 = FMA(c9, a, b);   \
  c10 = FMA(c10, a, b); \
  c11 = FMA(c11, a, b)

// Each kernel runs `iters` rounds of 12 FMAs and returns the sum of its
// chains, which the caller keeps: the loop cannot be optimized away.
__attribute__((target("avx2,fma"), noinline)) double f32_256(long iters) {
  const __m256 a = _mm256_set1_ps(0.9999f), b = _mm256_set1_ps(1e-4f);
  __m256 c0 = _mm256_set1_ps(0.f), c1 = _mm256_set1_ps(.1f), c2 = _mm256_set1_ps(.2f),
         c3 = _mm256_set1_ps(.3f), c4 = _mm256_set1_ps(.4f), c5 = _mm256_set1_ps(.5f),
         c6 = _mm256_set1_ps(.6f), c7 = _mm256_set1_ps(.7f), c8 = _mm256_set1_ps(.8f),
         c9 = _mm256_set1_ps(.9f), c10 = _mm256_set1_ps(1.f), c11 = _mm256_set1_ps(1.1f);
  for (long i = 0; i < iters; ++i) {
    ATTN_FMA12(_mm256_fmadd_ps);
  }
  const __m256 s =
      _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                                  _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7))),
                    _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[7];
}

__attribute__((target("avx2,fma"), noinline)) double f64_256(long iters) {
  const __m256d a = _mm256_set1_pd(0.9999), b = _mm256_set1_pd(1e-4);
  __m256d c0 = _mm256_set1_pd(0.), c1 = _mm256_set1_pd(.1), c2 = _mm256_set1_pd(.2),
          c3 = _mm256_set1_pd(.3), c4 = _mm256_set1_pd(.4), c5 = _mm256_set1_pd(.5),
          c6 = _mm256_set1_pd(.6), c7 = _mm256_set1_pd(.7), c8 = _mm256_set1_pd(.8),
          c9 = _mm256_set1_pd(.9), c10 = _mm256_set1_pd(1.), c11 = _mm256_set1_pd(1.1);
  for (long i = 0; i < iters; ++i) {
    ATTN_FMA12(_mm256_fmadd_pd);
  }
  const __m256d s =
      _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(_mm256_add_pd(c0, c1), _mm256_add_pd(c2, c3)),
                                  _mm256_add_pd(_mm256_add_pd(c4, c5), _mm256_add_pd(c6, c7))),
                    _mm256_add_pd(_mm256_add_pd(c8, c9), _mm256_add_pd(c10, c11)));
  double out[4];
  _mm256_storeu_pd(out, s);
  return out[0] + out[3];
}

__attribute__((target("avx512f"), noinline)) double f32_512(long iters) {
  const __m512 a = _mm512_set1_ps(0.9999f), b = _mm512_set1_ps(1e-4f);
  __m512 c0 = _mm512_set1_ps(0.f), c1 = _mm512_set1_ps(.1f), c2 = _mm512_set1_ps(.2f),
         c3 = _mm512_set1_ps(.3f), c4 = _mm512_set1_ps(.4f), c5 = _mm512_set1_ps(.5f),
         c6 = _mm512_set1_ps(.6f), c7 = _mm512_set1_ps(.7f), c8 = _mm512_set1_ps(.8f),
         c9 = _mm512_set1_ps(.9f), c10 = _mm512_set1_ps(1.f), c11 = _mm512_set1_ps(1.1f);
  for (long i = 0; i < iters; ++i) {
    ATTN_FMA12(_mm512_fmadd_ps);
  }
  const __m512 s =
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                                  _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7))),
                    _mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)));
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx512f"), noinline)) double f64_512(long iters) {
  const __m512d a = _mm512_set1_pd(0.9999), b = _mm512_set1_pd(1e-4);
  __m512d c0 = _mm512_set1_pd(0.), c1 = _mm512_set1_pd(.1), c2 = _mm512_set1_pd(.2),
          c3 = _mm512_set1_pd(.3), c4 = _mm512_set1_pd(.4), c5 = _mm512_set1_pd(.5),
          c6 = _mm512_set1_pd(.6), c7 = _mm512_set1_pd(.7), c8 = _mm512_set1_pd(.8),
          c9 = _mm512_set1_pd(.9), c10 = _mm512_set1_pd(1.), c11 = _mm512_set1_pd(1.1);
  for (long i = 0; i < iters; ++i) {
    ATTN_FMA12(_mm512_fmadd_pd);
  }
  const __m512d s =
      _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(_mm512_add_pd(c0, c1), _mm512_add_pd(c2, c3)),
                                  _mm512_add_pd(_mm512_add_pd(c4, c5), _mm512_add_pd(c6, c7))),
                    _mm512_add_pd(_mm512_add_pd(c8, c9), _mm512_add_pd(c10, c11)));
  return _mm512_reduce_add_pd(s);
}

struct Kernel {
  const char* dtype;
  int bits;
  int lanes;
  double (*run)(long);
  bool available;
};

volatile double g_sink;  // where the chains' sums go

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Rate {
  double wall = 0;  // all flops over the wall time of the slowest thread
  double cpu = 0;   // the sum of each thread's flops over its own CPU time
};

// GFLOP/s of `threads` threads running the kernel at once, best of 5. The
// CPU-time rate is what the cores do while they run, whoever else shares the
// machine; the wall-time rate falls when another process takes a core.
Rate measure(const Kernel& k, int threads, double seconds) {
  // Calibrate on one thread: the count of rounds that lasts `seconds`.
  long iters = 1 << 16;
  for (;;) {
    const double t0 = thread_cpu_seconds();
    g_sink = k.run(iters);
    const double t = thread_cpu_seconds() - t0;
    if (t >= seconds / 4) {
      iters = static_cast<long>(static_cast<double>(iters) * seconds / t);
      break;
    }
    iters *= 4;
  }
  const double flops = 2.0 * k.lanes * kChains * static_cast<double>(iters);
  Rate best;
  for (int rep = 0; rep < 5; ++rep) {
    std::vector<double> sums(threads), cpu(threads);
    std::vector<std::thread> pool;
    const double t0 = now();
    for (int i = 0; i < threads; ++i) {
      pool.emplace_back([&, i] {
        const double c0 = thread_cpu_seconds();
        sums[i] = k.run(iters);
        cpu[i] = thread_cpu_seconds() - c0;
      });
    }
    for (auto& t : pool) t.join();
    const double wall = now() - t0;
    double cpu_rate = 0;
    for (int i = 0; i < threads; ++i) {
      g_sink = sums[i];
      cpu_rate += flops / cpu[i] / 1e9;
    }
    best.wall = std::max(best.wall, flops * threads / wall / 1e9);
    best.cpu = std::max(best.cpu, cpu_rate);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 0.2;
  if (!(seconds > 0)) {
    std::fprintf(stderr, "usage: fma_peak [seconds per measurement]\n");
    return 2;
  }
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const Kernel kernels[] = {{"f32", 256, 8, f32_256, avx2},
                            {"f64", 256, 4, f64_256, avx2},
                            {"f32", 512, 16, f32_512, avx512},
                            {"f64", 512, 8, f64_512, avx512}};
  std::string out = "{\"chains\": " + std::to_string(kChains) + ", \"peaks\": [";
  bool first = true;
  for (const Kernel& k : kernels) {
    for (int threads : {1, 2}) {
      char line[200];
      if (k.available) {
        const Rate r = measure(k, threads, seconds);
        std::snprintf(line, sizeof line,
                      "{\"dtype\": \"%s\", \"bits\": %d, \"threads\": %d, \"gflops\": %.2f, "
                      "\"gflops_cpu\": %.2f}",
                      k.dtype, k.bits, threads, r.wall, r.cpu);
      } else {
        std::snprintf(line, sizeof line,
                      "{\"dtype\": \"%s\", \"bits\": %d, \"threads\": %d, \"gflops\": null, "
                      "\"gflops_cpu\": null, \"why\": \"not available: the CPU has no %s\"}",
                      k.dtype, k.bits, threads, k.bits == 512 ? "avx512f" : "avx2+fma");
      }
      out += (first ? "" : ", ");
      out += line;
      first = false;
    }
  }
  std::printf("%s]}\n", out.c_str());
  return 0;
}
