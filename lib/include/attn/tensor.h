// Tensors: a dense row-major array of rank 0..4 with its shape. This is the
// currency between readers, the engine and writers; the engine maps slices of
// it onto Eigen matrices for the arithmetic.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace attn {

using Shape = std::vector<int64_t>;

// std::allocator, except that an element made without a value is left
// default-initialized: resize(n) on a vector of doubles reserves n values
// without writing n zeros first. The n×n weights of a long input are
// written whole by the kernel; zeroing them beforehand cost 12% of a
// 2048-token run that keeps them.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}

  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// A tensor's elements. Careful: Values<double>(n) and resize(n) leave the
// new elements unset; give a value, Values<double>(n, 0.0), for zeros.
template <class T>
using Values = std::vector<T, DefaultInitAllocator<T>>;

// "[2][3][4]" for {2, 3, 4}; "scalar" for {}.
std::string shape_string(const Shape& shape);

// Product of the dimensions (1 for a scalar; 0 when any is 0). Readers
// bound the product of the non-zero dimensions before a shape gets here.
int64_t shape_size(const Shape& shape);

template <class T>
class Tensor {
 public:
  Tensor() = default;
  // Every element set to `fill` (zero unless given).
  explicit Tensor(Shape shape, T fill = T())
      : shape_(std::move(shape)), data_(static_cast<size_t>(shape_size(shape_)), fill) {}
  Tensor(Shape shape, Values<T> data) : shape_(std::move(shape)), data_(std::move(data)) {}

  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t size() const { return static_cast<int64_t>(data_.size()); }
  bool empty() const { return data_.empty() && shape_.empty(); }

  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }
  Values<T>& values() { return data_; }
  const Values<T>& values() const { return data_; }
  T& operator[](int64_t i) { return data_[static_cast<size_t>(i)]; }
  const T& operator[](int64_t i) const { return data_[static_cast<size_t>(i)]; }

  // Reinterprets the same elements under another shape of equal size.
  void reshape(Shape shape) { shape_ = std::move(shape); }

 private:
  Shape shape_;
  Values<T> data_;
};

// Where a tensor of a run was read from: the file as the run opened it,
// the tensor within it, how its text was laid out, and what attn did to it
// after reading. --emit-pytorch loads a large tensor from there instead of
// writing out its numbers. Readers fill it in; build_problem keeps it per
// tensor of the Problem.
// The tensor file formats attn reads, in the order of the format registry
// (the toolkit's attn/matrix_file.h reads and writes them).
enum class MatrixFormat { kJson, kCsv, kNpy, kSafetensors, kNpz, kGguf };

struct TensorOrigin {
  MatrixFormat format = MatrixFormat::kNpy;
  // As the run opened it: relative to the directory attn ran in, or
  // absolute. Only regular files have an origin (not stdin or a pipe).
  std::string path;
  std::string tensor;  // the .npz member, .safetensors or .gguf tensor; "" otherwise
  // CSV: the delimiter (' ': spaces and tabs), and whether a header row and
  // a label column stand before the numbers.
  char delimiter = ',';
  bool header = false, label_column = false;
  // What attn did after reading, in this order: kept columns [first_column,
  // first_column + columns) of the last axis (GPT-2's c_attn holds W_q, W_k
  // and W_v side by side; -1: every column), then added `add` to every cell
  // (Gemma 3's norm weights are 1 + w).
  int64_t first_column = 0, columns = -1;
  double add = 0;
  // The shape after those steps, the tensor's shape in the document
  // (build_problem sets it).
  Shape shape;
};

}  // namespace attn
