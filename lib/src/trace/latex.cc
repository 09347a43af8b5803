// LaTeX traces: each step a bold title, its note, and display-math blocks
// (array with labels, as in the self-attention blog post) a blog author can
// paste into a document that loads amsmath. The text is ASCII: pdflatex
// reads it without inputenc or Unicode fonts.
#include "attn/escape.h"
#include "attn/trace.h"
#include "base/number_text.h"
#include "trace/cells.h"

namespace attn {

namespace {

std::string label(const std::string& l) {
  if (l == "…") return "\\cdots";
  return "\\text{" + latex_text(l) + "}";
}

std::string cell(const std::string& c) {
  if (c == "-inf") return "-\\infty";
  if (c == "inf") return "\\infty";
  if (c == "…") return "\\cdots";
  if (c == "masked") return "\\text{masked}";
  if (c == "nan") return "\\text{NaN}";
  return c;
}

std::string matrix(const detail::CellGrid& g) {
  const bool labels = g.has_row_labels || g.has_col_labels;
  std::string out;
  if (!labels) {
    out += "\\begin{bmatrix}\n";
    for (const auto& row : g.cells) {
      out += "  ";
      for (size_t j = 0; j < row.size(); ++j) out += (j ? " & " : "") + cell(row[j]);
      out += " \\\\\n";
    }
    return out + "\\end{bmatrix}";
  }
  out += "\\begin{array}{r|" + std::string(g.col_labels.size(), 'r') + "}\n";
  if (g.has_col_labels) {
    out += " ";
    for (const auto& c : g.col_labels) out += " & " + label(c);
    out += " \\\\ \\hline\n";
  }
  for (size_t i = 0; i < g.cells.size(); ++i) {
    out += "  " + label(g.row_labels[i]);
    for (const auto& c : g.cells[i]) out += " & " + cell(c);
    out += " \\\\\n";
  }
  return out + "\\end{array}";
}

// Row i of the weighted sum written out: o_i = sum_j w_ij v_j = [...].
std::string weighted_sum(const TraceStep& s, int precision) {
  const std::vector<std::string> names = detail::value_names(s);
  std::string out = "\\[\n\\begin{aligned}\n";
  for (int64_t i = 0; i < s.weights.rows(); ++i) {
    const std::string row = static_cast<int64_t>(s.row_labels.size()) == s.weights.rows()
                                ? s.row_labels[static_cast<size_t>(i)]
                                : std::to_string(i);
    out += "  o_{" + label(row) + "} &= ";
    for (int64_t j = 0; j < s.weights.cols(); ++j) {
      std::string v = names[static_cast<size_t>(j)].substr(2);
      out +=
          (j ? " + " : "") + format_fixed(s.weights(i, j), precision) + "\\, v_{" + label(v) + "}";
    }
    out += " = \\begin{bmatrix}";
    for (int64_t c = 0; c < s.values.cols(); ++c) {
      out += (c ? " & " : " ") + format_fixed(s.values(i, c), precision);
    }
    out += " \\end{bmatrix} \\\\\n";
  }
  return out + "\\end{aligned}\n\\]\n";
}

// A step's formula and its table. A formula defining elements (E_ij = ...)
// stands alone, and the table is named by the matrix (E =); any other is
// the table's name (S = Q·Kᵀ =).
std::string display(const TraceStep& s, const StepWords& w, const TraceOptions& o) {
  if (s.values.size() == 0) return "\\[ " + w.latex + " \\]\n";
  const detail::CellGrid g = detail::make_grid(s, o.precision, o.max_rows, o.max_cols, "-inf", "…");
  if (w.latex_name.empty()) return "\\[\n" + w.latex + " =\n" + matrix(g) + "\n\\]\n";
  return "\\[ " + w.latex + " \\]\n\\[\n" + w.latex_name + " =\n" + matrix(g) + "\n\\]\n";
}

}  // namespace

namespace detail {

std::string latex_trace(const Problem& p, const std::vector<TraceStep>& steps,
                        const TraceOptions& o) {
  std::string out =
      "% attn trace in LaTeX; each block is display math (needs \\usepackage{amsmath}).\n";
  // Text from the input goes through latex_text even in comments: a newline
  // in it would end the comment and start LaTeX code.
  if (!p.title.empty()) out += "% " + latex_text(p.title) + "\n";
  out += "% run: " + latex_text(describe_run(p)) + "\n";
  out += "% shapes: " + input_shapes(p) + " -> output " + output_shape(p) + "\n";
  if (!o.showing.empty()) out += "% showing: " + o.showing + "\n";
  int n = 0;
  for (const TraceStep& s : steps) {
    ++n;
    const StepWords w = step_words(s, o.precision);
    std::string scope = step_scope(s);
    // The step's title and note as text the reader sees, above its display.
    out += "\n\\noindent\\textbf{" + std::to_string(n) + ". " + latex_text(w.title) + "}" +
           (scope.empty() ? "" : " (" + latex_text(scope) + ")") + " " + latex_text(step_shape(s)) +
           "\\par\n";
    if (!w.note.empty()) out += "\\noindent " + latex_text(w.note) + "\\par\n";
    const bool terms =
        s.id == StepId::kWeightedSum && s.weights.cols() <= 8 && s.values.cols() <= 8;
    out += terms ? weighted_sum(s, o.precision) : display(s, w, o);
  }
  // The formulas are written with a few symbols in Unicode (σ, ·): the
  // whole trace is made ASCII, for a pdflatex without inputenc.
  return latex_ascii(out);
}

}  // namespace detail

}  // namespace attn
