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
#include "attn/problem.h"

namespace attn {

// Default of --max-input-bytes: 1 GiB, twice the largest .npy input the
// default --max-elements admits (2^26 float64 values, 512 MiB), and room
// for 2^26 numbers as text of up to 16 bytes each ("0.12345678901, ").
// Text of that many numbers at full precision (17 digits) is larger:
// such runs raise both limits. A runaway stream (yes | attn run -) stops
// after 1 GiB instead of filling memory.
constexpr int64_t kDefaultMaxInputBytes = int64_t{1} << 30;

// Default of --max-elements: 2^26 elements, 512 MiB as float64. Readers
// check every tensor against it from the file's header, before a cell is
// decoded or memory is allocated for it; the run then checks each tensor
// it will make (check_limits, below). A run
// that keeps its weights peaks at about 40 bytes per weight (the weights,
// the mask flags, the output text: 675 MB for 4096 x 4096 as JSON), so
// 2^26 keeps the largest such run near 2.7 GB; an output-only run holds
// far less.
constexpr int64_t kDefaultMaxElements = int64_t{1} << 26;

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
