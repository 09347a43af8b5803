// Overflow guard of the engine: refuses problems whose scores or outputs
// leave the floating-point range of the run's dtype, instead of letting the
// softmax turn them into uniform or NaN rows. See score_range.cc.
#pragma once

#include <limits>

#include "attn/attention.h"
#include "attn/problem.h"

namespace attn::detail {

// Bounds on the largest row norms of the projected queries and keys, the
// heads the kernels take (before RoPE, which rotates them, and cosine
// scaling, which makes them 1); inf where not known.
struct HeadNorms {
  double q = std::numeric_limits<double>::infinity();
  double k = std::numeric_limits<double>::infinity();
};

// Throws attn::Error (kInput) naming the first score that is not finite, or
// an input that float32 cannot hold. Cheap unless the bound reaches the range.
// Returns the head norms its bound on the scores was made of when that
// bound cleared the problem, unknown (inf) otherwise.
HeadNorms check_score_range(const Problem& p, const ComputeRequest& request);

// Throws attn::Error (kInput) when an output element is infinite (or NaN,
// unless fully_masked is "nan").
void check_output_range(const Problem& p, const Result& r);

}  // namespace attn::detail
