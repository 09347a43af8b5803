// Traces through the library: the formulas each step of the LaTeX trace
// writes, and the similarity of rows. Traces of the program in every
// format, with the numbers of the self-attention blog post:
// trace_cli_test.cc.
#include "attn/trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "test_util.h"

namespace attn {
namespace {

using test::write_temp;

// A step's formula in LaTeX, built from its data as its plain text is.
std::string latex_of(const std::string& id, const StepFacts& f) {
  TraceStep s;
  s.id = test::step_id(id);
  s.facts = f;
  return step_words(s, 4).latex;
}

TEST(Trace, LatexFormulas) {
  StepFacts f;
  f.source = "S'";
  EXPECT_EQ(latex_of("scores", f), "S = Q \\cdot K^\\top");
  EXPECT_EQ(latex_of("exp", f), "E_{ij} = \\exp(S'_{ij} - m_i)");
  EXPECT_EQ(latex_of("row_sum", f), "z_i = \\sum_j  E_{ij}");
  EXPECT_EQ(latex_of("bi_input_dot", f), "t_i = x_i \\cdot w_{in}");
  f.dropout = 0.1;
  EXPECT_EQ(latex_of("dropout", f), "\\tilde{A} = A \\odot \\mathrm{keep} / (1 - p), p = 0.1");
}

TEST(Similarity, RowGram) {
  const double rows[] = {1, 2, 3, 4};
  MatrixR g = row_similarity(rows, 2, 2);
  EXPECT_EQ(g(0, 1), 11);
  EXPECT_EQ(g(1, 1), 25);
}

}  // namespace
}  // namespace attn
