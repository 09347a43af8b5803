// The forward pass's arithmetic on hidden states, in float64: the norms of
// every kind the architecture table names, the activations, and a weight
// matrix's products with rows of hidden states wherever its cells lie.
#pragma once

#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "attn/binary_array.h"
#include "attn/options.h"
#include "attn/problem.h"
#include "model/architecture.h"

namespace attn::model {

using Matrix = MatrixR;
using Vec = Eigen::RowVectorXd;

// Each row of x normed as `kind` says, with the weight w and bias b where
// the kind has them (w: as wide as a row; (1 + w) for kRmsUnit).
Matrix norm_rows(NormKind kind, const Matrix& x, const Vec* w, const Vec* b, double eps);

// The activation of every cell (rows shared among the threads).
double activate(Activation a, double v);
Matrix activated(Activation a, const Matrix& m, int threads);
// act(gate) ⊙ up.
Matrix gated(Activation a, const Matrix& gate, const Matrix& up, int threads);

// Cells [i] of a view whose first axis is i: expert i's matrix of a fused
// [experts][...] tensor.
BinaryArray slice(const BinaryArray& a, int64_t i);

// y.row(r) += b for every row; b as wide as y.
void add_row(Matrix& y, const Vec& b);

}  // namespace attn::model
