#include "model/matmul.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "attn/error.h"
#include "kernel/linear_kernel.h"
#include "kernel/parallel.h"

// OpenBLAS's own entry point (the generic cblas.h does not declare it).
extern "C" void openblas_set_num_threads(int threads);

namespace attn::detail {

namespace {

template <class T>
using MatrixT = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void gemm(bool trans_b, int n, int m, int k, const double* a, const double* b, int ldb, double* c,
          int ldc) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, n, m, k, 1.0, a, k,
              b, ldb, 0.0, c, ldc);
}

// Cells [c0, c1) of rows [r0, r1) of the row-major [..][ld] array w, as
// doubles (exact for every cell type), packed into dst; whether every one
// is finite.
bool widen(const BinaryArray& w, int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t ld,
           double* dst) {
  const int64_t width = c1 - c0, size = element_size(w.type);
  bool finite = true;
  for (int64_t r = r0; r < r1; ++r) {
    double* out = dst + (r - r0) * width;
    decode_cells(w.data + (r * ld + c0) * size, w.type, width, out);
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

// The error for a weight widen() or the float32 kernel found not finite.
[[noreturn]] void not_finite(const BinaryArray& w, const std::string& name) {
  for (int64_t i = 0; i < w.size(); ++i) {
    if (!std::isfinite(w.at(i))) {
      throw_input(name, "non-finite value " + std::to_string(w.at(i)) + " at cell " +
                            std::to_string(i) + " (model weights must be finite)");
    }
  }
  // Finite in the file but not in float32: a float64 weight past its range.
  throw_input(name, "holds a weight outside the float32 range; run it with --dtype f64");
}

void check_inputs(const MatrixR& x, const BinaryArray& w, bool transposed,
                  const std::string& name) {
  if (w.shape.size() != 2) throw_internal("multiply: " + name + " is not a matrix");
  const int64_t in = transposed ? w.shape[1] : w.shape[0];
  if (in != x.cols()) {
    throw_internal("multiply: " + std::to_string(x.cols()) + " columns against " + name + " of " +
                   std::to_string(in) + " inputs");
  }
}

// float64: each block of outputs widened, then OpenBLAS's dgemm.
MatrixR multiply_f64(const MatrixR& x, const BinaryArray& w, bool transposed, int threads,
                     const std::string& name) {
  check_inputs(x, w, transposed, name);
  const int64_t rows = w.shape[0], cols = w.shape[1];
  const int64_t out = transposed ? rows : cols, in = transposed ? cols : rows;
  const int64_t n = x.rows();
  one_blas_thread();
  const int workers = threads > 0 ? threads : kernel::hardware_threads();
  MatrixR y(n, out);
  // Blocks of outputs, two per thread: each block packs x again in the
  // GEMM, and two balance the threads well enough.
  const int64_t block =
      std::max<int64_t>(16, (out + 2 * workers - 1) / (2 * workers) + 15) / 16 * 16;
  const int64_t blocks = (out + block - 1) / block;
  std::vector<char> bad(static_cast<size_t>(blocks), 0);
  kernel::parallel_for(blocks, workers, [&](int64_t b, int) {
    const int64_t o0 = b * block, o1 = std::min(out, o0 + block), m = o1 - o0;
    // Not zeroed: widen() writes every cell.
    const std::unique_ptr<double[]> part(new double[static_cast<size_t>(m * in)]);
    const bool finite = transposed ? widen(w, o0, o1, 0, in, cols, part.get())
                                   : widen(w, 0, in, o0, o1, cols, part.get());
    if (!finite) {
      bad[static_cast<size_t>(b)] = 1;
      return;
    }
    gemm(transposed, static_cast<int>(n), static_cast<int>(m), static_cast<int>(in), x.data(),
         part.get(), static_cast<int>(transposed ? in : m), y.data() + o0, static_cast<int>(out));
  });
  if (std::find(bad.begin(), bad.end(), 1) != bad.end()) not_finite(w, name);
  return y;
}

}  // namespace

std::vector<MatrixR> multiply_f32(const MatrixR& x, const std::vector<NamedWeight>& ws,
                                  int threads) {
  std::vector<kernel::LinearWeight> lw;
  int64_t total = 0;
  for (const NamedWeight& nw : ws) {
    check_inputs(x, *nw.w, nw.transposed, nw.name);
    kernel::LinearWeight l;
    l.data = nw.w->data;
    l.type = nw.w->type;
    l.rows = nw.w->shape[0];
    l.cols = nw.w->shape[1];
    l.out_major = nw.transposed;
    total += l.outputs();
    lw.push_back(l);
  }
  const int64_t n = x.rows(), in = x.cols();
  const int64_t block = kernel::linear_row_block();
  const int64_t padded = (n + block - 1) / block * block;
  // x in float32, its rows padded with zeros to the kernel's row block.
  const std::unique_ptr<float[]> xf(new float[static_cast<size_t>(padded * in)]);
  Eigen::Map<MatrixT<float>>(xf.get(), n, in) = x.cast<float>();
  std::fill(xf.get() + n * in, xf.get() + padded * in, 0.0f);
  MatrixT<float> y(n, total);
  const int workers = threads > 0 ? threads : kernel::hardware_threads();
  if (!kernel::linear_f32(xf.get(), n, in, lw.data(), static_cast<int>(lw.size()), y.data(), total,
                          workers)) {
    for (const NamedWeight& nw : ws) {
      for (int64_t i = 0; i < nw.w->size(); ++i) {
        if (!std::isfinite(static_cast<float>(nw.w->at(i)))) not_finite(*nw.w, nw.name);
      }
    }
    throw_internal("multiply: the float32 kernel found a weight not finite, the check none");
  }
  std::vector<MatrixR> out;
  int64_t column = 0;
  for (const kernel::LinearWeight& l : lw) {
    out.push_back(y.middleCols(column, l.outputs()).cast<double>());
    column += l.outputs();
  }
  return out;
}

MatrixR multiply(const MatrixR& x, const BinaryArray& w, bool transposed, DType dtype, int threads,
                 const std::string& name) {
  if (dtype == DType::kF32) return std::move(multiply_f32(x, {{&w, transposed, name}}, threads)[0]);
  return multiply_f64(x, w, transposed, threads, name);
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
