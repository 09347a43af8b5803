// The attention engine: computes a Problem (projections, per-head scores,
// scaling, bias and masks, softmax, dropout, weighted sum, head
// concatenation, output projection) in float64 or float32, and keeps the
// weights and scores only when asked.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "attn/observer.h"
#include "attn/options.h"
#include "attn/problem.h"
#include "attn/progress.h"
#include "attn/tensor.h"

namespace attn {

struct ComputeRequest {
  bool weights = false;        // keep the softmax weights (before dropout)
  bool scores = false;         // keep the scores entering the softmax (scaled, biased)
  bool average_heads = false;  // report the mean over heads instead of each head
  DType dtype = DType::kF64;
  int threads = 0;  // 0: every hardware thread
  // Use the step-by-step reference computation even where the fast kernels
  // apply (tests compare the two; traces always use it).
  bool reference = false;
  // Called with (done, total) units of work as they complete; may be empty.
  ProgressFn progress;
  // Refuse problems whose scores or outputs overflow the dtype's range (an
  // input error naming the first one) rather than return uniform/NaN rows.
  bool check_range = true;
};

// A query row whose every key was masked (its handling follows fully_masked).
struct FullyMaskedRow {
  int64_t batch = 0, head = 0, query = 0;
};

struct Result {
  // Shaped as docs/spec.md says: the rank of the query source; 4D input gives
  // [batch][heads][len_q][d_v].
  Tensor<double> output;
  // [len_q][len_k], with a leading head axis when heads > 1 (unless
  // averaged) and a leading batch axis when the input is batched.
  std::optional<Tensor<double>> weights;
  std::optional<Tensor<double>> scores;   // same shape as weights
  std::optional<Tensor<uint8_t>> masked;  // same shape; 1 = masked cell
  std::vector<FullyMaskedRow> fully_masked_rows;
  DType dtype = DType::kF64;
};

// How compute() will compute a problem: the one planning decision, used
// by compute() itself and by the memory limits (attn/limits.h).
enum class ComputePath {
  kReference,    // step by step, a whole score matrix per (batch, head) at a
                 // time: every variant, traces, and what the kernels skip
  kWeightsKept,  // the fast kernels, keeping the weights or scores
  kStreaming,    // the fast kernels, output only: fixed-size tiles
};
// `observed`: an Observer (a trace) will watch the steps.
ComputePath plan_compute(const Problem& p, const ComputeRequest& request, bool observed);

// Computes p. Throws attn::Error (kInput) when fully_masked is "error" and a
// row has every key masked, and when a score or an output is not finite.
//
// Preconditions: p is what build_problem() returned (compute() relies on
// its checks: shapes that agree, masks broadcast to rank 4, parameters in
// math layout) and is only read; request.threads >= 0. The memory it will
// take is bounded by attn/limits.h's estimates, which a caller checks first
// when the problem came from untrusted input (compute() itself allocates
// what the problem needs).
//
// Threads: compute() may be called from several threads at once, on the
// same or different problems. Each call uses up to request.threads threads
// (the calling one included): the first call takes the library's kept pool
// of threads, a call made while another holds it starts threads of its own.
// Results do not depend on the number of threads. An observer is called on
// the calling thread only (an observed run takes the single-threaded
// reference path), in the order of the steps.
Result compute(const Problem& p, const ComputeRequest& request, Observer* observer = nullptr);

// The shape the weights of p are reported in (see Result::weights).
Shape weights_shape(const Problem& p, bool average_heads);

}  // namespace attn
