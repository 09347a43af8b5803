#include "commands/bench.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "attn/attention.h"
#include "attn/document.h"
#include "attn/error.h"
#include "attn/limits.h"
#include "attn/problem.h"
#include "base/number_text.h"
#include "base/parallel.h"
#include "io/json_writer.h"
#include "kernel/attention_kernel.h"
#include "kernel/dropout.h"
#include "kernel/instruction_set.h"

namespace attn {

namespace {

// The peak resident set of this program. Linux's VmHWM belongs to the
// address space, which execve replaces; getrusage's ru_maxrss survives
// execve, so under a parent that held gigabytes when it forked (a Python
// benchmark driver) it would report the parent's peak instead of attn's.
double peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

// Refuses, before anything is allocated, a benchmark whose inputs, weights
// or packed keys would hold more than o.max_elements elements, or whose
// heads would cost more in bookkeeping: --n 100000 keeps 10^10 weights.
template <class T>
void check_bench_limits(const BenchOptions& o) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  auto mul = [](int64_t a, int64_t b) { return a > kMax / b ? kMax : a * b; };
  const int64_t heads = mul(o.batch, o.heads);
  const std::string bh = "batch " + std::to_string(o.batch) + " × heads " + std::to_string(o.heads);
  const std::string n = std::to_string(o.n), d = std::to_string(o.d);
  const int64_t packed_rows = kernel::packed_key_elements<T>(o.n, 1);
  struct Need {
    std::string what;
    int64_t count;
    std::string factors, advice;
  };
  const Need needs[] = {
      {"keeping the weights needs", o.weights ? mul(heads, mul(o.n, o.n)) : 0,
       "weights (" + bh + " × " + n + " × " + n + ")", " or use --no-weights"},
      {"Q, K, V and the output need", mul(heads, mul(o.n, o.d)),
       "elements each (" + bh + " × " + n + " × " + d + ")", " or lower --n or --d"},
      {"the packed keys need", mul(heads, mul(packed_rows, o.d)),
       "elements (" + bh + " × " + std::to_string(packed_rows) + " × " + d + ")", " or lower --d"},
      {bh + " need", mul(heads, kHeadElements),
       "elements (" + std::to_string(kHeadElements) + " per head of working memory)",
       " or lower --heads or --batch"},
  };
  for (const Need& need : needs) {
    if (need.count <= o.max_elements) continue;
    throw_input("bench", need.what + " " + std::to_string(need.count) + " " + need.factors +
                             ", more than --max-elements " + std::to_string(o.max_elements) +
                             "; raise --max-elements" + need.advice);
  }
}

// Q as [batch][heads][n][d], K and V as [batch][kv heads][n][d], uniform in
// [-1, 1] from the project's generator (reproducible everywhere), with the
// settings of o: the problem `attn run` would build from such a document.
Problem bench_problem(const BenchOptions& o) {
  InputDocument doc;
  doc.source = "bench";
  doc.settings = o.settings;
  doc.settings_place = "bench";
  if (o.causal) doc.settings.causal = true;
  const int64_t kv = o.settings.kv_heads.value_or(o.heads);
  if (kv < 1 || o.heads % kv != 0) {
    throw_usage("bench: --kv-heads " + std::to_string(kv) + " does not divide --heads " +
                std::to_string(o.heads));
  }
  uint64_t counter = 0;
  auto tensor = [&](int64_t h) {
    Tensor<double> t({o.batch, h, o.n, o.d});
    for (double& x : t.values()) x = 2 * dropout_uniform(o.seed, counter++) - 1;
    return Input{std::move(t), "bench"};
  };
  doc.Q = tensor(o.heads);
  doc.K = tensor(kv);
  doc.V = tensor(kv);
  return build_problem(std::move(doc));
}

BenchResult bench(const BenchOptions& o) {
  const Problem p = bench_problem(o);
  ComputeRequest req;
  req.weights = o.weights;
  req.dtype = o.dtype;
  req.threads = o.threads > 0 ? o.threads : kernel::hardware_threads();
  using clock = std::chrono::steady_clock;
  const auto first = clock::now();
  compute(p, req);  // warm-up
  const double first_seconds = std::chrono::duration<double>(clock::now() - first).count();
  auto cpu_now = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  };
  std::vector<double> times, cpu;
  const auto start = clock::now();
  while (static_cast<int>(times.size()) < o.min_reps ||
         std::chrono::duration<double>(clock::now() - start).count() < o.min_seconds) {
    const double c0 = cpu_now();
    const auto t0 = clock::now();
    compute(p, req);
    times.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    cpu.push_back(cpu_now() - c0);
  }
  std::sort(times.begin(), times.end());
  std::sort(cpu.begin(), cpu.end());
  BenchResult r;
  r.reps = static_cast<int>(times.size());
  r.seconds = times[times.size() / 2];
  r.min_seconds = times.front();
  r.first_seconds = first_seconds;
  r.cpu_seconds = cpu[cpu.size() / 2];
  const double flops = 4.0 * static_cast<double>(o.batch * o.heads) * static_cast<double>(o.n) *
                       static_cast<double>(o.n) * static_cast<double>(o.d);
  r.gflops = flops / r.seconds / 1e9;
  r.threads = req.threads;
  r.peak_rss_mb = peak_rss_mb();
  r.kernels = kernel::isa_key(kernel::kernel_isa());
  r.description = describe_run(p);
  switch (plan_compute(p, req, false)) {
    case ComputePath::kReference:
      r.path = "reference";
      break;
    case ComputePath::kWeightsKept:
      r.path = "weights kept";
      break;
    case ComputePath::kStreaming:
      r.path = "streaming";
      break;
  }
  return r;
}

}  // namespace

BenchResult run_bench(const BenchOptions& o) {
  if (o.n < 1 || o.d < 1 || o.heads < 1 || o.batch < 1) {
    throw_usage("bench: --n, --d, --heads and --batch must be positive");
  }
  if (o.dtype == DType::kF32) {
    check_bench_limits<float>(o);
  } else {
    check_bench_limits<double>(o);
  }
  return bench(o);
}

std::string bench_json(const BenchOptions& o, const BenchResult& r) {
  std::string out;
  JsonWriter w(out);
  w.begin_object(JsonLayout::kInline);
  w.key("n").integer(o.n).key("d").integer(o.d);
  w.key("heads").integer(o.heads).key("batch").integer(o.batch);
  w.key("dtype").string(name(o.dtype));
  w.key("weights").boolean(o.weights).key("causal").boolean(o.causal);
  w.key("threads").integer(r.threads);
  w.key("seconds").number(r.seconds).key("min_seconds").number(r.min_seconds);
  w.key("first_seconds").number(r.first_seconds).key("cpu_seconds").number(r.cpu_seconds);
  w.key("gflops").number(r.gflops).key("reps").integer(r.reps);
  w.key("peak_rss_mb").number(r.peak_rss_mb);
  w.key("kernels").string(r.kernels).key("path").string(r.path);
  w.key("run").string(r.description);
  w.end_object();
  out += '\n';
  return out;
}

std::string bench_text(const BenchOptions& o, const BenchResult& r) {
  std::string s = "attention " + std::to_string(o.batch) + "x" + std::to_string(o.heads) +
                  " heads, n " + std::to_string(o.n) + ", d " + std::to_string(o.d) + ", " +
                  std::string(name(o.dtype)) + (o.weights ? ", weights kept" : ", output only") +
                  (o.causal ? ", causal" : "") + ", " + std::to_string(r.threads) +
                  (r.threads == 1 ? " thread" : " threads") + ", " + r.kernels + " kernels\n";
  s += "  " + r.description + " (" + r.path + ")\n";
  s += "  median " + format_fixed(r.seconds * 1e3, 3) + " ms, min " +
       format_fixed(r.min_seconds * 1e3, 3) + " ms over " + std::to_string(r.reps) +
       " runs; the first run " + format_fixed(r.first_seconds * 1e3, 3) + " ms\n";
  s += "  CPU time " + format_fixed(r.cpu_seconds * 1e3, 3) + " ms per run (all threads)\n";
  s += "  " + format_fixed(r.gflops, 1) + " GFLOP/s (4·n²·d per head), peak RSS " +
       format_fixed(r.peak_rss_mb, 1) + " MB\n";
  return s;
}

}  // namespace attn
