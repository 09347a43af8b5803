#include "model/matmul.h"

#include <cmath>
#include <utility>
#include <vector>

#include "attn/error.h"
#include "base/parallel.h"
#include "kernel/linear_kernel.h"

namespace attn::detail {

namespace {

template <class T>
using MatrixT = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The input error for a weight the kernel found not finite in T.
template <class T>
[[noreturn]] void not_finite(const NamedWeight& nw) {
  const BinaryArray& w = *nw.w;
  for (int64_t i = 0; i < w.size(); ++i) {
    if (!std::isfinite(w.at(i))) {
      throw_input(nw.name, "non-finite value " + std::to_string(w.at(i)) + " at cell " +
                               std::to_string(i) + " (model weights must be finite)");
    }
  }
  for (int64_t i = 0; i < w.size(); ++i) {
    if (!std::isfinite(static_cast<T>(w.at(i)))) {
      // Finite in the file but not in float32: a float64 weight past its range.
      throw_input(nw.name, "holds a weight outside the float32 range; run it with --dtype f64");
    }
  }
  throw_internal("multiply: the kernel found a weight of " + nw.name +
                 " not finite, the check none");
}

void check_inputs(int64_t features, const NamedWeight& nw) {
  const BinaryArray& w = *nw.w;
  if (w.shape.size() != 2) throw_internal("multiply: " + nw.name + " is not a matrix");
  const int64_t in = nw.transposed ? w.shape[1] : w.shape[0];
  if (in != features) {
    throw_internal("multiply: " + std::to_string(features) + " columns against " + nw.name +
                   " of " + std::to_string(in) + " inputs");
  }
}

int64_t outputs(const NamedWeight& nw) { return nw.w->shape[nw.transposed ? 0 : 1]; }

// The rows of x (n x in, row-major) times the weights into y's rows (ldy
// apart), side by side.
template <class T>
void product(const T* x, int64_t n, int64_t in, const std::vector<NamedWeight>& ws, T* y,
             int64_t ldy, int threads) {
  std::vector<kernel::LinearWeight> lw;
  for (const NamedWeight& nw : ws) {
    check_inputs(in, nw);
    kernel::LinearWeight l;
    l.data = nw.w->data;
    l.type = nw.w->type;
    l.rows = nw.w->shape[0];
    l.cols = nw.w->shape[1];
    l.out_major = nw.transposed;
    lw.push_back(l);
  }
  const int workers = threads > 0 ? threads : kernel::hardware_threads();
  if (!kernel::linear(x, n, in, lw.data(), static_cast<int>(lw.size()), y, ldy, workers)) {
    // Which weight: the first with a cell not finite in T.
    for (const NamedWeight& nw : ws) {
      for (int64_t c = 0; c < nw.w->size(); ++c) {
        if (!std::isfinite(static_cast<T>(nw.w->at(c)))) not_finite<T>(nw);
      }
    }
    throw_internal("multiply: the kernel found a weight not finite, the check none");
  }
}

}  // namespace

std::vector<MatrixR> multiply(const MatrixR& x, const std::vector<NamedWeight>& ws, DType dtype,
                              int threads) {
  int64_t total = 0;
  for (const NamedWeight& nw : ws) {
    check_inputs(x.cols(), nw);
    total += outputs(nw);
  }
  std::vector<MatrixR> out;
  if (dtype == DType::kF32) {
    const MatrixT<float> xf = x.cast<float>();
    MatrixT<float> y(x.rows(), total);
    product(xf.data(), x.rows(), x.cols(), ws, y.data(), total, threads);
    int64_t column = 0;
    for (const NamedWeight& nw : ws) {
      out.push_back(y.middleCols(column, outputs(nw)).cast<double>());
      column += outputs(nw);
    }
    return out;
  }
  if (ws.size() == 1) {
    out.emplace_back(x.rows(), total);
    product(x.data(), x.rows(), x.cols(), ws, out.back().data(), total, threads);
    return out;
  }
  MatrixR y(x.rows(), total);
  product(x.data(), x.rows(), x.cols(), ws, y.data(), total, threads);
  int64_t column = 0;
  for (const NamedWeight& nw : ws) {
    out.emplace_back(y.middleCols(column, outputs(nw)));
    column += outputs(nw);
  }
  return out;
}

MatrixR gated_mlp_f32(const MatrixR& x, const NamedWeight& gate, const NamedWeight& up,
                      const NamedWeight& down, kernel::GateKind kind, int threads) {
  const int64_t width = outputs(gate);
  if (outputs(up) != width) {
    throw_internal("gated_mlp_f32: " + gate.name + " and " + up.name + " differ in outputs");
  }
  check_inputs(width, down);
  const int64_t n = x.rows();
  const MatrixT<float> xf = x.cast<float>();
  MatrixT<float> gate_up(n, 2 * width);
  product(xf.data(), n, x.cols(), {gate, up}, gate_up.data(), 2 * width, threads);
  MatrixT<float> h(n, width);
  const int workers = threads > 0 ? threads : kernel::hardware_threads();
  kernel::gate_f32(gate_up.data(), n, width, 2 * width, kind, h.data(), width, workers);
  MatrixT<float> y(n, outputs(down));
  product(h.data(), n, width, {down}, y.data(), y.cols(), threads);
  return y.cast<double>();
}

MatrixR multiply(const MatrixR& x, const BinaryArray& w, bool transposed, DType dtype, int threads,
                 const std::string& name) {
  return std::move(multiply(x, {{&w, transposed, name}}, dtype, threads)[0]);
}

BinaryArray view_of(const Tensor<double>& t) {
  BinaryArray view;
  view.type = ElementType::kF64;
  view.shape = t.shape();
  view.data = reinterpret_cast<const unsigned char*>(t.data());
  return view;
}

}  // namespace attn::detail
