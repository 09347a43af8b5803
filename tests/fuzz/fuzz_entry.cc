#include "fuzz_entry.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/check.h"
#include "attn/document.h"
#include "attn/emit_pytorch.h"
#include "attn/error.h"
#include "attn/limits.h"
#include "attn/matrix_file.h"
#include "attn/npy.h"
#include "attn/output.h"
#include "attn/problem.h"
#include "io/formats.h"

namespace attn::fuzz {

namespace {

// Problems above this many multiply-adds (roughly) are validated but not
// computed: the fuzzer is after wrong control flow, not big arithmetic, and
// a slow input would hide behind libFuzzer's timeout.
constexpr double kMaxWork = 2e5;

int64_t last_dim(const Tensor<double>& t) { return t.rank() > 0 ? t.shape().back() : 1; }

double work(const Problem& p) {
  const double width =
      static_cast<double>(std::max<int64_t>({p.d_q, p.d_k, p.d_v, p.d_out, last_dim(p.query_in),
                                             last_dim(p.key_in), last_dim(p.value_in), 1}));
  const double b = static_cast<double>(p.batch) * static_cast<double>(p.heads);
  const double lq = static_cast<double>(p.len_q), lk = static_cast<double>(p.len_k);
  return b * (lq + lk) * width * width + b * lq * lk * width;
}

// FNV-1a: picks the run options from the input itself, so every input always
// takes the same path (a reproducer replays the way it crashed).
uint64_t hash(std::string_view data) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : data) h = (h ^ c) * 1099511628211ull;
  return h;
}

// What `attn run` does after build_problem: the memory limits, then for a
// small problem compute, check against the expected numbers and format
// (--emit-pytorch instead, sometimes). Flags are stood in for by bits of
// the hash.
void compute_and_format(const Problem& p, uint64_t bits) {
  ComputeRequest req;
  req.dtype = (bits & 1) ? DType::kF32 : DType::kF64;
  req.average_heads = (bits & 2) != 0;
  req.weights = (bits & 4) != 0 || p.expected.has_value();
  req.scores = (bits & 8) != 0;
  LimitOptions limits;
  if (req.weights) limits.maps_flag = "--weights";
  check_limits(p, req, limits);
  if (work(p) > kMaxWork) return;
  if (bits & (1u << 13)) {
    emit_pytorch(p, "attn run fuzz", req.average_heads);
    return;
  }
  const Result r = compute(p, req);

  OutputOptions o;
  o.format = static_cast<Format>((bits >> 4) % 3);
  o.weights = req.weights;
  o.precision = static_cast<int>((bits >> 6) % 18);
  o.color = (bits & (1u << 11)) != 0;
  format_result(p, r, o);
  if (r.weights) {
    // --weights-out into each format attn writes a tensor in.
    std::vector<const TensorFormat*> written;
    for (const TensorFormat& f : tensor_formats()) {
      if (f.write) written.push_back(&f);
    }
    const TensorFormat& f = *written[(bits >> 14) % written.size()];
    format_matrix_file(*r.weights, r.dtype, std::string("w.") + f.extension);
  }
  if (p.expected) {
    const CheckReport rep = check_result(r, *p.expected);
    format_check_report(rep, p);
  }
}

// From a validated document on: build_problem, then compute when small.
void run_document(const InputDocument& doc, uint64_t bits) {
  const Problem p = build_problem(doc);
  compute_and_format(p, bits);
}

// A matrix file as the X of a self-attention run, as load_document in
// app/commands/run_inputs.cc builds it.
void run_matrix(std::string_view data, const std::string& path) {
  MatrixData m = parse_matrix(data, path, CellKind::kFinite);
  InputDocument doc;
  doc.source = path;
  doc.settings_place = path;
  doc.X = Input{std::move(m.values), path};
  if (!m.row_labels.empty()) doc.labels = LabelSet{m.row_labels, m.row_labels, true, path};
  run_document(doc, hash(data));
}

}  // namespace

void json_document(std::string_view data) {
  try {
    run_document(read_document(data, "fuzz.json"), hash(data));
  } catch (const Error&) {
    // Rejected with a message: the expected outcome for bad input.
  }
}

void csv_matrix(std::string_view data) {
  try {
    run_matrix(data, "fuzz.csv");
  } catch (const Error&) {
  }
}

void npy_matrix(std::string_view data) {
  try {
    run_matrix(data, "fuzz.npy");
  } catch (const Error&) {
  }
  try {  // the same bytes as a result archive's labels ('<U' strings)
    parse_npy_strings(data, "fuzz.npy");
  } catch (const Error&) {
  }
}

}  // namespace attn::fuzz
