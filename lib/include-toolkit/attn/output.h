// Writers for results: an aligned, labelled table for people, JSON (docs/spec.md
// §5, numbers that round-trip, non-finite as "nan"/"inf"/"-inf"), and CSV
// (the output matrix; batched results as blocks under "# batch b" comments,
// so numpy.loadtxt reads them as one stacked matrix). Writers never compute.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/problem.h"
#include "attn/tensor.h"

namespace attn {

enum class Format { kTable, kJson, kCsv };

std::optional<Format> parse_format(std::string_view s);
const std::vector<std::string>& format_names();

struct OutputOptions {
  Format format = Format::kTable;
  bool weights = false;      // include the weights
  bool table_output = true;  // the table shows the output (not only the weights)
  int precision = 4;         // digits after the point in tables
  // --precision given: the digits after the point of JSON and CSV numbers
  // (rounded); -1, the default, writes every digit (the shortest text that
  // reads back as the same number), which is what a script wants.
  int digits = -1;
  // CSV: the weights as a long table, a row per cell (--long).
  bool long_csv = false;
  int64_t layer = 0;   // the long table's layer column (a checkpoint's --layer)
  bool color = false;  // ANSI styling in tables
  // --head: only this head of the weights (and of a 4-D input's output,
  // [batch][heads][q][d_v]), the head axis removed; -1 for every head.
  int64_t head = -1;
};

// Dot products between rows (--similarity) of the query-side input and of
// the output: [len_q][len_q], or [blocks][len_q][len_q] per batch (and head).
struct Similarity {
  Tensor<double> input, output;
};

// The result with only head `head` (in range) of its per-head tensors: the
// weights, scores and masked flags, and the output of a 4-D input; the
// head axis removed, as NumPy's w[:, head] does. Tensors without a head
// axis (one head, or averaged) are kept as they are.
Result one_head(const Problem& p, const Result& r, int64_t head);

// The whole result document in the chosen format, ending with a newline.
// With o.head, only that head (one_head); a table names it in its captions.
// JSON and CSV carry `similarity` inside the document when given (a
// "similarity" object; two more CSV blocks); the table leaves it to the caller.
std::string format_result(const Problem& p, const Result& r, const OutputOptions& o,
                          const Similarity* similarity = nullptr);

// The result as an .npz archive (-o FILE.npz): the members of the JSON
// result under the same names — output, weights, weights_axes, masked
// (bool), title, settings — with the labels as labels_queries and
// labels_keys ('<U' string arrays) and similarity as similarity_input and
// similarity_output. np.load reads it without pickle, and `attn heatmap
// FILE.npz` redraws the run's figure from it.
std::string format_result_npz(const Problem& p, const Result& r, const OutputOptions& o,
                              const Similarity* similarity = nullptr);

// t with each cell rounded to `digits` after the point; t itself when
// digits < 0. Non-finite cells are kept.
Tensor<double> round_digits(const Tensor<double>& t, int digits);

// A number as CSV writes it: the shortest text (float's with kF32), and
// nan, inf, -inf unquoted.
void append_csv_number(std::string& out, double v, DType dtype);

// One tensor as JSON (nested arrays, one innermost row per line).
void append_json_tensor(std::string& out, const Tensor<double>& t, DType dtype, int indent);

// One tensor in CSV: 2D as rows; higher ranks as 2D blocks under comments
// naming the leading indices ("# batch 0", "# batch 0 head 1").
std::string format_csv_tensor(const Tensor<double>& t, DType dtype, const std::string& name);

// One matrix as an aligned table with optional row and column labels.
// `masked` (optional, one flag per cell) prints those cells as "masked".
std::string format_table_matrix(const double* values, int64_t rows, int64_t cols,
                                const std::vector<std::string>& row_labels,
                                const std::vector<std::string>& col_labels, int precision,
                                const uint8_t* masked = nullptr);

}  // namespace attn
