#include "io/cells.h"

#include <cmath>

#include "attn/error.h"
#include "base/number_text.h"

namespace attn::detail {

std::string cell_place(const std::string& name, const Shape& shape, int64_t flat) {
  std::string idx;
  for (size_t i = shape.size(); i-- > 0;) {
    idx = "[" + std::to_string(flat % shape[i]) + "]" + idx;
    flat /= shape[i];
  }
  return name + idx;
}

void check_cells(const Values<double>& v, const Shape& shape, const std::string& name,
                 CellKind kind, bool single_precision) {
  auto text = [&](double x) {
    return single_precision ? format_shortest(static_cast<float>(x)) : format_shortest(x);
  };
  for (size_t i = 0; i < v.size(); ++i) {
    const double x = v[i];
    switch (kind) {
      case CellKind::kFinite:
        if (!std::isfinite(x)) {
          throw_input(cell_place(name, shape, static_cast<int64_t>(i)),
                      "non-finite value " + text(x) + " is not allowed here");
        }
        break;
      case CellKind::kExtended:
        break;
      case CellKind::kBool:
        if (x != 0.0 && x != 1.0) {
          throw_input(cell_place(name, shape, static_cast<int64_t>(i)),
                      "mask cells must be true/false or 0/1, got " + text(x));
        }
        break;
      case CellKind::kCount:
        if (!(x >= 0 && x == std::floor(x) && x <= static_cast<double>(kMaxCount))) {
          throw_input(cell_place(name, shape, static_cast<int64_t>(i)),
                      "expected a non-negative integer, got " + text(x));
        }
        break;
    }
  }
}

void check_input_bytes(const std::string& name, uint64_t bytes, int64_t max_bytes) {
  if (bytes <= static_cast<uint64_t>(max_bytes)) return;
  throw_input(name, std::to_string(bytes) + " bytes, more than --max-input-bytes " +
                        std::to_string(max_bytes) + "; raise --max-input-bytes");
}

void check_element_count(const Shape& shape, int64_t count, const std::string& name,
                         int64_t max_elements) {
  if (count <= max_elements) return;
  throw_input(name, "shape " + shape_string(shape) + " holds " + std::to_string(count) +
                        " elements, more than --max-elements " + std::to_string(max_elements) +
                        "; raise --max-elements");
}

}  // namespace attn::detail
