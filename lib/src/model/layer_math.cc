#include "model/layer_math.h"

#include <cmath>

#include "attn/error.h"
#include "kernel/parallel.h"

namespace attn::model {

Matrix norm_rows(NormKind kind, const Matrix& x, const Vec* w, const Vec* b, double eps) {
  Matrix out(x.rows(), x.cols());
  const double n = static_cast<double>(x.cols());
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    switch (kind) {
      case NormKind::kNone:
        out.row(r) = x.row(r);
        break;
      case NormKind::kRms:
      case NormKind::kRmsUnit: {
        // transformers' LlamaRMSNorm: x / sqrt(mean(x²) + eps) · w; Gemma's
        // weighs by (1 + w), added in float64 as transformers adds it in
        // float32: one addition.
        const double inv = 1.0 / std::sqrt(x.row(r).squaredNorm() / n + eps);
        if (kind == NormKind::kRms) {
          out.row(r) = (x.row(r).array() * inv) * w->array();
        } else {
          out.row(r) = (x.row(r).array() * inv) * (w->array() + 1.0);
        }
        break;
      }
      case NormKind::kLayerNorm:
      case NormKind::kLayerNormNoBias:
      case NormKind::kLayerNormNoParams: {
        // torch.nn.LayerNorm: the biased variance.
        const double mu = x.row(r).mean();
        const Vec c = x.row(r).array() - mu;
        const double var = c.squaredNorm() / n;
        out.row(r) = c / std::sqrt(var + eps);
        if (kind != NormKind::kLayerNormNoParams) out.row(r) = out.row(r).cwiseProduct(*w);
        if (kind == NormKind::kLayerNorm && b) out.row(r) += *b;
        break;
      }
    }
  }
  return out;
}

double activate(Activation a, double v) {
  switch (a) {
    case Activation::kSilu:
      return v / (1.0 + std::exp(-v));
    case Activation::kGelu:
      return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case Activation::kGeluTanh:
      return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    case Activation::kRelu:
      return v > 0 ? v : 0.0;
    case Activation::kClampedSwiglu:
      break;
  }
  throw_internal("activate: the clamped SwiGLU is not a function of one cell");
}

Matrix activated(Activation a, const Matrix& m, int threads) {
  Matrix out(m.rows(), m.cols());
  const int t = threads > 0 ? threads : kernel::hardware_threads();
  kernel::parallel_for(m.rows(), t, [&](int64_t r, int) {
    for (Eigen::Index c = 0; c < m.cols(); ++c) out(r, c) = activate(a, m(r, c));
  });
  return out;
}

Matrix gated(Activation a, const Matrix& gate, const Matrix& up, int threads) {
  Matrix out(gate.rows(), gate.cols());
  const int t = threads > 0 ? threads : kernel::hardware_threads();
  kernel::parallel_for(gate.rows(), t, [&](int64_t r, int) {
    for (Eigen::Index c = 0; c < gate.cols(); ++c) out(r, c) = activate(a, gate(r, c)) * up(r, c);
  });
  return out;
}

BinaryArray slice(const BinaryArray& a, int64_t i) {
  BinaryArray s = a;
  s.shape.erase(s.shape.begin());
  s.data = a.data + cells_bytes(a.type, static_cast<uint64_t>(i * shape_size(s.shape)));
  return s;
}

void add_row(Matrix& y, const Vec& b) { y.rowwise() += b; }

}  // namespace attn::model
