// Which rows or columns of a large matrix a human-readable view shows.
#pragma once

#include <cstdint>
#include <vector>

namespace attn::detail {

// All of 0..n-1 when n <= max; otherwise the first max-2, a gap (-1) and
// the last one, so the view keeps both ends.
inline std::vector<int64_t> shown_indices(int64_t n, int max) {
  std::vector<int64_t> idx;
  if (n <= max) {
    for (int64_t i = 0; i < n; ++i) idx.push_back(i);
    return idx;
  }
  for (int64_t i = 0; i < max - 2; ++i) idx.push_back(i);
  idx.push_back(-1);
  idx.push_back(n - 1);
  return idx;
}

}  // namespace attn::detail
