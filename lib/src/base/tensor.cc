#include "attn/tensor.h"

namespace attn {

std::string shape_string(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (int64_t d : shape) {
    s += '[';
    s += std::to_string(d);
    s += ']';
  }
  return s;
}

int64_t shape_size(const Shape& shape) {
  // A zero anywhere makes the size 0, however large the other axes are:
  // readers accept [2^32][2^32][0] (it holds no bytes), whose running
  // product would overflow before the zero is reached.
  for (int64_t d : shape) {
    if (d == 0) return 0;
  }
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace attn
