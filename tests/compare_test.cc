// attn/compare.h: B − A and its summary per matrix. The KL divergences and
// entropies were computed with PyTorch (torch.nn.functional.kl_div on rows
// divided by their sums) and NumPy, outside attn.
#include "attn/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.h"

namespace attn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Two heads of three rows: plain rows, a row A leaves at zero where B has
// weight, an all-zero row, a row where B has none where A has some (KL
// inf), a row summing to 0.5 that equals B's once divided by its sum, and a
// row with a negative number.
Tensor<double> heads_a() {
  return Tensor<double>({2, 3, 3}, {0.2, 0.3, 0.5, 0.5, 0.5, 0, 0, 0, 0,  //
                                    0.7, 0.3, 0, 0.1, 0.1, 0.3, -1, 2, 0});
}
Tensor<double> heads_b() {
  return Tensor<double>({2, 3, 3}, {0.1, 0.6, 0.3, 0.25, 0.25, 0.5, 1, 0, 0,  //
                                    1, 0, 0, 0.2, 0.2, 0.6, 0.3, 0.3, 0.4});
}

TEST(Compare, SummarisesEachHeadAgainstPyTorchsNumbers) {
  const Comparison c = compare_matrices(heads_a(), heads_b(), "a.json", "b.json");
  EXPECT_EQ(c.shape, (Shape{2, 3, 3}));
  EXPECT_EQ(c.batch, 1);
  EXPECT_EQ(c.heads, 2);
  ASSERT_EQ(c.matrices.size(), 2u);

  const MatrixComparison& h0 = c.matrices[0];
  EXPECT_EQ(h0.head, 0);
  EXPECT_DOUBLE_EQ(h0.max_abs_diff, 1.0);  // the all-zero row of A against B's [1, 0, 0]
  EXPECT_EQ(h0.max_row, 2);
  EXPECT_EQ(h0.max_col, 0);
  EXPECT_EQ(h0.a_at_max, 0);
  EXPECT_EQ(h0.b_at_max, 1);
  EXPECT_NEAR(h0.mean_abs_diff, 0.2888888888888889, 1e-15);
  EXPECT_EQ(h0.rows_compared, 2);
  EXPECT_EQ(h0.rows_skipped, 1);
  EXPECT_EQ(h0.rows_kl_infinite, 0);
  // KL rows 0.18609809382700085 and log 2.
  EXPECT_NEAR(h0.kl_mean, 0.43962263719347305, 1e-15);
  EXPECT_NEAR(h0.kl_max, 0.6931471805599453, 1e-15);
  EXPECT_EQ(h0.kl_max_row, 1);
  EXPECT_NEAR(h0.entropy_a, 0.8614000973122595, 1e-15);
  EXPECT_NEAR(h0.entropy_b, 0.9688332478483488, 1e-15);

  const MatrixComparison& h1 = c.matrices[1];
  EXPECT_EQ(h1.head, 1);
  EXPECT_DOUBLE_EQ(h1.max_abs_diff, std::fabs(0.3 - 2.0));
  EXPECT_EQ(h1.max_row, 2);
  EXPECT_EQ(h1.max_col, 1);
  EXPECT_EQ(h1.rows_compared, 2);
  EXPECT_EQ(h1.rows_skipped, 1);  // the row with -1
  EXPECT_EQ(h1.rows_kl_infinite, 1);
  EXPECT_EQ(h1.kl_mean, kInf);
  EXPECT_EQ(h1.kl_max, kInf);
  EXPECT_EQ(h1.kl_max_row, 0);

  EXPECT_EQ(c.max_matrix, 1u);
  EXPECT_DOUBLE_EQ(c.max_abs_diff(), 1.7);
  EXPECT_EQ(c.rows_compared, 4);
  EXPECT_EQ(c.rows_skipped, 2);
  EXPECT_DOUBLE_EQ(c.diff[5], 0.5);  // head 0, row 1, key 2: 0.5 - 0
  EXPECT_DOUBLE_EQ(c.diff[9], 0.3);  // head 1, row 0, key 0: 1 - 0.7
  EXPECT_EQ(c.diff.shape(), c.shape);
}

TEST(Compare, RowsAreDividedByTheirSums) {
  const double p[] = {0.1, 0.1, 0.3}, q[] = {0.2, 0.2, 0.6};
  EXPECT_EQ(kl_divergence(p, q, 3), 0);
  EXPECT_NEAR(entropy(p, 3), entropy(q, 3), 1e-15);
  const double uniform[] = {2, 2, 2, 2};
  EXPECT_NEAR(entropy(uniform, 4), std::log(4.0), 1e-15);
  const double one_hot[] = {0, 5, 0};
  EXPECT_EQ(entropy(one_hot, 3), 0);
}

TEST(Compare, KlIsInfiniteWhereBHasNoWeightThatAHas) {
  const double p[] = {0.5, 0.5}, q[] = {1, 0};
  EXPECT_EQ(kl_divergence(p, q, 2), kInf);
  EXPECT_NEAR(kl_divergence(q, p, 2), std::log(2.0), 1e-15);  // 0·log 0 counts 0
}

TEST(Compare, WhatCountsAsADistribution) {
  const double zero[] = {0, 0}, negative[] = {-0.1, 1.1}, nan[] = {kNaN, 1}, inf[] = {kInf, 1},
               fine[] = {0, 0.3}, output[] = {1.25, 2.75}, rounded[] = {0.5000001, 0.5000001};
  EXPECT_FALSE(is_distribution(zero, 2));
  EXPECT_FALSE(is_distribution(negative, 2));
  EXPECT_FALSE(is_distribution(nan, 2));
  EXPECT_FALSE(is_distribution(inf, 2));
  EXPECT_FALSE(is_distribution(output, 2));  // sums to 4: not weights
  EXPECT_TRUE(is_distribution(fine, 2));
  EXPECT_TRUE(is_distribution(rounded, 2));
}

TEST(Compare, NanAndInfinitiesCompareAsCheckDoes) {
  EXPECT_EQ(cell_difference(kNaN, kNaN), 0);
  EXPECT_EQ(cell_difference(kInf, kInf), 0);
  EXPECT_EQ(cell_difference(-kInf, -kInf), 0);
  EXPECT_EQ(cell_difference(1, kInf), kInf);
  EXPECT_TRUE(std::isnan(cell_difference(1, kNaN)));
  EXPECT_EQ(cell_difference(0.25, 1), 0.75);
}

TEST(Compare, ANanDifferenceIsTheLargest) {
  const Tensor<double> a({1, 3}, {0, 1, 0}), b({1, 3}, {5, kNaN, 0});
  const Comparison c = compare_matrices(a, b, "a", "b");
  EXPECT_TRUE(std::isnan(c.max_abs_diff()));
  EXPECT_EQ(c.matrices[0].max_col, 1);
  EXPECT_TRUE(std::isnan(c.mean_abs_diff));
  EXPECT_EQ(c.rows_skipped, 1);
  EXPECT_TRUE(std::isnan(c.matrices[0].kl_mean));  // no row compared
}

TEST(Compare, EqualInputsDifferByZero) {
  const Comparison c = compare_matrices(heads_a(), heads_a(), "a", "a");
  EXPECT_EQ(c.max_abs_diff(), 0);
  EXPECT_EQ(c.mean_abs_diff, 0);
  EXPECT_EQ(c.matrices[0].max_row, 0);  // the first cell when all are equal
  EXPECT_EQ(c.matrices[0].kl_max, 0);
}

TEST(Compare, RankFourIsBatchThenHeadsAndAVectorIsOneRow) {
  const Tensor<double> a(Shape{2, 3, 1, 2}, 0.5);
  Tensor<double> b = a;
  b[9] = 0.75;  // batch 1, head 1, key 1
  const Comparison c = compare_matrices(a, b, "a", "b");
  EXPECT_EQ(c.batch, 2);
  EXPECT_EQ(c.heads, 3);
  EXPECT_EQ(c.max_matrix, 4u);
  EXPECT_EQ(c.matrices[4].batch, 1);
  EXPECT_EQ(c.matrices[4].head, 1);
  EXPECT_EQ(c.matrices[4].max_col, 1);

  const Comparison v =
      compare_matrices(Tensor<double>({3}, {1, 2, 3}), Tensor<double>({3}, {1, 2, 4}), "a", "b");
  EXPECT_EQ(v.rows, 1);
  EXPECT_EQ(v.cols, 3);
  EXPECT_EQ(v.matrices[0].max_col, 2);
}

TEST(Compare, ShapesMustMatch) {
  EXPECT_EQ(test::error_of([] {
              compare_matrices(Tensor<double>({2, 3}, 0.0), Tensor<double>({3, 2}, 0.0), "a.json",
                               "b.npy");
            }),
            "a.json and b.npy: shapes differ: [2][3] in a.json, [3][2] in b.npy");
  EXPECT_EQ(test::error_of([] {
              compare_matrices(Tensor<double>({0, 3}), Tensor<double>({0, 3}), "a.json", "b.json");
            }),
            "a.json: nothing to compare: the array is empty (shape [0][3])");
}

}  // namespace
}  // namespace attn
