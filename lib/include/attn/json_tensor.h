// JSON values to tensors: checks that a nested array is rectangular and that
// every cell has the expected kind, and reports the JSON path of the first
// bad cell ("X[2][1]: expected a number, got \"abc\"").
#pragma once

#include <cstdint>
#include <string>

#include "attn/json.h"
#include "attn/tensor.h"

namespace attn {

// The largest count (a valid length, a seed) a JSON number or a flag may
// give: 2^53, past which doubles no longer hold every integer.
constexpr uint64_t kMaxCount = uint64_t{1} << 53;

enum class CellKind {
  kFinite,    // numbers only; "nan"/"inf" strings are rejected as non-finite
  kExtended,  // numbers or the strings "inf", "-inf", "nan" (any case)
  kBool,      // true/false, or the numbers 0/1 (also 0.0/1.0)
  kCount,     // non-negative integers
};

// Converts v (a number, or a nested array of rank <= max_rank) to a tensor.
// `place` prefixes messages ("in.json"), `path` is the JSON path ("X").
Tensor<double> json_to_tensor(const json::Value& v, const std::string& place,
                              const std::string& path, CellKind kind, int max_rank = 4);

// "in.json: X[2]" from a place and a path (either may be empty).
std::string place_path(const std::string& place, const std::string& path);

}  // namespace attn
