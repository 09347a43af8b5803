// Checking a result against the numbers a document expects (`expected`, or
// a file given with --expect): each value passes when
//   |got - expected| <= tolerance * max(1, |expected|)
// (absolute near zero, relative for large values), or with --rtol/--atol
// (and by default when the reference is stored in float32 or the run is in
// float32) NumPy's allclose rule |got - expected| <= atol + rtol·|expected|;
// NaN matches NaN and an infinity matches the same infinity.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/document.h"
#include "attn/problem.h"

namespace attn {

constexpr double kDefaultTolerance = 1e-9;
// torch.testing.assert_close's defaults by dtype: a reference stored in
// float32, float16 or bfloat16 (or a float32 run) is checked with these
// unless a tolerance is given.
constexpr double kFloat32Rtol = 1.3e-6, kFloat32Atol = 1e-5;
constexpr double kFloat16Rtol = 1e-3, kFloat16Atol = 1e-5;
constexpr double kBFloat16Rtol = 1.6e-2, kBFloat16Atol = 1e-5;

struct CheckItem {
  std::string tensor;  // "output" or "weights"
  Shape index;         // position in the tensor
  double expected = 0, got = 0;
  bool ok = true;
};

struct CheckReport {
  std::vector<CheckItem> items;  // every compared value
  int64_t mismatches = 0;
  double tolerance = kDefaultTolerance;
  // NumPy's allclose rule instead (--rtol/--atol, or a float32 side).
  bool allclose = false;
  double rtol = 0, atol = 0;
  bool passed() const { return mismatches == 0; }
};

// Compares r with e. Shape mismatches are input errors naming both shapes.
// A result without weights cannot be checked against expected weights: the
// caller must have computed them.
CheckReport check_result(const Result& r, const Expected& e);

// When a check fails, the likely cause: a mistake people make writing
// attention by hand (or a reading of the formula) that, planted into this
// problem, reproduces the expected numbers. Tried: the scale after the
// softmax (where the self-attention blog post puts it), no scale, the scale
// twice, the causal mask missing, extra, aligned bottom-right or on the
// wrong side, the mask's polarity flipped or transposed, the softmax over
// the queries, heads split in the wrong order, the other RoPE layout, no
// RoPE, the sliding window one key too wide or narrow, missing or
// forgotten, RoPE's query positions left at 0 in a decode step (or
// missing here), key/value heads tiled instead of repeated per group.
struct CheckAlternative {
  std::string name;         // "causal mask on the wrong side"
  std::string setting;      // the flag that reproduces the numbers ("--scale-at output"), or empty
  std::string explanation;  // one paragraph for people
  Result result;            // the result under that reading
};
// Tried on problems of at most this many score cells (batch · heads ·
// len_q · len_k): each mistake is a rerun.
constexpr int64_t kDiagnoseCells = int64_t{1} << 24;
std::optional<CheckAlternative> explain_mismatch(const Problem& p, const Expected& e, DType dtype);

// The report as a table: every value when there are few (only the
// mismatches with mismatches_only, as --quiet asks), otherwise the
// mismatches (at most 20); then a summary line. No rows to show, no table.
std::string format_check_report(const CheckReport& report, const Problem& p,
                                bool mismatches_only = false);

}  // namespace attn
