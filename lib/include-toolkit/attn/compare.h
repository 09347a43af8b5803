// Comparing two stacks of matrices of one shape, A and B (two runs'
// attention weights, say): the difference B − A cell by cell, and per
// matrix (per batch entry and head) the largest |B − A| and where it is,
// the mean |B − A|, and, reading each row as a probability distribution,
// the KL divergence KL(A‖B) of the rows and the entropy of each side.
//
// Rows as distributions: a row is one when its numbers are finite, none is
// negative, and their sum is above 0 and at most 1 (kMaxRowSum, for
// rounding); it is divided by its sum (rows of attention weights sum to 1;
// with sinks, to less). A row that is not a distribution on both sides (all
// zero, as a fully masked row is; a row of an output or of scores) is
// skipped and counted. KL(p‖q) = Σ p_j·log(p_j/q_j) over p_j > 0, in nats; it is +inf
// when A puts weight on a key to which B gives none. H(p) = −Σ p_j·log p_j.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/tensor.h"

namespace attn {

// One matrix of the stack: [batch][head] of the shape's [batch][heads][rows][cols]
// (rank 2 is one matrix, rank 3 is [heads][rows][cols], as `attn heatmap` reads them).
struct MatrixComparison {
  int64_t batch = 0, head = 0;
  // The largest |B − A| and its cell (first in row-major order), with both
  // sides' numbers there. A cell that is NaN on one side only differs by
  // NaN, which counts as larger than any number.
  double max_abs_diff = 0;
  int64_t max_row = 0, max_col = 0;
  double a_at_max = 0, b_at_max = 0;
  double mean_abs_diff = 0;
  // Rows as distributions (see above). The means are over the rows compared;
  // NaN when no row was.
  int64_t rows_compared = 0, rows_skipped = 0;
  int64_t rows_kl_infinite = 0;  // rows where KL(A‖B) is +inf
  double kl_mean = 0, kl_max = 0;
  int64_t kl_max_row = -1;  // the first row with the largest KL; -1 when none
  double entropy_a = 0, entropy_b = 0;
  // Cells masked on both sides: left out of the largest and mean |B − A|
  // (a matrix of masked cells only has 0 for both).
  int64_t cells_masked = 0;
};

struct Comparison {
  Shape shape;  // of A and B
  int64_t batch = 1, heads = 1, rows = 0, cols = 0;
  Tensor<double> diff;                     // B − A, in A's shape
  std::vector<MatrixComparison> matrices;  // batch-major, then head
  // Over every cell: the matrix holding the largest |B − A| (the first), and
  // the mean |B − A|.
  size_t max_matrix = 0;
  double mean_abs_diff = 0;
  int64_t rows_compared = 0, rows_skipped = 0;
  int64_t cells_masked = 0;

  double max_abs_diff() const { return matrices.at(max_matrix).max_abs_diff; }
};

// B − A of one cell: 0 where both are NaN or the same infinity (as --check
// counts them equal), NaN where only one is NaN.
double cell_difference(double a, double b);

// The largest row sum read as a distribution: 1, and rounding in float32
// sums of long rows.
constexpr double kMaxRowSum = 1.001;

// Whether a row can be read as a distribution: finite, non-negative, with a
// sum above 0 and at most kMaxRowSum.
bool is_distribution(const double* row, int64_t n);
// KL(p‖q) in nats of two distributions (each divided by its sum first);
// +inf when p is positive where q is 0. Both must pass is_distribution().
double kl_divergence(const double* p, const double* q, int64_t n);
// The Jensen–Shannon divergence ½ KL(p‖m) + ½ KL(q‖m), m = (p + q)/2, in
// nats (at most ln 2) of two distributions (each divided by its sum first).
// Both must pass is_distribution().
double js_divergence(const double* p, const double* q, int64_t n);
// The entropy −Σ p_j·log p_j in nats of a distribution (divided by its sum).
double entropy(const double* p, int64_t n);

// Compares A and B, which must have the same shape of rank 1 to 4 (a vector
// is one row). A shape mismatch is an input error naming both files
// (name_a, name_b) and both shapes. `masked_both` (optional, one flag per
// cell of that shape, 1 = masked on both sides) leaves those cells out of
// the largest and mean |B − A|; their difference is 0.
Comparison compare_matrices(const Tensor<double>& a, const Tensor<double>& b,
                            const std::string& name_a, const std::string& name_b,
                            const uint8_t* masked_both = nullptr);

}  // namespace attn
