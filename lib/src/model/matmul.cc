#include "model/matmul.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "attn/error.h"
#include "kernel/parallel.h"

// OpenBLAS's own entry point (the generic cblas.h does not declare it).
extern "C" void openblas_set_num_threads(int threads);

namespace attn::detail {

namespace {

template <class T>
using MatrixT = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void gemm(bool trans_b, int n, int m, int k, const float* a, const float* b, int ldb, float* c,
          int ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, n, m, k, 1.0f, a, k,
              b, ldb, 0.0f, c, ldc);
}

void gemm(bool trans_b, int n, int m, int k, const double* a, const double* b, int ldb, double* c,
          int ldc) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, n, m, k, 1.0, a, k,
              b, ldb, 0.0, c, ldc);
}

// Cells [c0, c1) of rows [r0, r1) of the row-major [..][ld] array w, as T,
// packed into dst; whether every one is finite.
template <class T>
bool widen(const BinaryArray& w, int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t ld,
           T* dst) {
  const int64_t width = c1 - c0, size = element_size(w.type);
  bool finite = true;
  for (int64_t r = r0; r < r1; ++r) {
    const unsigned char* src = w.data + (r * ld + c0) * size;
    T* out = dst + (r - r0) * width;
    switch (w.type) {
      case ElementType::kBF16: {
        // A bfloat16 is the top half of a float32: exact. For a float32
        // product the bits go straight to the buffer BLAS reads (this code
        // never reads them back as floats); a cell is not finite when its
        // exponent bits are all ones.
        uint16_t special = 0;
        if constexpr (std::is_same_v<T, float>) {
          uint32_t* out_bits = reinterpret_cast<uint32_t*>(out);
          for (int64_t i = 0; i < width; ++i) {
            uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            special |= static_cast<uint16_t>((h & 0x7f80) == 0x7f80);
            out_bits[i] = static_cast<uint32_t>(h) << 16;
          }
        } else {
          for (int64_t i = 0; i < width; ++i) {
            uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            special |= static_cast<uint16_t>((h & 0x7f80) == 0x7f80);
            const uint32_t bits = static_cast<uint32_t>(h) << 16;
            float f;
            std::memcpy(&f, &bits, 4);
            out[i] = f;
          }
        }
        finite &= special == 0;
        continue;
      }
      case ElementType::kF32:
        for (int64_t i = 0; i < width; ++i) {
          float f;
          std::memcpy(&f, src + 4 * i, 4);
          out[i] = static_cast<T>(f);
        }
        break;
      case ElementType::kF64:
        for (int64_t i = 0; i < width; ++i) {
          double d;
          std::memcpy(&d, src + 8 * i, 8);
          out[i] = static_cast<T>(d);
        }
        break;
      default:
        for (int64_t i = 0; i < width; ++i)
          out[i] = static_cast<T>(decode_cell(src + i * size, w.type));
        break;
    }
    for (int64_t i = 0; i < width; ++i) finite &= std::isfinite(out[i]);
  }
  return finite;
}

void one_blas_thread() {
  static const bool once = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)once;
}

template <class T>
MatrixR multiply_as(const MatrixR& x, const BinaryArray& w, bool transposed, int threads,
                    const std::string& name) {
  if (w.shape.size() != 2) throw_internal("multiply: " + name + " is not a matrix");
  const int64_t rows = w.shape[0], cols = w.shape[1];
  const int64_t out = transposed ? rows : cols, in = transposed ? cols : rows;
  const int64_t n = x.rows();
  if (in != x.cols()) {
    throw_internal("multiply: " + std::to_string(x.cols()) + " columns against " + name + " of " +
                   std::to_string(in) + " inputs");
  }
  one_blas_thread();
  const int workers = threads > 0 ? threads : kernel::hardware_threads();
  MatrixT<T> xt = x.template cast<T>();
  MatrixT<T> y(n, out);
  // Blocks of outputs, two per thread: each block packs x again in the
  // GEMM, and two balance the threads well enough.
  const int64_t block =
      std::max<int64_t>(16, (out + 2 * workers - 1) / (2 * workers) + 15) / 16 * 16;
  const int64_t blocks = (out + block - 1) / block;
  std::vector<char> bad(static_cast<size_t>(blocks), 0);
  kernel::parallel_for(blocks, workers, [&](int64_t b, int) {
    const int64_t o0 = b * block, o1 = std::min(out, o0 + block), m = o1 - o0;
    // Not zeroed: widen() writes every cell.
    const std::unique_ptr<T[]> part(new T[static_cast<size_t>(m * in)]);
    const bool finite = transposed ? widen(w, o0, o1, 0, in, cols, part.get())
                                   : widen(w, 0, in, o0, o1, cols, part.get());
    if (!finite) {
      bad[static_cast<size_t>(b)] = 1;
      return;
    }
    gemm(transposed, static_cast<int>(n), static_cast<int>(m), static_cast<int>(in), xt.data(),
         part.get(), static_cast<int>(transposed ? in : m), y.data() + o0, static_cast<int>(out));
  });
  if (std::find(bad.begin(), bad.end(), 1) != bad.end()) {
    for (int64_t i = 0; i < w.size(); ++i) {
      if (!std::isfinite(w.at(i))) {
        throw_input(name, "non-finite value " + std::to_string(w.at(i)) + " at cell " +
                              std::to_string(i) + " (model weights must be finite)");
      }
    }
    // Finite in the file but not in T: a float64 weight past float32's range.
    throw_input(name, "holds a weight outside the float32 range; run it with --dtype f64");
  }
  if constexpr (std::is_same_v<T, double>) {
    return y;
  } else {
    return y.template cast<double>();
  }
}

}  // namespace

MatrixR multiply(const MatrixR& x, const BinaryArray& w, bool transposed, DType dtype, int threads,
                 const std::string& name) {
  return dtype == DType::kF32 ? multiply_as<float>(x, w, transposed, threads, name)
                              : multiply_as<double>(x, w, transposed, threads, name);
}

MatrixR multiply(const MatrixR& x, const Tensor<double>& w, bool transposed, DType dtype,
                 int threads, const std::string& name) {
  BinaryArray view;
  view.type = ElementType::kF64;
  view.shape = w.shape();
  view.data = reinterpret_cast<const unsigned char*>(w.data());
  return multiply(x, view, transposed, dtype, threads, name);
}

}  // namespace attn::detail
