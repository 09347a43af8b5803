// Tensors: a dense row-major array of rank 0..4 with its shape. This is the
// currency between readers, the engine and writers; the engine maps slices of
// it onto Eigen matrices for the arithmetic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

using Shape = std::vector<int64_t>;

// "[2][3][4]" for {2, 3, 4}; "scalar" for {}.
std::string shape_string(const Shape& shape);

// Product of the dimensions (1 for a scalar; 0 when any is 0). Readers
// bound the product of the non-zero dimensions before a shape gets here.
int64_t shape_size(const Shape& shape);

template <class T>
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Shape shape, T fill = T())
      : shape_(std::move(shape)), data_(static_cast<size_t>(shape_size(shape_)), fill) {}
  Tensor(Shape shape, std::vector<T> data) : shape_(std::move(shape)), data_(std::move(data)) {}

  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t size() const { return static_cast<int64_t>(data_.size()); }
  bool empty() const { return data_.empty() && shape_.empty(); }

  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }
  std::vector<T>& values() { return data_; }
  const std::vector<T>& values() const { return data_; }
  T& operator[](int64_t i) { return data_[static_cast<size_t>(i)]; }
  const T& operator[](int64_t i) const { return data_[static_cast<size_t>(i)]; }

  // Reinterprets the same elements under another shape of equal size.
  void reshape(Shape shape) { shape_ = std::move(shape); }

 private:
  Shape shape_;
  std::vector<T> data_;
};

}  // namespace attn
