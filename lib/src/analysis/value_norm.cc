// Value-weighted norms (Kobayashi et al. 2020): the attention weight of a
// key times the size of what that key's value vector becomes through the
// head's block of the output projection, ‖α v W_O^h‖ = α ‖v W_O^h‖ (α ≥ 0).
#include <Eigen/Core>

#include "attn/analysis.h"
#include "attn/error.h"

namespace attn {

namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace

Tensor<double> value_norms(const Tensor<double>& weights, const LayerValues& v) {
  const Shape& vs = v.values.shape();
  const Shape& os = v.output_blocks.shape();
  if (weights.rank() != 4 || weights.dim(0) != 1 || vs.size() != 3 || os.size() != 3 ||
      vs[0] != weights.dim(1) || vs[1] != weights.dim(3) || os[0] != vs[0] || os[1] != vs[2]) {
    throw_internal("value_norms: weights " + shape_string(weights.shape()) + ", values " +
                   shape_string(vs) + ", output blocks " + shape_string(os));
  }
  const int64_t H = vs[0], k = vs[1], dv = vs[2], hidden = os[2], q = weights.dim(2);
  Tensor<double> out(weights.shape());
  for (int64_t h = 0; h < H; ++h) {
    const Eigen::Map<const Matrix> values(v.values.data() + h * k * dv, k, dv);
    const Eigen::Map<const Matrix> block(v.output_blocks.data() + h * dv * hidden, dv, hidden);
    // ‖v_j W_O^h‖ for every key j.
    const Eigen::VectorXd norms = (values * block).rowwise().norm();
    for (int64_t i = 0; i < q; ++i) {
      const double* a = weights.data() + (h * q + i) * k;
      double* o = out.data() + (h * q + i) * k;
      for (int64_t j = 0; j < k; ++j) o[j] = a[j] * norms[j];
    }
  }
  return out;
}

}  // namespace attn
