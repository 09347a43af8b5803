// Text and Markdown traces, and the format dispatch. LaTeX and JSON have
// their own files.
#include "attn/trace.h"

#include <algorithm>

#include "attn/number_text.h"
#include "trace_cells.h"

namespace attn {

namespace detail {
std::string latex_trace(const Problem& p, const std::vector<TraceStep>& steps,
                        const TraceOptions& o);
std::string json_trace(const Problem& p, const std::vector<TraceStep>& steps,
                       const TraceOptions& o);
}  // namespace detail

std::optional<TraceFormat> parse_trace_format(std::string_view s) {
  if (s == "text") return TraceFormat::kText;
  if (s == "markdown") return TraceFormat::kMarkdown;
  if (s == "latex") return TraceFormat::kLatex;
  if (s == "json") return TraceFormat::kJson;
  return std::nullopt;
}

const std::vector<std::string>& trace_format_names() {
  static const std::vector<std::string> names = {"text", "markdown", "latex", "json"};
  return names;
}

MatrixR row_similarity(const double* rows, int64_t n, int64_t width) {
  Eigen::Map<const MatrixR> m(rows, n, width);
  return m * m.transpose();
}

namespace {

using detail::CellGrid;

size_t width_of(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

std::string pad_left(const std::string& s, size_t w) {
  const size_t n = width_of(s);
  return (n < w ? std::string(w - n, ' ') : "") + s;
}

std::string pad_right(const std::string& s, size_t w) {
  const size_t n = width_of(s);
  return s + (n < w ? std::string(w - n, ' ') : "");
}

struct Style {
  bool color;
  std::string bold(const std::string& s) const { return color ? "\x1b[1m" + s + "\x1b[0m" : s; }
  std::string dim(const std::string& s) const { return color ? "\x1b[2m" + s + "\x1b[0m" : s; }
  std::string accent(const std::string& s) const { return color ? "\x1b[36m" + s + "\x1b[0m" : s; }
};

std::string text_grid(const CellGrid& g, const Style& st, const std::string& indent) {
  size_t lw = 0;
  for (const auto& l : g.row_labels) lw = std::max(lw, width_of(l));
  std::vector<size_t> cw(g.col_labels.size(), 0);
  for (size_t j = 0; j < cw.size(); ++j) {
    cw[j] = width_of(g.col_labels[j]);
    for (const auto& row : g.cells) cw[j] = std::max(cw[j], width_of(row[j]));
  }
  std::string out;
  // A column vector (row maxima, row sums) needs no column header.
  if (g.has_col_labels || g.col_labels.size() > 1) {
    out += indent + std::string(lw, ' ');
    for (size_t j = 0; j < cw.size(); ++j) out += "  " + st.dim(pad_left(g.col_labels[j], cw[j]));
    out += '\n';
  }
  for (size_t i = 0; i < g.cells.size(); ++i) {
    out += indent + st.dim(pad_right(g.row_labels[i], lw));
    for (size_t j = 0; j < cw.size(); ++j) {
      const std::string cell = pad_left(g.cells[i][j], cw[j]);
      out += "  " + (g.masked[i][j] ? st.dim(cell) : cell);
    }
    out += '\n';
  }
  return out;
}

// "0.25·v_cat + 0.25·v_milk = [0, 1.25]" for each query row.
std::string weighted_sum_lines(const TraceStep& s, const TraceOptions& o, bool markdown) {
  const std::vector<std::string> names = detail::value_names(s);
  std::string out;
  const int64_t rows = s.weights.rows();
  size_t lw = 0;
  std::vector<std::string> labels;
  for (int64_t i = 0; i < rows; ++i) {
    labels.push_back(static_cast<int64_t>(s.row_labels.size()) == rows
                         ? s.row_labels[static_cast<size_t>(i)]
                         : std::to_string(i));
    lw = std::max(lw, width_of(labels.back()));
  }
  for (int64_t i = 0; i < rows; ++i) {
    std::string line = markdown ? "- `" : "   ";
    line += pad_right(labels[static_cast<size_t>(i)], lw) + " = ";
    bool first = true;
    for (int64_t j = 0; j < s.weights.cols(); ++j) {
      const double w = s.weights(i, j);
      if (!first) line += " + ";
      line += format_fixed(w, o.precision) + "·" + names[static_cast<size_t>(j)];
      first = false;
    }
    line += " = [";
    for (int64_t c = 0; c < s.values.cols(); ++c) {
      if (c) line += ", ";
      line += format_fixed(s.values(i, c), o.precision);
    }
    line += "]";
    out += line + (markdown ? "`\n" : "\n");
  }
  return out;
}

bool write_terms(const TraceStep& s) {
  return s.weights.cols() <= 8 && s.values.cols() <= 8 && s.weights.rows() <= 16;
}

std::string header_text(const Problem& p, const Style& st) {
  std::string out;
  out += st.bold(p.title.empty() ? "Attention trace" : p.title) + "\n";
  if (!p.description.empty()) out += p.description + "\n";
  if (!p.source_text.empty()) out += "source: " + p.source_text + "\n";
  out += "run:    " + describe_run(p) + "\n";
  out += "shapes: " + detail::input_shapes(p) + " -> output " + detail::output_shape(p) + "\n";
  return out;
}

std::string text_trace(const Problem& p, const std::vector<TraceStep>& steps,
                       const TraceOptions& o) {
  const Style st{o.color};
  std::string out = header_text(p, st);
  int n = 0;
  for (const TraceStep& s : steps) {
    ++n;
    std::string head = "\n" + std::to_string(n) + ". " + s.title;
    const std::string scope = detail::step_scope(s);
    if (!scope.empty()) head += " (" + scope + ")";
    const std::string shape = detail::step_shape(s);
    out += st.bold(head);
    if (!shape.empty()) out += "  " + st.accent(shape);
    out += "\n   " + s.formula + "\n";
    if (!s.note.empty()) out += "   " + st.dim(s.note) + "\n";
    if (s.id == "weighted_sum" && write_terms(s)) {
      out += weighted_sum_lines(s, o, false);
      continue;
    }
    if (s.values.size() == 0) continue;
    out += text_grid(detail::make_grid(s, o.precision, o.max_rows, o.max_cols, "-inf", "…"), st, "   ");
  }
  return out;
}

std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|' || c == '*' || c == '_' || c == '`') out += '\\';
    out += c;
  }
  return out;
}

std::string markdown_trace(const Problem& p, const std::vector<TraceStep>& steps,
                           const TraceOptions& o) {
  std::string out = "# " + md_escape(p.title.empty() ? "Attention trace" : p.title) + "\n\n";
  if (!p.description.empty()) out += md_escape(p.description) + "\n\n";
  if (!p.source_text.empty()) out += "Source: " + md_escape(p.source_text) + "\n\n";
  out += "- run: " + md_escape(describe_run(p)) + "\n";
  out += "- shapes: " + detail::input_shapes(p) + " → output " + detail::output_shape(p) + "\n";
  int n = 0;
  for (const TraceStep& s : steps) {
    ++n;
    out += "\n## " + std::to_string(n) + ". " + md_escape(s.title);
    const std::string scope = detail::step_scope(s);
    if (!scope.empty()) out += " (" + scope + ")";
    const std::string shape = detail::step_shape(s);
    if (!shape.empty()) out += " — " + shape;
    out += "\n\n`" + s.formula + "`\n\n";
    if (!s.note.empty()) out += "*" + md_escape(s.note) + "*\n\n";
    if (s.id == "weighted_sum" && write_terms(s)) {
      out += weighted_sum_lines(s, o, true);
      continue;
    }
    if (s.values.size() == 0) continue;
    const CellGrid g = detail::make_grid(s, o.precision, o.max_rows, o.max_cols, "−∞", "…");
    out += "|  |";
    for (const auto& c : g.col_labels) out += " " + md_escape(c) + " |";
    out += "\n|---|";
    for (size_t j = 0; j < g.col_labels.size(); ++j) out += "---:|";
    out += "\n";
    for (size_t i = 0; i < g.cells.size(); ++i) {
      out += "| **" + md_escape(g.row_labels[i]) + "** |";
      for (const auto& c : g.cells[i]) out += " " + c + " |";
      out += "\n";
    }
  }
  return out;
}

}  // namespace

std::string format_trace(const Problem& p, const std::vector<TraceStep>& steps,
                         const TraceOptions& o) {
  switch (o.format) {
    case TraceFormat::kText:
      return text_trace(p, steps, o);
    case TraceFormat::kMarkdown:
      return markdown_trace(p, steps, o);
    case TraceFormat::kLatex:
      return detail::latex_trace(p, steps, o);
    case TraceFormat::kJson:
      return detail::json_trace(p, steps, o);
  }
  return "";
}

}  // namespace attn
