// Reading speed of attn's matrix readers: CSV (parse_csv) and JSON
// (json::parse + json_to_tensor, the path of `attn run`), and writing
// JSON output. Usage: io_bench FILE.csv FILE.json [repeats]
// Prints one JSON line per measurement (MB/s of input text, best of the
// repeats), for bench/run_bench.py.
#include <chrono>
#include <cstdio>
#include <string>

#include "attn/csv.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "attn/json_tensor.h"
#include "attn/output.h"

namespace {

template <class F>
double best_seconds(int reps, F&& f) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
  }
  return best;
}

void report(const char* what, size_t bytes, double s) {
  std::printf("{\"reader\": \"%s\", \"bytes\": %zu, \"seconds\": %.6f, \"mb_per_s\": %.1f}\n", what,
              bytes, s, static_cast<double>(bytes) / s / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: io_bench FILE.csv FILE.json [repeats]\n");
    return 2;
  }
  const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  const std::string csv = attn::read_file(argv[1]);
  const std::string json = attn::read_file(argv[2]);
  attn::Tensor<double> t;
  report("attn csv", csv.size(),
         best_seconds(reps, [&] { t = attn::parse_csv(csv, argv[1]).values; }));
  report("attn json", json.size(), best_seconds(reps, [&] {
           attn::json::Value v = attn::json::parse(json, argv[2]);
           t = attn::json_to_tensor(v, argv[2], "", attn::CellKind::kFinite);
         }));
  std::string out;
  const double ws = best_seconds(reps, [&] {
    out.clear();
    attn::append_json_tensor(out, t, attn::DType::kF64, 0);
  });
  report("attn json output", out.size(), ws);
  return 0;
}
