// `attn bench`: times the attention computation of `attn run` (no file
// I/O): the problem a document of seeded random 4D Q, K, V ([batch][heads]
// [n][d], K and V with the kv heads) and the given settings would make,
// through attn::compute, with a warm-up and repeats (at least `min_reps`
// and at least `min_seconds`).
#pragma once

#include <cstdint>
#include <string>

#include "attn/options.h"

namespace attn {

struct BenchOptions {
  int64_t n = 2048;  // queries = keys
  int64_t d = 64;    // head width (queries, keys and values)
  int64_t heads = 1;
  int64_t batch = 1;
  DType dtype = DType::kF32;
  bool weights = true;  // materialize the weights (false: streaming, output only)
  int threads = 0;      // 0: every hardware thread
  bool causal = false;
  // Today's attention: --kv-heads, --rope, --alibi, --window, --softcap,
  // --sinks, as `attn run` takes them.
  RunSettings settings;
  double min_seconds = 1.0;
  int min_reps = 3;
  uint64_t seed = 1;
  // --max-elements: the largest tensor the benchmark may allocate (the
  // inputs, the weights, the packed keys), as for `attn run`.
  int64_t max_elements = int64_t{1} << 26;  // kDefaultMaxElements (attn/limits.h)
};

struct BenchResult {
  double seconds = 0;      // median time of one forward over all batches and heads
  double min_seconds = 0;  // fastest repeat
  // The first run, not counted in the others: what one `attn run` pays,
  // with every buffer fresh from the kernel (faulted in and cleared page
  // by page) and the caches cold. The repeats reuse the memory the
  // process freed (app/main.cc).
  double first_seconds = 0;
  double gflops = 0;  // 4·batch·heads·n²·d / seconds (causal: the same count)
  // CPU time of the process per repeat (median); on a loaded machine
  // seconds grows but this does not, which tells the two apart.
  double cpu_seconds = 0;
  int reps = 0;
  int threads = 0;          // threads actually used
  double peak_rss_mb = 0;   // of the whole process
  std::string kernels;      // the build of the kernels that ran: "avx512", "avx2", "generic"
  std::string description;  // describe_run() of the problem timed
  std::string path;         // plan_compute's choice: "streaming", "weights kept", "reference"
};

BenchResult run_bench(const BenchOptions& o);

// One JSON line with the settings and the result.
std::string bench_json(const BenchOptions& o, const BenchResult& r);

// A few lines for people.
std::string bench_text(const BenchOptions& o, const BenchResult& r);

}  // namespace attn
