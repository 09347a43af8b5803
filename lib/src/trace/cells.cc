#include "trace/cells.h"

#include <cmath>

#include "attn/problem.h"
#include "base/elide.h"
#include "base/number_text.h"

namespace attn::detail {

std::string number_text(double v, bool integers, bool scientific, int precision) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (integers) return format_fixed(v, 0);
  if (scientific) return format_scientific(v, precision);
  return format_fixed(v, precision);
}

CellGrid make_grid(const TraceStep& s, int precision, int max_rows, int max_cols,
                   const std::string& minus_inf, const std::string& gap) {
  CellGrid g;
  const int64_t R = s.values.rows(), C = s.values.cols();
  bool integers = true;
  double max_abs = 0, min_nonzero = INFINITY;
  for (int64_t i = 0; i < R * C; ++i) {
    const double v = s.values.data()[i];
    const bool m = !s.masked.empty() && s.masked[static_cast<size_t>(i)];
    if (!std::isfinite(v) || m) continue;
    if (v != std::floor(v) || std::fabs(v) >= 1e15) integers = false;
    max_abs = std::max(max_abs, std::fabs(v));
    if (v != 0) min_nonzero = std::min(min_nonzero, std::fabs(v));
  }
  g.integers = integers;
  const bool scientific =
      !integers && (max_abs >= 1e7 || (max_abs > 0 && max_abs < std::pow(10.0, -precision)));
  const std::vector<int64_t> rows = shown_indices(R, max_rows), cols = shown_indices(C, max_cols);
  g.has_row_labels = static_cast<int64_t>(s.row_labels.size()) == R;
  g.has_col_labels = static_cast<int64_t>(s.col_labels.size()) == C;
  for (int64_t i : rows) {
    g.row_labels.push_back(i < 0              ? gap
                           : g.has_row_labels ? s.row_labels[static_cast<size_t>(i)]
                                              : std::to_string(i));
  }
  for (int64_t j : cols) {
    g.col_labels.push_back(j < 0              ? gap
                           : g.has_col_labels ? s.col_labels[static_cast<size_t>(j)]
                                              : std::to_string(j));
  }
  for (int64_t i : rows) {
    std::vector<std::string> line;
    std::vector<bool> mline;
    for (int64_t j : cols) {
      if (i < 0 || j < 0) {
        line.push_back(gap);
        mline.push_back(false);
        continue;
      }
      const size_t flat = static_cast<size_t>(i * C + j);
      const double v = s.values(i, j);
      const bool m = !s.masked.empty() && s.masked[flat];
      if (m && v == -INFINITY) {
        line.push_back(minus_inf);
      } else if (m) {
        // A masked cell is shown as masked, never as the fill (-1e6, 0, ...).
        line.push_back("masked");
      } else {
        line.push_back(number_text(v, integers, scientific, precision));
      }
      mline.push_back(m);
    }
    g.cells.push_back(line);
    g.masked.push_back(mline);
  }
  return g;
}

std::string step_shape(const TraceStep& s) {
  if (s.values.size() == 0) return "";
  if (s.values.cols() == 1 &&
      (s.id == StepId::kRowMax || s.id == StepId::kRowSum || s.id == StepId::kBiInputDot ||
       s.id == StepId::kBiMemoryDot || s.id == StepId::kBiRowMax || s.id == StepId::kBiW2)) {
    return shape_string({s.values.rows()});
  }
  return shape_string({s.values.rows(), s.values.cols()});
}

std::string step_scope(const TraceStep& s) {
  std::string out;
  if (s.batch >= 0) out += "batch " + std::to_string(s.batch);
  if (s.head >= 0) out += std::string(out.empty() ? "" : ", ") + "head " + std::to_string(s.head);
  return out;
}

std::vector<std::string> value_names(const TraceStep& s) {
  std::vector<std::string> names;
  const int64_t n = s.value_rows.rows();
  for (int64_t j = 0; j < n; ++j) {
    if (static_cast<int64_t>(s.value_labels.size()) == n) {
      names.push_back("v_" + s.value_labels[static_cast<size_t>(j)]);
    } else {
      names.push_back("v_" + std::to_string(j));
    }
  }
  return names;
}

std::string input_shapes(const Problem& p) {
  if (p.mode == Mode::kQkv) {
    std::string s = "Q " + shape_string(p.query_shape) + ", K " + shape_string(p.key_shape);
    s += p.value_name == "V" ? ", V " + shape_string(p.value_shape) : " (V = K)";
    return s;
  }
  std::string s = "X " + shape_string(p.query_shape);
  if (p.mode == Mode::kCross) s += ", Y " + shape_string(p.key_shape);
  return s;
}

std::string output_shape(const Problem& p) {
  Shape s;
  if (p.four_d) {
    s = {p.batch, p.heads, p.len_q, p.d_out};
  } else {
    s = {p.len_q, p.d_out};
    if (p.batched) s.insert(s.begin(), p.batch);
  }
  return shape_string(s);
}

}  // namespace attn::detail
