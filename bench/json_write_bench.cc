// Writing a large result as JSON: attn's streaming JsonWriter (the path of
// `attn run -f json`) against nlohmann::json, which first builds a
// document tree of the same numbers and then dump()s it. Usage:
//   json_write_bench [rows] [cols]     (default 5000 x 1000, ~100 MB)
// Prints one JSON line per writer: bytes written, seconds, and the peak of
// heap bytes in use while it ran (counted by this program's operator new),
// so both are measured in one run on the same numbers.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/document.h"
#include "attn/output.h"
#include "attn/problem.h"

namespace {

std::atomic<size_t> g_in_use{0}, g_peak{0};

void count(size_t n) {
  const size_t now = g_in_use.fetch_add(n) + n;
  size_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}

// The size travels in front of each block, so delete knows what it frees.
void* counted_new(size_t n) {
  void* p = std::malloc(n + 16);
  if (!p) throw std::bad_alloc();
  *static_cast<size_t*>(p) = n;
  count(n);
  return static_cast<char*>(p) + 16;
}

void counted_delete(void* p) {
  if (!p) return;
  char* block = static_cast<char*>(p) - 16;
  g_in_use.fetch_sub(*reinterpret_cast<size_t*>(block));
  std::free(block);
}

struct Measure {
  size_t bytes = 0;
  double seconds = 0;
  size_t peak = 0;
};

// Runs f with the peak reset to what is in use now; the peak reported is
// the growth above that.
template <class F>
Measure measure(F&& f) {
  const size_t base = g_in_use.load();
  g_peak.store(base);
  const auto t0 = std::chrono::steady_clock::now();
  Measure m;
  m.bytes = f();
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.peak = g_peak.load() - base;
  return m;
}

void report(const char* writer, const Measure& m) {
  std::printf(
      "{\"writer\": \"%s\", \"bytes\": %zu, \"seconds\": %.3f, \"mb_per_s\": %.1f, "
      "\"peak_heap_mb\": %.1f}\n",
      writer, m.bytes, m.seconds, static_cast<double>(m.bytes) / m.seconds / 1e6,
      static_cast<double>(m.peak) / 1e6);
}

}  // namespace

void* operator new(size_t n) { return counted_new(n); }
void* operator new[](size_t n) { return counted_new(n); }
void operator delete(void* p) noexcept { counted_delete(p); }
void operator delete[](void* p) noexcept { counted_delete(p); }
void operator delete(void* p, size_t) noexcept { counted_delete(p); }
void operator delete[](void* p, size_t) noexcept { counted_delete(p); }

int main(int argc, char** argv) {
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 5000;
  const int64_t cols = argc > 2 ? std::atoll(argv[2]) : 1000;
  // A real problem for the settings line; the output is replaced by
  // rows x cols numbers with full 17-digit text, as softmax outputs have.
  const attn::Problem p = attn::build_problem(
      attn::read_document(R"({"X": [[1, 0], [0, 1]], "title": "bench"})", "bench.json"));
  attn::Result r;
  r.output = attn::Tensor<double>({rows, cols});
  std::mt19937_64 gen(1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t i = 0; i < r.output.size(); ++i) r.output.data()[i] = u(gen);
  attn::OutputOptions o;
  o.format = attn::Format::kJson;

  report("attn JsonWriter", measure([&] { return attn::format_result(p, r, o).size(); }));
  report("nlohmann dump", measure([&] {
           nlohmann::ordered_json doc;
           doc["title"] = p.title;
           doc["settings"] = attn::describe_run(p);
           nlohmann::ordered_json& out = doc["output"] = nlohmann::ordered_json::array();
           for (int64_t i = 0; i < rows; ++i) {
             const double* row = r.output.data() + i * cols;
             out.push_back(std::vector<double>(row, row + cols));
           }
           return doc.dump(2).size();
         }));
  return 0;
}
