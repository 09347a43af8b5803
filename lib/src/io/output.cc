#include "attn/output.h"

#include <algorithm>
#include <cmath>

#include "attn/escape.h"
#include "attn/heatmap.h"
#include "attn/npy.h"
#include "attn/npz.h"
#include "base/elide.h"
#include "base/number_text.h"
#include "base/select_index.h"
#include "io/json_writer.h"

namespace attn {

std::optional<Format> parse_format(std::string_view s) {
  if (s == "table") return Format::kTable;
  if (s == "json") return Format::kJson;
  if (s == "csv") return Format::kCsv;
  return std::nullopt;
}

const std::vector<std::string>& format_names() {
  static const std::vector<std::string> names = {"table", "json", "csv"};
  return names;
}

namespace {

constexpr int kTableMaxRows = 40;
constexpr int kTableMaxCols = 12;

void append_number(std::string& out, double v, DType dtype) {
  if (!std::isfinite(v)) {
    out += '"';
    append_shortest(out, v);
    out += '"';
    return;
  }
  if (dtype == DType::kF32) {
    append_shortest(out, static_cast<float>(v));
  } else {
    append_shortest(out, v);
  }
}

}  // namespace

Tensor<double> round_digits(const Tensor<double>& t, int digits) {
  if (digits < 0) return t;
  Tensor<double> r = t;
  const double scale = std::pow(10.0, digits);
  for (int64_t i = 0; i < r.size(); ++i) {
    const double v = r.data()[i];
    // Past 2^52 / scale a double has no digits after the point to round.
    if (std::isfinite(v) && std::fabs(v) * scale < 4.5e15)
      r.data()[i] = std::round(v * scale) / scale;
  }
  return r;
}

void append_csv_number(std::string& out, double v, DType dtype) {
  if (std::isfinite(v) && dtype == DType::kF32) {
    append_shortest(out, static_cast<float>(v));
  } else {
    append_shortest(out, v);  // CSV readers accept nan/inf unquoted
  }
}

namespace {

// The axes of the weights as a result stores them.
std::vector<std::string> weights_axes(const Problem& p, const Tensor<double>& weights) {
  const int64_t rank = weights.rank();
  const bool batched = p.batched || p.four_d;
  std::vector<std::string> axes;
  if (rank == 4 || (rank == 3 && batched)) axes.push_back("batch");
  if (rank == 4 || (rank == 3 && !batched)) axes.push_back("heads");
  axes.push_back("queries");
  axes.push_back("keys");
  return axes;
}

// The weights' masked flags when some cell is masked; null otherwise.
const uint8_t* some_masked(const Result& r) {
  if (!r.weights || !r.masked || r.masked->size() != r.weights->size()) return nullptr;
  const uint8_t* m = r.masked->data();
  return std::find(m, m + r.masked->size(), uint8_t{1}) != m + r.masked->size() ? m : nullptr;
}

std::string json_result(const Problem& p, const Result& r, const OutputOptions& o,
                        const Similarity* sim) {
  std::string out;
  JsonWriter w(out);
  w.begin_object(JsonLayout::kBlock);
  // The labels travel with the numbers, so a figure drawn from this file
  // (attn heatmap result.json) names its rows and columns as the run did.
  if (!p.query_labels.empty() || !p.key_labels.empty()) {
    w.key("labels").begin_object(JsonLayout::kInline);
    w.key("queries").strings(p.query_labels).key("keys").strings(p.key_labels).end_object();
    // The tokens as tables and figures show them (--token-style readable);
    // "labels" keeps them as given.
    w.key("labels_readable").begin_object(JsonLayout::kInline);
    w.key("queries")
        .strings(shown_tokens(p.query_labels, TokenStyle::kReadable))
        .key("keys")
        .strings(shown_tokens(p.key_labels, TokenStyle::kReadable))
        .end_object();
  }
  // What its figure needs besides: the title, the settings line, the axes
  // of the weights and which of them are masked.
  if (!p.title.empty()) w.key("title").string(p.title);
  w.key("settings").string(describe_run(p));
  write_json_tensor(w.key("output"), r.output, r.dtype);
  if (o.weights && r.weights) {
    write_json_tensor(w.key("weights"), *r.weights, r.dtype);
    w.key("weights_axes").strings(weights_axes(p, *r.weights));
    if (const uint8_t* mask = some_masked(r)) {
      Tensor<double> m(r.weights->shape());
      for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = mask[i];
      write_json_tensor(w.key("masked"), m, DType::kF64);
    }
  }
  if (sim) {
    w.key("similarity").begin_object(JsonLayout::kBlock);
    write_json_tensor(w.key("input"), sim->input, DType::kF64);
    write_json_tensor(w.key("output"), sim->output, DType::kF64);
    w.end_object();
  }
  w.end_object();
  out += '\n';
  return out;
}

// Decides fixed or scientific notation for a whole matrix, so that columns
// line up and small values are not all printed as 0.0000.
bool use_scientific(const double* v, int64_t n, int precision) {
  double max_abs = 0, min_nonzero = INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) continue;
    const double a = std::fabs(v[i]);
    max_abs = std::max(max_abs, a);
    if (a > 0) min_nonzero = std::min(min_nonzero, a);
  }
  if (max_abs >= 1e7) return true;
  return max_abs > 0 && max_abs < std::pow(10.0, -precision);
}

std::vector<std::string> index_labels(int64_t n, const std::string& prefix = "") {
  std::vector<std::string> l;
  for (int64_t i = 0; i < n; ++i) l.push_back(prefix + std::to_string(i));
  return l;
}

// Display width in characters (UTF-8 code points) of a label.
size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

void pad_left(std::string& out, const std::string& s, size_t width) {
  const size_t w = display_width(s);
  if (w < width) out.append(width - w, ' ');
  out += s;
}

void pad_right(std::string& out, const std::string& s, size_t width) {
  out += s;
  const size_t w = display_width(s);
  if (w < width) out.append(width - w, ' ');
}

// Prints a tensor whose last two axes are a matrix, one block per leading
// index, with a caption naming the block; `head` >= 0 prints only the
// blocks of that head (the leading axis named "head").
void table_blocks(std::string& out, const std::string& name, const Tensor<double>& t,
                  const std::vector<std::string>& leading_names,
                  const std::vector<std::string>& rows, const std::vector<std::string>& cols,
                  int precision, const Tensor<uint8_t>* masked, int64_t head = -1) {
  const Shape& s = t.shape();
  const int64_t r = s[s.size() - 2], c = s[s.size() - 1];
  const int64_t blocks = t.size() / std::max<int64_t>(1, r * c);
  bool first = true;
  for (int64_t b = 0; b < blocks; ++b) {
    std::string caption = name;
    int64_t rest = b;
    std::vector<int64_t> idx(s.size() - 2);
    for (size_t a = idx.size(); a-- > 0;) {
      idx[a] = rest % s[a];
      rest /= s[a];
    }
    bool shown = true;
    for (size_t a = 0; a < idx.size(); ++a) {
      if (head >= 0 && leading_names[a] == "head" && idx[a] != head) shown = false;
    }
    if (!shown) continue;
    if (!first) out += "\n";
    first = false;
    for (size_t a = 0; a < idx.size(); ++a) {
      caption += (a == 0 ? " (" : ", ") + leading_names[a] + " " + std::to_string(idx[a]);
      if (a + 1 == idx.size()) caption += ")";
    }
    caption += "  " + shape_string({r, c});
    out += caption + "\n";
    out += format_table_matrix(t.data() + b * r * c, r, c, rows, cols, precision,
                               masked ? masked->data() + b * r * c : nullptr);
  }
}

std::string table_result(const Problem& p, const Result& r, const OutputOptions& o) {
  std::string out;
  if (!p.title.empty()) out += terminal_text(p.title) + "\n";
  out += "attention: " + describe_run(p) + "\n\n";
  std::vector<std::string> lead;
  if (p.batched) lead.push_back("batch");
  if (p.four_d) lead.push_back("head");
  std::vector<std::string> out_cols;
  // Tokens as they read (--token-style readable), as figures show them.
  const std::vector<std::string> rows = shown_tokens(p.query_labels, TokenStyle::kReadable);
  const std::vector<std::string> cols = shown_tokens(p.key_labels, TokenStyle::kReadable);
  if (o.table_output || !r.weights) {
    table_blocks(out, "output", r.output, lead, rows, out_cols, o.precision, nullptr, o.head);
  }
  if (o.weights && r.weights) {
    if (o.table_output) out += "\n";
    std::vector<std::string> wlead;
    if (p.batched) wlead.push_back("batch");
    if (r.weights->rank() - (p.batched ? 1 : 0) == 3) wlead.push_back("head");
    // Under a finite mask_fill a masked cell has the weight the arithmetic
    // gives (uniform in a fully masked row): show the number then.
    const Tensor<uint8_t>* masked = r.masked && std::isinf(p.mask_fill) ? &*r.masked : nullptr;
    const bool averaged = p.heads > 1 && wlead.size() == (p.batched ? 1u : 0u);
    const std::string name =
        averaged ? "weights, mean of " + std::to_string(p.heads) + " heads" : "weights";
    table_blocks(out, name, *r.weights, wlead, rows, cols, o.precision, masked, o.head);
  }
  return out;
}

// The index of the weights' head axis; -1 when they have none.
int head_axis(const Problem& p, const Tensor<double>& weights) {
  const std::vector<std::string> axes = weights_axes(p, weights);
  const auto at = std::find(axes.begin(), axes.end(), "heads");
  return at == axes.end() ? -1 : static_cast<int>(at - axes.begin());
}

}  // namespace

Result one_head(const Problem& p, const Result& r, int64_t head) {
  Result n;
  n.output = p.four_d ? detail::select_index(r.output, 1, head) : r.output;
  if (r.weights) {
    const int axis = head_axis(p, *r.weights);
    auto pick = [&](const auto& t) { return axis < 0 ? t : detail::select_index(t, axis, head); };
    n.weights = pick(*r.weights);
    if (r.scores) n.scores = pick(*r.scores);
    if (r.masked) n.masked = pick(*r.masked);
  }
  n.fully_masked_rows = r.fully_masked_rows;
  n.dtype = r.dtype;
  return n;
}

void append_json_tensor(std::string& out, const Tensor<double>& t, DType dtype, int indent) {
  JsonWriter w(out, NumberStyle::kShortest, indent);
  write_json_tensor(w, t, dtype);
}

std::string format_table_matrix(const double* values, int64_t rows, int64_t cols,
                                const std::vector<std::string>& row_labels,
                                const std::vector<std::string>& col_labels, int precision,
                                const uint8_t* masked) {
  // Tables are for people: a large matrix shows its corners (JSON, CSV and
  // .npy always hold everything).
  const std::vector<int64_t> ri = detail::shown_indices(rows, kTableMaxRows);
  const std::vector<int64_t> ci = detail::shown_indices(cols, kTableMaxCols);
  const bool sci = use_scientific(values, rows * cols, precision);
  std::vector<std::string> rl =
      static_cast<int64_t>(row_labels.size()) == rows ? row_labels : index_labels(rows);
  std::vector<std::string> cl =
      static_cast<int64_t>(col_labels.size()) == cols ? col_labels : index_labels(cols);
  // Labels come from the input: made safe for a terminal before widths are taken.
  for (std::string& l : rl) l = terminal_text(l);
  for (std::string& l : cl) l = terminal_text(l);
  auto cell = [&](int64_t i, int64_t j) -> std::string {
    if (i < 0 || j < 0) return "…";
    const int64_t k = i * cols + j;
    if (masked && masked[k]) return "masked";
    return sci ? format_scientific(values[k], precision) : format_fixed(values[k], precision);
  };
  std::vector<std::vector<std::string>> cells;
  for (int64_t i : ri) {
    std::vector<std::string> line;
    for (int64_t j : ci) line.push_back(cell(i, j));
    cells.push_back(std::move(line));
  }
  size_t label_w = 0;
  for (int64_t i : ri)
    label_w = std::max(label_w, i < 0 ? 1 : display_width(rl[static_cast<size_t>(i)]));
  std::vector<size_t> col_w(ci.size(), 0);
  for (size_t j = 0; j < ci.size(); ++j) {
    col_w[j] = ci[j] < 0 ? 1 : display_width(cl[static_cast<size_t>(ci[j])]);
    for (const auto& line : cells) col_w[j] = std::max(col_w[j], display_width(line[j]));
  }
  std::string out;
  out.append(label_w, ' ');
  for (size_t j = 0; j < ci.size(); ++j) {
    out += "  ";
    pad_left(out, ci[j] < 0 ? "…" : cl[static_cast<size_t>(ci[j])], col_w[j]);
  }
  out += '\n';
  for (size_t r = 0; r < ri.size(); ++r) {
    pad_right(out, ri[r] < 0 ? "…" : rl[static_cast<size_t>(ri[r])], label_w);
    for (size_t j = 0; j < ci.size(); ++j) {
      out += "  ";
      pad_left(out, cells[r][j], col_w[j]);
    }
    out += '\n';
  }
  if (rows > kTableMaxRows || cols > kTableMaxCols) {
    out += "(showing " + std::to_string(std::min<int64_t>(rows, kTableMaxRows - 1)) + " of " +
           std::to_string(rows) + " rows and " +
           std::to_string(std::min<int64_t>(cols, kTableMaxCols - 1)) + " of " +
           std::to_string(cols) + " columns; --format json or csv prints everything)\n";
  }
  return out;
}

namespace {

// The weights as a long table, a row per cell: layer, batch, head, query,
// key, the two tokens (CSV fields) and the weight; masked cells nan.
std::string long_csv(const Problem& p, const Result& r, const OutputOptions& o) {
  std::string out = "layer,batch,head,query,key,query_token,key_token,weight\n";
  if (!r.weights) return out;
  const Tensor<double>& w = *r.weights;
  const std::vector<std::string> axes = weights_axes(p, w);
  const Shape& s = w.shape();
  const int64_t q = s[s.size() - 2], k = s[s.size() - 1];
  const bool has_batch = axes.front() == "batch";
  const bool has_heads = axes.size() == 4 || (axes.size() == 3 && axes.front() == "heads");
  const int64_t batches = has_batch ? s[0] : 1;
  const int64_t heads = has_heads ? s[s.size() - 3] : 1;
  auto fields = [](const std::vector<std::string>& labels, int64_t n) {
    std::vector<std::string> f;
    for (int64_t i = 0; i < n; ++i) {
      f.push_back(static_cast<int64_t>(labels.size()) == n
                      ? csv_field(labels[static_cast<size_t>(i)])
                      : "");
    }
    return f;
  };
  const std::vector<std::string> qf = fields(p.query_labels, q), kf = fields(p.key_labels, k);
  const uint8_t* masked = r.masked && r.masked->size() == w.size() ? r.masked->data() : nullptr;
  const std::string layer = std::to_string(o.layer) + ",";
  int64_t at = 0;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      // A head taken out with --head keeps its number.
      const int64_t head = o.head >= 0 ? o.head : h;
      const std::string lead = layer + std::to_string(b) + "," + std::to_string(head) + ",";
      for (int64_t i = 0; i < q; ++i) {
        for (int64_t j = 0; j < k; ++j, ++at) {
          out += lead + std::to_string(i) + "," + std::to_string(j) + "," +
                 qf[static_cast<size_t>(i)] + "," + kf[static_cast<size_t>(j)] + ",";
          append_csv_number(out, masked && masked[at] ? NAN : w[at], r.dtype);
          out += '\n';
        }
      }
    }
  }
  return out;
}

// A result's block of CSV under its comment line, with a header row of
// column labels and the row labels first when the rows have labels. The
// output's columns are named d0, d1, ...: a header of numbers would read
// back as a row of them. The
// output's columns are named d0, d1, ...: a header of numbers would read
// back as a row of them.
std::string labelled_csv(const Tensor<double>& t, DType dtype, const std::string& name,
                         const std::vector<std::string>& rows,
                         const std::vector<std::string>& cols) {
  const Shape& s = t.shape();
  if (t.rank() < 2 || static_cast<int64_t>(rows.size()) != s[s.size() - 2]) {
    return format_csv_tensor(t, dtype, name);
  }
  const int64_t c = s[s.size() - 1];
  std::string header = "token";
  for (int64_t j = 0; j < c; ++j) {
    header +=
        "," + (static_cast<int64_t>(cols.size()) == c ? csv_field(cols[static_cast<size_t>(j)])
                                                      : "d" + std::to_string(j));
  }
  std::string out;
  size_t row = 0;
  const std::string plain = format_csv_tensor(t, dtype, name);
  // Each line of numbers gets its row's label; each block its header.
  size_t pos = 0;
  bool header_due = true;
  while (pos < plain.size()) {
    const size_t end = plain.find('\n', pos);
    const std::string line = plain.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("#", 0) == 0) {
      out += line + "\n";
      header_due = true;
      continue;
    }
    if (header_due) out += header + "\n";
    header_due = false;
    out += csv_field(rows[row % rows.size()]) + "," + line + "\n";
    ++row;
  }
  return out;
}

}  // namespace

std::string format_csv_tensor(const Tensor<double>& t, DType dtype, const std::string& name) {
  std::string out;
  out += "# " + name + " " + shape_string(t.shape()) + "\n";
  const Shape& s = t.shape();
  if (t.rank() < 2) {
    for (int64_t i = 0; i < t.size(); ++i) {
      if (i) out += ',';
      append_number(out, t[i], dtype);
    }
    out += '\n';
    return out;
  }
  const int64_t r = s[s.size() - 2], c = s[s.size() - 1];
  const int64_t blocks = t.size() / std::max<int64_t>(1, r * c);
  for (int64_t b = 0; b < blocks; ++b) {
    if (t.rank() > 2) {
      std::vector<int64_t> idx(s.size() - 2);
      int64_t rest = b;
      for (size_t a = idx.size(); a-- > 0;) {
        idx[a] = rest % s[a];
        rest /= s[a];
      }
      out += "# index";
      for (int64_t x : idx) out += " " + std::to_string(x);
      out += '\n';
    }
    const double* d = t.data() + b * r * c;
    for (int64_t i = 0; i < r; ++i) {
      for (int64_t j = 0; j < c; ++j) {
        if (j) out += ',';
        const double v = d[i * c + j];
        if (std::isfinite(v)) {
          append_number(out, v, dtype);
        } else {
          append_shortest(out, v);  // CSV readers accept nan/inf unquoted
        }
      }
      out += '\n';
    }
  }
  return out;
}

std::string format_result(const Problem& p, const Result& r, const OutputOptions& o,
                          const Similarity* similarity) {
  if (o.digits >= 0 && o.format != Format::kTable) {
    // --precision rounds the numbers of JSON and CSV when it is given.
    Result rounded = r;
    rounded.output = round_digits(r.output, o.digits);
    if (r.weights) rounded.weights = round_digits(*r.weights, o.digits);
    OutputOptions every = o;
    every.digits = -1;
    return format_result(p, rounded, every, similarity);
  }
  // The long table numbers the head it keeps.
  if (o.head >= 0 && o.long_csv && o.format == Format::kCsv) {
    return long_csv(p, one_head(p, r, o.head), o);
  }
  if (o.head >= 0 && o.format != Format::kTable) {
    OutputOptions every = o;
    every.head = -1;
    return format_result(p, one_head(p, r, o.head), every, similarity);
  }
  switch (o.format) {
    case Format::kJson:
      return json_result(p, r, o, similarity);
    case Format::kCsv: {
      if (o.long_csv) return long_csv(p, r, o);
      std::string out = labelled_csv(r.output, r.dtype, "output", p.query_labels, {});
      if (o.weights && r.weights) {
        out += labelled_csv(*r.weights, r.dtype, "weights", p.query_labels, p.key_labels);
      }
      if (similarity) {
        out += format_csv_tensor(similarity->input, DType::kF64, "similarity_input");
        out += format_csv_tensor(similarity->output, DType::kF64, "similarity_output");
      }
      return out;
    }
    case Format::kTable:
      return table_result(p, r, o);
  }
  return "";
}

std::string format_result_npz(const Problem& p, const Result& r, const OutputOptions& o,
                              const Similarity* sim) {
  if (o.head >= 0) {
    OutputOptions every = o;
    every.head = -1;
    return format_result_npz(p, one_head(p, r, o.head), every, sim);
  }
  // The members of the JSON result, under the same names; labels split in
  // two lists, strings as NumPy's '<U' arrays, masked cells as booleans.
  std::vector<std::pair<std::string, std::string>> members;
  if (!p.query_labels.empty() || !p.key_labels.empty()) {
    members.emplace_back("labels_queries", format_npy_strings(p.query_labels, false));
    members.emplace_back("labels_keys", format_npy_strings(p.key_labels, false));
  }
  if (!p.title.empty()) members.emplace_back("title", format_npy_strings({p.title}, true));
  members.emplace_back("settings", format_npy_strings({describe_run(p)}, true));
  members.emplace_back("output", format_npy(r.output, r.dtype));
  if (o.weights && r.weights) {
    members.emplace_back("weights", format_npy(*r.weights, r.dtype));
    members.emplace_back("weights_axes", format_npy_strings(weights_axes(p, *r.weights), false));
    if (const uint8_t* mask = some_masked(r)) {
      members.emplace_back("masked", format_npy_bool(mask, r.weights->shape()));
    }
  }
  if (sim) {
    members.emplace_back("similarity_input", format_npy(sim->input, DType::kF64));
    members.emplace_back("similarity_output", format_npy(sim->output, DType::kF64));
  }
  return format_npz(members);
}

}  // namespace attn
