// Shared pieces of the trace writers: how a matrix of a step is shown
// (number style chosen per matrix, masked cells, labels, which rows and
// columns are shown when the matrix is large).
#pragma once

#include <string>
#include <vector>

#include "attn/observer.h"

namespace attn::detail {

// A step's matrix ready for display: every shown cell as text.
struct CellGrid {
  std::vector<std::string> row_labels, col_labels;  // of the shown rows/cols; "…" for a gap
  std::vector<std::vector<std::string>> cells;      // [shown rows][shown cols]
  std::vector<std::vector<bool>> masked;            // same layout
  bool has_col_labels = false;                      // labels beyond plain indices
  bool has_row_labels = false;
  bool integers = false;  // every value an integer
};

// minus is the text of "−∞" for masked -inf cells: "-inf" in text, "-\infty" in LaTeX.
CellGrid make_grid(const TraceStep& s, int precision, int max_rows, int max_cols,
                   const std::string& minus_inf, const std::string& gap);

// The number text of one value in a matrix of the given style.
std::string number_text(double v, bool integers, bool scientific, int precision);

// "[4][4]" for a step's values; "" when it has none.
std::string step_shape(const TraceStep& s);

// "batch 1, head 0" (empty when neither applies).
std::string step_scope(const TraceStep& s);

// Labels of the value rows of a weighted sum ("v_cat", or "v_0").
std::vector<std::string> value_names(const TraceStep& s);

// Input shapes: "X [4][4]" or "Q [2][3][2], K [2][8][2], V [2][8][10]".
std::string input_shapes(const Problem& p);

// The output shape attn reports for p.
std::string output_shape(const Problem& p);

}  // namespace attn::detail
