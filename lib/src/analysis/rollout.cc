// Attention rollout (Abnar & Zuidema 2020): how much of each token's
// embedding reaches each position through all the layers so far, the
// residual connection counted as half of each layer.
#include <Eigen/Core>
#include <algorithm>

#include "attn/analysis.h"
#include "attn/error.h"
#include "base/names.h"

namespace attn {

namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace

const std::vector<std::string>& rollout_fusion_names() {
  static const std::vector<std::string> names = {"mean", "max", "min"};
  return names;
}

RolloutFusion parse_rollout_fusion(const std::string& text) {
  const std::vector<std::string>& names = rollout_fusion_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<RolloutFusion>(i);
  }
  throw_usage("--rollout-fusion: " + not_one_of(text, names));
}

Tensor<double> Rollout::add_layer(const Tensor<double>& weights) {
  if (weights.rank() != 4 || weights.dim(2) != weights.dim(3)) {
    throw_input("rollout", "needs square weights [batch][heads][q][q] of self-attention, not " +
                               shape_string(weights.shape()));
  }
  const int64_t B = weights.dim(0), H = weights.dim(1), q = weights.dim(2);
  const Shape shape{B, 1, q, q};
  if (!r_.empty() && r_.shape() != shape) {
    throw_input("rollout", "a layer of shape " + shape_string(weights.shape()) +
                               " after layers of " + shape_string(r_.shape()));
  }
  Tensor<double> out(shape);
  for (int64_t b = 0; b < B; ++b) {
    const double* w = weights.data() + b * H * q * q;
    Matrix a(q, q);
    for (int64_t c = 0; c < q * q; ++c) {
      double f = w[c];
      for (int64_t h = 1; h < H; ++h) {
        const double x = w[h * q * q + c];
        switch (fusion_) {
          case RolloutFusion::kMean:
            f += x;
            break;
          case RolloutFusion::kMax:
            f = std::max(f, x);
            break;
          case RolloutFusion::kMin:
            f = std::min(f, x);
            break;
        }
      }
      if (fusion_ == RolloutFusion::kMean) f /= static_cast<double>(H);
      a.data()[c] = 0.5 * f;
    }
    a.diagonal().array() += 0.5;
    // rownorm: each row divided by its sum.
    a.array().colwise() /= a.rowwise().sum().array();
    Eigen::Map<Matrix> r(out.data() + b * q * q, q, q);
    if (r_.empty()) {
      r = a;
    } else {
      r = a * Eigen::Map<const Matrix>(r_.data() + b * q * q, q, q);
    }
  }
  r_ = out;
  return out;
}

}  // namespace attn
