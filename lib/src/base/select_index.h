// One index of one axis of a tensor, that axis removed: the head of a
// result's weights (--head), the layer of a stack (attn diff --layer).
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <algorithm>

#include "attn/tensor.h"

namespace attn::detail {

// The part of t at `index` along `axis`: NumPy's t[:, ..., index] with
// `axis` colons before it. Both must be in range.
template <class T>
Tensor<T> select_index(const Tensor<T>& t, int axis, int64_t index) {
  Shape s = t.shape();
  const auto a = static_cast<size_t>(axis);
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < a; ++i) outer *= s[i];
  for (size_t i = a + 1; i < s.size(); ++i) inner *= s[i];
  const int64_t n = s[a];
  s.erase(s.begin() + axis);
  Values<T> v(static_cast<size_t>(outer * inner));
  for (int64_t o = 0; o < outer; ++o) {
    const T* from = t.data() + (o * n + index) * inner;
    std::copy(from, from + inner, v.data() + o * inner);
  }
  return Tensor<T>(std::move(s), std::move(v));
}

}  // namespace attn::detail
