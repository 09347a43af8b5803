// Eigen's row-major matrix and column vector of a scalar T, as the engine,
// the variants and the kernels' callers hold a head's numbers.
#pragma once

#include <Eigen/Core>

namespace attn::detail {

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using Vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;

}  // namespace attn::detail
