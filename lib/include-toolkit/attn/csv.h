// CSV matrices: a 2D matrix of numbers in comma, tab, semicolon or whitespace
// separated text (NumPy's savetxt default is a space), with '#' comments, an
// optional header row and an optional leading label column. Errors give
// "source:line:column: what".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "attn/json_tensor.h"
#include "attn/tensor.h"

namespace attn {

struct CsvMatrix {
  Tensor<double> values;                   // [rows][cols]
  std::vector<std::string> column_labels;  // from a header row, one per value column
  std::vector<std::string> row_labels;     // from a leading label column
  char delimiter = ',';                    // ' ' for whitespace-separated
};

// Parses text as a matrix. `kind` says which cells are allowed (numbers,
// non-finite words, 0/1 for masks). A header row is recognised when one of
// its value cells is not a number; a label column when the first cell of the
// data rows is not a number.
CsvMatrix parse_csv(std::string_view text, const std::string& source,
                    CellKind kind = CellKind::kFinite);

}  // namespace attn
