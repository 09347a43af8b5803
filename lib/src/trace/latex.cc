// LaTeX traces: display-math blocks (array with labels, as in the self-attention blog post's
// post) a blog author can paste into a document that loads amsmath.
#include <regex>

#include "attn/escape.h"
#include "attn/number_text.h"
#include "attn/trace.h"
#include "trace/cells.h"

namespace attn {

namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

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

// The name a matrix is given in a display: "S" for "S_ij = ...".
std::string lhs_name(const std::string& formula) {
  std::string lhs = formula.substr(0, formula.find(" = "));
  for (const char* sub : {"_ij", "_i", "_j"}) {
    const std::string s = sub;
    if (lhs.size() > s.size() && lhs.compare(lhs.size() - s.size(), s.size(), s) == 0) {
      lhs.erase(lhs.size() - s.size());
    }
  }
  return lhs;
}

bool elementwise(const std::string& formula) {
  const std::string lhs = formula.substr(0, formula.find(" = "));
  return lhs.find("_i") != std::string::npos || lhs.find("_j") != std::string::npos ||
         formula.find(" where ") != std::string::npos || formula.find(" = ") == std::string::npos;
}

}  // namespace

std::string latex_formula(std::string_view formula) {
  std::string s(formula);
  replace_all(s, "where masked", "\\text{where masked}");
  replace_all(s, "where memory j is padding", "\\text{where memory $j$ is padding}");
  replace_all(s, "mask_fill", "\\text{mask\\_fill}");
  replace_all(s, "attn_bias", "\\text{attn\\_bias}");
  replace_all(s, "LeakyReLU_0.01", "\\mathrm{LeakyReLU}_{0.01}");
  replace_all(s, "softmax", "\\mathrm{softmax}");
  replace_all(s, "tanh", "\\tanh");
  replace_all(s, "exp(", "\\exp(");
  replace_all(s, "max_j", "\\max_j");
  replace_all(s, "max(", "\\max(");
  replace_all(s, "keep", "\\mathrm{keep}");
  replace_all(s, "output", "\\mathrm{output}");
  replace_all(s, "Q̂", "\\hat{Q}");
  replace_all(s, "K̂", "\\hat{K}");
  replace_all(s, "Ã", "\\tilde{A}");
  replace_all(s, "ᵀ", "^\\top");
  replace_all(s, "·", " \\cdot ");
  replace_all(s, "−", "-");
  replace_all(s, "‖", "\\|");
  replace_all(s, "Σ_j", "\\sum_j ");
  replace_all(s, "⊙", "\\odot");
  replace_all(s, "√", "\\sqrt");
  replace_all(s, "...", "\\dots");
  // Multi-letter subscripts need braces: S_ij -> S_{ij}, w_in -> w_{in}.
  static const std::regex sub("_([A-Za-z0-9]{2,})");
  return std::regex_replace(s, sub, "_{$1}");
}

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
    std::string scope = step_scope(s);
    out += "\n% " + std::to_string(n) + ". " + latex_text(s.title) +
           (scope.empty() ? "" : " (" + scope + ")") + "  " + step_shape(s) + "\n";
    if (!s.note.empty()) out += "% " + latex_text(s.note) + "\n";
    if (s.id == "weighted_sum" && s.weights.cols() <= 8 && s.values.cols() <= 8) {
      const std::vector<std::string> names = value_names(s);
      out += "\\[\n\\begin{aligned}\n";
      for (int64_t i = 0; i < s.weights.rows(); ++i) {
        const std::string row = static_cast<int64_t>(s.row_labels.size()) == s.weights.rows()
                                    ? s.row_labels[static_cast<size_t>(i)]
                                    : std::to_string(i);
        out += "  o_{" + label(row) + "} &= ";
        for (int64_t j = 0; j < s.weights.cols(); ++j) {
          std::string v = names[static_cast<size_t>(j)].substr(2);
          out += (j ? " + " : "") + format_fixed(s.weights(i, j), o.precision) + "\\, v_{" +
                 label(v) + "}";
        }
        out += " = \\begin{bmatrix}";
        for (int64_t c = 0; c < s.values.cols(); ++c) {
          out += (c ? " & " : " ") + format_fixed(s.values(i, c), o.precision);
        }
        out += " \\end{bmatrix} \\\\\n";
      }
      out += "\\end{aligned}\n\\]\n";
      continue;
    }
    if (s.values.size() == 0) {
      out += "\\[ " + latex_formula(s.formula) + " \\]\n";
      continue;
    }
    const CellGrid g = make_grid(s, o.precision, o.max_rows, o.max_cols, "-inf", "…");
    if (elementwise(s.formula)) {
      if (s.formula.find(" = ") != std::string::npos) {
        out += "\\[ " + latex_formula(s.formula) + " \\]\n";
      }
      out += "\\[\n" + latex_formula(lhs_name(s.formula)) + " =\n" + matrix(g) + "\n\\]\n";
    } else {
      out += "\\[\n" + latex_formula(s.formula) + " =\n" + matrix(g) + "\n\\]\n";
    }
  }
  return out;
}

}  // namespace detail

}  // namespace attn
