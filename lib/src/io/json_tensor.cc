#include "attn/json_tensor.h"

#include <cmath>

#include "attn/error.h"
#include "base/number_text.h"

namespace attn {

std::string place_path(const std::string& place, const std::string& path) {
  if (place.empty()) return path;
  if (path.empty()) return place;
  return place + ": " + path;
}

namespace {

class Converter {
 public:
  Converter(const std::string& place, CellKind kind) : place_(place), kind_(kind) {}

  Tensor<double> run(const json::Value& v, const std::string& path, int max_rank) {
    discover_shape(v);
    if (static_cast<int>(shape_.size()) > max_rank) {
      throw_input(place_path(place_, path), "array of rank " + std::to_string(shape_.size()) +
                                                " (shape " + shape_string(shape_) +
                                                "); at most rank " + std::to_string(max_rank) +
                                                " is accepted here");
    }
    // Reserve what the input holds, not the product of the shape: that is
    // read off the first element at each level and may be far larger than
    // the input ([[[1, 2, ...]], [], [], ...]) until collect() refutes it.
    out_.reserve(static_cast<size_t>(cells(v)));
    collect(v, path, 0);
    return Tensor<double>(shape_, std::move(out_));
  }

 private:
  // The shape is read off the first element at each level; collect() then
  // checks every other element against it.
  void discover_shape(const json::Value& v) {
    const json::Value* cur = &v;
    json::Value tmp;
    while (cur->is_array()) {
      if (cur->packed()) {
        // A packed block carries the shape of everything below it.
        shape_.insert(shape_.end(), cur->dims().begin(), cur->dims().end());
        break;
      }
      shape_.push_back(static_cast<int64_t>(cur->size()));
      if (cur->size() == 0) break;
      cur = &cur->items()[0];
      if (shape_.size() > 64) break;
    }
  }

  // The number of non-array values in v.
  static int64_t cells(const json::Value& v) {
    if (!v.is_array()) return 1;
    if (v.packed()) return static_cast<int64_t>(v.size());
    int64_t n = 0;
    for (const json::Value& e : v.items()) n += cells(e);
    return n;
  }

  std::string child(const std::string& path, size_t i) const {
    return path + "[" + std::to_string(i) + "]";
  }

  void collect(const json::Value& v, const std::string& path, size_t depth) {
    if (depth == shape_.size()) {
      out_.push_back(cell(v, path));
      return;
    }
    if (!v.is_array()) {
      throw_input(place_path(place_, path),
                  "expected an array of " + std::to_string(shape_[depth]) + ", got " +
                      json::describe(v) + " (the first element at this level is an array)");
    }
    if (static_cast<int64_t>(v.size()) != shape_[depth]) {
      std::string first = path;
      // Name the sibling the shape was taken from: same path with index 0.
      size_t open = first.rfind('[');
      if (open != std::string::npos) first = first.substr(0, open) + "[0]";
      throw_input(place_path(place_, path),
                  "has " + std::to_string(v.size()) + (v.size() == 1 ? " element" : " elements") +
                      " where " + first + " has " + std::to_string(shape_[depth]) +
                      " (ragged array; expected shape " + shape_string(shape_) + ")");
    }
    if (v.packed() && v.dims().size() > 1) {
      // Rows of one shape: copied straight when that is the expected shape,
      // else walked element by element to name the first difference.
      if (std::equal(v.dims().begin(), v.dims().end(),
                     shape_.begin() + static_cast<std::ptrdiff_t>(depth), shape_.end())) {
        for (size_t i = 0; i < v.numbers().size(); ++i) {
          const double x = v.numbers()[i];
          out_.push_back(plain(x) ? x : number_cell(x, flat_path(path, v.dims(), i)));
        }
        return;
      }
      for (size_t i = 0; i < v.size(); ++i) collect(v.element(i), child(path, i), depth + 1);
      return;
    }
    if (v.packed()) {
      if (depth + 1 != shape_.size()) {
        // Numbers where arrays were expected.
        if (v.size() > 0) {
          throw_input(place_path(place_, child(path, 0)),
                      "expected an array, got " + format_shortest(v.numbers()[0]) +
                          " (expected shape " + shape_string(shape_) + ")");
        }
        return;
      }
      for (size_t i = 0; i < v.numbers().size(); ++i) {
        const double x = v.numbers()[i];
        out_.push_back(plain(x) ? x : number_cell(x, child(path, i)));
      }
      return;
    }
    for (size_t i = 0; i < v.items().size(); ++i) collect(v.items()[i], child(path, i), depth + 1);
  }

  // Whether x is a cell as it stands, with no check that needs its path.
  bool plain(double x) const {
    return std::isfinite(x) && (kind_ == CellKind::kFinite || kind_ == CellKind::kExtended);
  }

  // The path of flat element i of a packed block of shape dims at path.
  static std::string flat_path(const std::string& path, const std::vector<int64_t>& dims,
                               size_t i) {
    std::string suffix;
    for (size_t d = dims.size(); d-- > 0;) {
      const auto n = static_cast<size_t>(dims[d]);
      suffix.insert(0, "[" + std::to_string(i % n) + "]");
      i /= n;
    }
    return path + suffix;
  }

  // A number of a packed array at path.
  double number_cell(double x, const std::string& path) {
    if (kind_ == CellKind::kFinite || kind_ == CellKind::kExtended) {
      if (!std::isfinite(x)) out_of_range(x, path);
      return x;
    }
    return checked_special(x, path);
  }

  [[noreturn]] void out_of_range(double x, const std::string& path) {
    throw_input(place_path(place_, path),
                "number out of the double range (it would be " + format_shortest(x) + ")");
  }

  double checked_special(double x, const std::string& path) {
    if (kind_ == CellKind::kBool) {
      if (x == 0.0 || x == 1.0) return x;
      throw_input(place_path(place_, path),
                  "mask cells must be true/false or 0/1, got " + format_shortest(x));
    }
    // kCount
    if (x >= 0 && x == std::floor(x) && x <= static_cast<double>(kMaxCount)) return x;
    throw_input(place_path(place_, path),
                "expected a non-negative integer, got " + format_shortest(x));
  }

  double cell(const json::Value& v, const std::string& path) {
    switch (kind_) {
      case CellKind::kFinite:
        if (v.is_number()) {
          if (!std::isfinite(v.as_number())) out_of_range(v.as_number(), path);
          return v.as_number();
        }
        if (v.is_string()) {
          double x = 0;
          if (parse_number_word(v.as_string(), &x) && !std::isfinite(x)) {
            throw_input(place_path(place_, path),
                        "non-finite value " + json::describe(v) + " is not allowed here");
          }
        }
        break;
      case CellKind::kExtended:
        if (v.is_number()) {
          if (!std::isfinite(v.as_number())) out_of_range(v.as_number(), path);
          return v.as_number();
        }
        if (v.is_string()) {
          double x = 0;
          if (parse_number_word(v.as_string(), &x) && !std::isfinite(x)) return x;
        }
        break;
      case CellKind::kBool:
        if (v.is_bool()) return v.as_bool() ? 1.0 : 0.0;
        if (v.is_number()) return checked_special(v.as_number(), path);
        throw_input(place_path(place_, path),
                    "mask cells must be true/false or 0/1, got " + json::describe(v));
      case CellKind::kCount:
        if (v.is_number()) return checked_special(v.as_number(), path);
        throw_input(place_path(place_, path),
                    "expected a non-negative integer, got " + json::describe(v));
    }
    if (v.is_array()) {
      throw_input(place_path(place_, path),
                  "expected a number, got an array (expected shape " + shape_string(shape_) + ")");
    }
    if (shape_.empty()) {
      throw_input(place_path(place_, path),
                  "expected an array of numbers, got " + json::describe(v));
    }
    double x = 0;
    if (v.is_string() && parse_number_word(v.as_string(), &x)) {
      throw_input(place_path(place_, path), "expected a number, got " + json::describe(v) +
                                                " (write numbers without quotes)");
    }
    throw_input(place_path(place_, path), "expected a number, got " + json::describe(v));
  }

  const std::string& place_;
  CellKind kind_;
  Shape shape_;
  Values<double> out_;
};

}  // namespace

Tensor<double> json_to_tensor(const json::Value& v, const std::string& place,
                              const std::string& path, CellKind kind, int max_rank) {
  Converter c(place, kind);
  return c.run(v, path, max_rank);
}

}  // namespace attn
