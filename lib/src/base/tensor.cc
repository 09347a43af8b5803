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
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace attn
