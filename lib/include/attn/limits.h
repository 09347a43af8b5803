// Limits: the sizes a run will allocate, checked before anything is
// allocated. A few bytes of input can imply gigabytes (a 65536-row CSV run
// with --weights, an X of 1000 rows and a W_q of width 10^6), so the sizes
// are worked out from the Problem and compared with one number,
// --max-elements: the element count of the largest tensor the run may
// materialize. The message says which tensor, its factors, and what to do.
#pragma once

#include <cstdint>
#include <string>

#include "attn/attention.h"
#include "attn/file_io.h"
#include "attn/problem.h"

namespace attn {

// kDefaultMaxElements, the default of --max-elements, is in attn/file_io.h:
// every reader checks a tensor against it before decoding its cells.

// What a (batch, head) pair costs besides its numbers: the engine's
// per-head matrices, task, packed keys and bookkeeping, about 670 bytes
// measured (1,000,000 heads of width 1 over 8 rows), counted as 96 elements
// of 8 bytes. Without it a 400 MB input split into 6,400,000 heads took
// 8.8 GB and 35 s.
constexpr int64_t kHeadElements = 96;

// What one recorded trace step costs besides its numbers and labels: its
// strings, vectors and the lines written for it, about 500-700 bytes
// measured (262,144 heads of width 1), counted as 64 elements.
constexpr int64_t kTraceStepElements = 64;

struct LimitOptions {
  int64_t max_elements = kDefaultMaxElements;
  bool trace = false;       // an observer records every step (full score matrices)
  bool similarity = false;  // --similarity: row dot products of the input and output
  int64_t raster_side = 0;  // longest side of a heatmap image in pixels; 0 for none
  // The flag that asked for weights or scores, named in the advice
  // ("--weights", "--heatmap"); "" when none did.
  std::string maps_flag;
};

// True when computing p for req needs the full len_q x len_k score matrix
// of a (batch, head): whenever plan_compute() does not choose the streaming
// kernel, whose tiles have a fixed size whatever the lengths.
bool needs_full_scores(const Problem& p, const ComputeRequest& req, bool trace);

// An upper bound of what a trace of p records: its steps, and the numbers,
// mask flags and labels they hold, in elements (steps not included).
struct TraceSize {
  int64_t steps = 0;
  int64_t elements = 0;
};
TraceSize trace_size(const Problem& p);

// Throws attn::Error (kInput) naming the first tensor the run would
// materialize with more than o.max_elements elements, with its factors
// and how to raise the limit or what to drop.
void check_limits(const Problem& p, const ComputeRequest& req, const LimitOptions& o);

}  // namespace attn
