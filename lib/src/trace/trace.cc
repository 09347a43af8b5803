// Text and Markdown traces, and the format dispatch. LaTeX and JSON have
// their own files; what each step is called and its formula come from
// step_words (wording.cc).
#include "attn/trace.h"

#include <algorithm>

#include "attn/escape.h"
#include "base/number_text.h"
#include "trace/cells.h"

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

namespace {

// Steps whose rows are the queries, one row each, computed row by row.
bool query_rows(StepId id) {
  static const StepId ids[] = {
      StepId::kInputQ,           StepId::kProjectionQ, StepId::kHeadQ,
      StepId::kCosineQ,          StepId::kAdditiveQ,   StepId::kScores,
      StepId::kScaled,           StepId::kBiased,      StepId::kMasked,
      StepId::kRowMax,           StepId::kExp,         StepId::kRowSum,
      StepId::kWeights,          StepId::kDropout,     StepId::kWeightedSum,
      StepId::kOutputScaled,     StepId::kHeadOutput,  StepId::kConcat,
      StepId::kOutputProjection, StepId::kOutput,      StepId::kSingleLayerPre,
      StepId::kBiInputDot,       StepId::kBiCrossDot,  StepId::kBiO1,
      StepId::kSimilarityOutput, StepId::kExpected,    StepId::kExpectedReading};
  return std::find(std::begin(ids), std::end(ids), id) != std::end(ids);
}

template <class M>
M row_of(const M& m, int64_t i) {
  return m.rows() > i ? M(m.row(i)) : m;
}

}  // namespace

std::vector<TraceStep> select_steps(std::vector<TraceStep> steps, const TraceSelection& sel) {
  std::vector<TraceStep> kept;
  for (TraceStep& s : steps) {
    if (sel.batch >= 0 && s.batch >= 0 && s.batch != sel.batch) continue;
    if (sel.head >= 0 && s.head >= 0 && s.head != sel.head) continue;
    const int64_t q = sel.query;
    if (q >= 0 && query_rows(s.id) && s.values.rows() > q) {
      const int64_t cols = s.values.cols();
      if (!s.masked.empty()) {
        s.masked =
            std::vector<uint8_t>(s.masked.begin() + q * cols, s.masked.begin() + (q + 1) * cols);
      }
      s.values = row_of(s.values, q);
      s.weights = row_of(s.weights, q);
      // The row keeps its name: its label, or its index in the whole input.
      const size_t qi = static_cast<size_t>(q);
      s.row_labels = {qi < s.row_labels.size() ? s.row_labels[qi] : std::to_string(q)};
    }
    kept.push_back(std::move(s));
  }
  return kept;
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

// "0.25·v_cat + 0.25·v_milk = [0, 1.25]" for each query row; in Markdown
// each line is a code span in a list item.
std::string weighted_sum_lines(const TraceStep& s, const TraceOptions& o, bool markdown) {
  std::vector<std::string> names = detail::value_names(s);
  for (std::string& n : names) n = terminal_text(n);
  std::string out;
  const int64_t rows = s.weights.rows();
  size_t lw = 0;
  std::vector<std::string> labels;
  for (int64_t i = 0; i < rows; ++i) {
    labels.push_back(terminal_text(static_cast<int64_t>(s.row_labels.size()) == rows
                                       ? s.row_labels[static_cast<size_t>(i)]
                                       : std::to_string(i)));
    lw = std::max(lw, width_of(labels.back()));
  }
  for (int64_t i = 0; i < rows; ++i) {
    std::string line = pad_right(labels[static_cast<size_t>(i)], lw) + " = ";
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
    out += markdown ? "- " + markdown_code(line) + "\n" : "   " + line + "\n";
  }
  return out;
}

bool write_terms(const TraceStep& s) {
  return s.weights.cols() <= 8 && s.values.cols() <= 8 && s.weights.rows() <= 16;
}

std::string header_text(const Problem& p, const Style& st, const std::string& showing) {
  std::string out;
  out += st.bold(p.title.empty() ? "Attention trace" : terminal_text(p.title)) + "\n";
  if (!p.description.empty()) out += terminal_text(p.description) + "\n";
  if (!p.source_text.empty()) out += "source: " + terminal_text(p.source_text) + "\n";
  out += "run:    " + describe_run(p) + "\n";
  out += "shapes: " + detail::input_shapes(p) + " -> output " + detail::output_shape(p) + "\n";
  if (!showing.empty()) out += "showing: " + showing + " (the other steps are left out)\n";
  return out;
}

std::string text_trace(const Problem& p, const std::vector<TraceStep>& steps,
                       const TraceOptions& o) {
  const Style st{o.color};
  std::string out = header_text(p, st, o.showing);
  int n = 0;
  for (const TraceStep& s : steps) {
    ++n;
    const StepWords w = step_words(s, o.precision);
    std::string head = "\n" + std::to_string(n) + ". " + w.title;
    const std::string scope = detail::step_scope(s);
    if (!scope.empty()) head += " (" + scope + ")";
    const std::string shape = detail::step_shape(s);
    out += st.bold(head);
    if (!shape.empty()) out += "  " + st.accent(shape);
    out += "\n   " + w.formula + "\n";
    if (!w.note.empty()) out += "   " + st.dim(w.note) + "\n";
    if (s.id == StepId::kWeightedSum && write_terms(s)) {
      out += weighted_sum_lines(s, o, false);
      continue;
    }
    if (s.values.size() == 0) continue;
    CellGrid g = detail::make_grid(s, o.precision, o.max_rows, o.max_cols, "-inf", "…");
    for (std::string& l : g.row_labels) l = terminal_text(l);
    for (std::string& l : g.col_labels) l = terminal_text(l);
    out += text_grid(g, st, "   ");
  }
  return out;
}

std::string markdown_trace(const Problem& p, const std::vector<TraceStep>& steps,
                           const TraceOptions& o) {
  std::string out = "# " + markdown_text(p.title.empty() ? "Attention trace" : p.title) + "\n\n";
  if (!p.description.empty()) out += markdown_text(p.description) + "\n\n";
  if (!p.source_text.empty()) out += "Source: " + markdown_text(p.source_text) + "\n\n";
  out += "- run: " + markdown_text(describe_run(p)) + "\n";
  out += "- shapes: " + detail::input_shapes(p) + " → output " + detail::output_shape(p) + "\n";
  if (!o.showing.empty()) out += "- showing: " + o.showing + "\n";
  int n = 0;
  for (const TraceStep& s : steps) {
    ++n;
    const StepWords w = step_words(s, o.precision);
    out += "\n## " + std::to_string(n) + ". " + markdown_text(w.title);
    const std::string scope = detail::step_scope(s);
    if (!scope.empty()) out += " (" + scope + ")";
    const std::string shape = detail::step_shape(s);
    if (!shape.empty()) out += " — " + shape;
    out += "\n\n" + markdown_code(w.formula) + "\n\n";
    if (!w.note.empty()) out += "*" + markdown_text(w.note) + "*\n\n";
    if (s.id == StepId::kWeightedSum && write_terms(s)) {
      out += weighted_sum_lines(s, o, true);
      continue;
    }
    if (s.values.size() == 0) continue;
    const CellGrid g = detail::make_grid(s, o.precision, o.max_rows, o.max_cols, "−∞", "…");
    out += "|  |";
    for (const auto& c : g.col_labels) out += " " + markdown_text(c) + " |";
    out += "\n|---|";
    for (size_t j = 0; j < g.col_labels.size(); ++j) out += "---:|";
    out += "\n";
    for (size_t i = 0; i < g.cells.size(); ++i) {
      out += "| **" + markdown_text(g.row_labels[i]) + "** |";
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
