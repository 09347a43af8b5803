#include "commands/diff_command.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "attn/compare.h"
#include "attn/error.h"
#include "attn/escape.h"
#include "attn/number_text.h"
#include "commands/input_files.h"
#include "commands/matrix_input.h"

namespace attn {

namespace {

// One side of the comparison, read as `attn heatmap` reads its input.
struct Side {
  std::string name;  // as messages name it
  MatrixInput m;
  Tensor<uint8_t> masked;  // an attn result's masked flags, in m.values' shape; empty if none
};

// The masked flags of an attn result as a tensor of its numbers' shape.
void keep_masked(Side& s) {
  if (s.m.masked.empty()) return;
  Values<uint8_t> flags(s.m.masked.begin(), s.m.masked.end());
  s.masked = Tensor<uint8_t>(s.m.values.shape(), std::move(flags));
  s.m.masked.clear();
}

Side read_side(const DiffRequest& req, const std::string& path) {
  Side s;
  s.name = display_name(path);
  if (std::optional<MatrixInput> result =
          read_npz_result(path, req.key, req.max_input_bytes, req.max_elements)) {
    s.m = std::move(*result);
    keep_masked(s);
    return s;
  }
  if (std::optional<BinaryArray> a = view_binary_matrix(path, req.max_input_bytes)) {
    if (!req.key.empty())
      throw_usage("--key " + req.key + ": " + s.name + " is not a JSON document");
    if (a->shape.size() > 4) {
      throw_input(s.name, "array of rank " + std::to_string(a->shape.size()) +
                              "; attn diff compares arrays of rank 1 to 4");
    }
    s.m.values = read_binary_matrix(*a, s.name, req.max_input_bytes, req.max_elements);
    return s;
  }
  s.m = read_text_matrix(path, req.key, s.name, req.max_input_bytes, req.progress);
  keep_masked(s);
  return s;
}

// Which cells are masked on both sides, and how that is known: both
// results' masked flags; one result's flags where the other side's weight
// is exactly 0; or, when neither says, a causal mask — every cell above
// the diagonal (top-left aligned, or bottom-right when there are more keys
// than queries) exactly 0 on both sides, in every matrix of weights whose
// rows are distributions or all zero. Only weights have masked cells.
struct MaskedBoth {
  Tensor<uint8_t> flags;  // empty when no cell is known to be masked on both sides
  std::string how;
};

bool rows_are_weights(const Tensor<double>& t, int64_t cols) {
  const double* v = t.data();
  for (int64_t r = 0; r * cols < t.size(); ++r) {
    const double* row = v + r * cols;
    if (std::all_of(row, row + cols, [](double x) { return x == 0; })) continue;
    if (!is_distribution(row, cols)) return false;
  }
  return true;
}

// Cells above the diagonal shifted right by `shift` (0: top-left aligned).
Tensor<uint8_t> above_diagonal(const Shape& shape, int64_t shift) {
  Tensor<uint8_t> f(shape);
  const size_t n = shape.size();
  const int64_t rows = shape[n - 2], cols = shape[n - 1];
  for (int64_t k = 0; k < f.size(); ++k) {
    const int64_t i = (k / cols) % rows, j = k % cols;
    f[k] = j > i + shift;
  }
  return f;
}

MaskedBoth masked_in_both(const Side& a, const Side& b) {
  MaskedBoth m;
  const Tensor<double>&va = a.m.values, &vb = b.m.values;
  const std::string& key = a.m.key.empty() ? b.m.key : a.m.key;
  if (va.shape() != vb.shape() || (!key.empty() && key != "weights") || va.rank() < 2) return m;
  auto zero_where = [](const Tensor<double>& v, const Tensor<uint8_t>& f) {
    for (int64_t k = 0; k < v.size(); ++k) {
      if (f[k] && v[k] != 0) return false;
    }
    return true;
  };
  if (!a.masked.empty() || !b.masked.empty()) {
    m.flags = Tensor<uint8_t>(va.shape());
    for (int64_t k = 0; k < va.size(); ++k) {
      const bool in_a = a.masked.empty() ? va[k] == 0 : a.masked[k] != 0;
      const bool in_b = b.masked.empty() ? vb[k] == 0 : b.masked[k] != 0;
      m.flags[k] = in_a && in_b;
    }
    m.how = a.masked.empty() || b.masked.empty()
                ? "one result's masked flags, exact zeros on the other side"
                : "the results' masked flags";
  } else {
    const int64_t rows = va.dim(va.rank() - 2), cols = va.dim(va.rank() - 1);
    if (rows < 2 || !rows_are_weights(va, cols) || !rows_are_weights(vb, cols)) return m;
    for (const int64_t shift : {int64_t{0}, std::max<int64_t>(0, cols - rows)}) {
      Tensor<uint8_t> f = above_diagonal(va.shape(), shift);
      if (std::find(f.values().begin(), f.values().end(), 1) == f.values().end()) break;
      if (zero_where(va, f) && zero_where(vb, f)) {
        m.flags = std::move(f);
        m.how = "zero above the diagonal in both: causal";
        break;
      }
    }
  }
  if (!m.flags.empty() &&
      std::find(m.flags.values().begin(), m.flags.values().end(), 1) == m.flags.values().end()) {
    m.flags = Tensor<uint8_t>();
  }
  return m;
}

// Without --key each document gives its weights, else its output: a result
// written without -w has no weights to compare with the other's.
void check_same_member(const Side& a, const Side& b) {
  if (a.m.key.empty() || b.m.key.empty() || a.m.key == b.m.key) return;
  const bool a_lacks = a.m.key != "weights";
  const Side& lacks = a_lacks ? a : b;
  const Side& has = a_lacks ? b : a;
  throw_input(lacks.name, "no \"" + has.m.key + "\" to compare with " + has.name + "'s " +
                              has.m.key +
                              "; write both with attn run -f json -w, or choose a "
                              "member of both with --key");
}

// Labels of n positions from the first side that has them.
std::vector<std::string> labels_of(const std::vector<std::string>& a,
                                   const std::vector<std::string>& b, int64_t n) {
  if (static_cast<int64_t>(a.size()) == n) return a;
  if (static_cast<int64_t>(b.size()) == n) return b;
  return {};
}

struct Names {
  std::vector<std::string> rows, cols;
  bool attention = false;  // rows are queries and columns keys
  std::string row(int64_t i) const {
    return rows.empty() ? std::to_string(i) : rows[static_cast<size_t>(i)];
  }
  std::string col(int64_t j) const {
    return cols.empty() ? std::to_string(j) : cols[static_cast<size_t>(j)];
  }
};

// A number for the table: fixed-point, or scientific where fixed-point
// would print a non-zero difference as 0.0000 (or take too many digits).
std::string number(double x, int precision) {
  if (std::isnan(x)) return "nan";
  if (x == 0 || !std::isfinite(x)) return format_fixed(x, precision);
  const double ax = std::fabs(x);
  if (ax < 0.5 * std::pow(10.0, -precision) || ax >= 1e7) {
    return format_scientific(x, std::max(1, std::min(precision, 4) - 1));
  }
  return format_fixed(x, precision);
}

// Width of a cell on a terminal: UTF-8 code points.
size_t width(const std::string& s) {
  size_t w = 0;
  for (char c : s) w += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return w;
}

// Aligned columns: text columns (labels) to the left, numbers to the right.
std::string aligned(const std::vector<std::vector<std::string>>& rows,
                    const std::vector<bool>& left) {
  std::vector<size_t> w(left.size(), 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) w[c] = std::max(w[c], width(r[c]));
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      const std::string pad(w[c] - width(r[c]), ' ');
      if (c > 0) line += "  ";
      line += left[c] ? r[c] + pad : pad + r[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string what(const Side& s, const Shape& shape) {
  return s.name + " (" + (s.m.key.empty() ? "" : s.m.key + " ") + shape_string(shape) + ")";
}

bool passed(const Comparison& c, const DiffRequest& req) {
  const double m = c.max_abs_diff();
  return !req.tolerance || (!std::isnan(m) && m <= *req.tolerance);
}

std::string format_table(const Comparison& c, const Side& a, const Side& b, const Names& n,
                         const MaskedBoth& masked, const DiffRequest& req) {
  const int p = req.precision;
  const bool batch = c.batch > 1, head = c.heads > 1;
  const bool dist = c.rows_compared > 0;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> left;
  std::vector<std::string> header;
  auto column = [&](const char* title, bool is_left) {
    header.push_back(title);
    left.push_back(is_left);
  };
  if (batch) column("batch", false);
  if (head) column("head", false);
  column("max |B-A|", false);
  column(n.attention ? "query" : "row", true);
  column(n.attention ? "key" : "column", true);
  column("A", false);
  column("B", false);
  column("mean |B-A|", false);
  if (dist) {
    column("KL mean", false);
    column("KL max", false);
    column(n.attention ? "at query" : "at row", true);
    column("H(A)", false);
    column("H(B)", false);
  }
  rows.push_back(header);
  for (const MatrixComparison& m : c.matrices) {
    std::vector<std::string> r;
    if (batch) r.push_back(std::to_string(m.batch));
    if (head) r.push_back(std::to_string(m.head));
    if (m.cells_masked == c.rows * c.cols) {
      // Nothing to compare: every cell is masked on both sides.
      for (const char* cell : {"masked", "-", "-", "masked", "masked", "masked"}) r.push_back(cell);
    } else {
      r.push_back(number(m.max_abs_diff, p));
      r.push_back(terminal_text(n.row(m.max_row)));
      r.push_back(terminal_text(n.col(m.max_col)));
      r.push_back(number(m.a_at_max, p));
      r.push_back(number(m.b_at_max, p));
      r.push_back(number(m.mean_abs_diff, p));
    }
    if (dist) {
      const bool any = m.rows_compared > 0;
      r.push_back(any ? number(m.kl_mean, p) : "-");
      r.push_back(any ? number(m.kl_max, p) : "-");
      r.push_back(any ? terminal_text(n.row(m.kl_max_row)) : "-");
      r.push_back(any ? number(m.entropy_a, p) : "-");
      r.push_back(any ? number(m.entropy_b, p) : "-");
    }
    rows.push_back(r);
  }
  std::string out = "A: " + terminal_text(what(a, c.shape)) + "\n" +
                    "B: " + terminal_text(what(b, c.shape)) + "\n\n" + aligned(rows, left);
  const int64_t all_rows = c.rows_compared + c.rows_skipped;
  if (dist) {
    out +=
        "\nKL = KL(A||B) and H = entropy, per row read as a distribution, in nats;\nmeans over "
        "the " +
        std::to_string(c.rows_compared) + " of " + std::to_string(all_rows) +
        " rows that are distributions on both sides";
    out += c.rows_skipped == 0 ? std::string(".\n")
                               : ";\n" + std::to_string(c.rows_skipped) +
                                     " skipped: not a distribution on a side.\n";
  } else {
    out +=
        "\nno KL divergence or entropy: no row is a distribution on both sides\n"
        "(non-negative finite numbers whose sum is above 0 and at most 1).\n";
  }
  if (c.cells_masked > 0) {
    out += std::to_string(c.cells_masked) + (c.cells_masked == 1 ? " cell" : " cells") +
           " masked on both sides (" + masked.how + ") " + (c.cells_masked == 1 ? "is" : "are") +
           " left out of max and mean |B-A|.\n";
  }
  int64_t infinite = 0;
  for (const MatrixComparison& m : c.matrices) infinite += m.rows_kl_infinite;
  if (infinite > 0) {
    out += "KL is inf in " + std::to_string(infinite) + (infinite == 1 ? " row" : " rows") +
           ": A gives weight to a key that B gives none.\n";
  }
  if (c.matrices.size() > 1) {
    const MatrixComparison& m = c.matrices[c.max_matrix];
    std::string at = batch ? "batch " + std::to_string(m.batch) + ", " : "";
    if (head) at += "head " + std::to_string(m.head) + ", ";
    out += "overall: max |B-A| " + number(m.max_abs_diff, p) + " at " + at +
           (n.attention ? "query " : "row ") + terminal_text(n.row(m.max_row)) +
           (n.attention ? ", key " : ", column ") + terminal_text(n.col(m.max_col)) +
           "; mean |B-A| " + number(c.mean_abs_diff, p) + "\n";
  }
  if (req.tolerance) {
    const std::string m = number(c.max_abs_diff(), p), t = format_shortest(*req.tolerance);
    if (std::isnan(c.max_abs_diff())) {
      out += "max |B-A| nan (a NaN on one side only), not within tolerance " + t +
             ": A and B differ\n";
    } else {
      out += passed(c, req) ? "max |B-A| " + m + " <= tolerance " + t + ": A and B agree\n"
                            : "max |B-A| " + m + " > tolerance " + t + ": A and B differ\n";
    }
  }
  return out;
}

using Json = nlohmann::ordered_json;

// attn writes non-finite numbers in JSON as "nan", "inf", "-inf".
Json json_number(double x) {
  if (std::isfinite(x)) return x;
  return format_shortest(x);
}

Json json_position(const Names& n, int64_t row, int64_t col) {
  Json j = {{"row", row}, {"col", col}};
  if (!n.rows.empty()) j["row_label"] = n.row(row);
  if (!n.cols.empty()) j["col_label"] = n.col(col);
  return j;
}

std::string format_json(const Comparison& c, const Side& a, const Side& b, const Names& n,
                        const DiffRequest& req) {
  Json out;
  auto side = [&](const Side& s) {
    Json j = {{"file", s.name}};
    if (!s.m.key.empty()) j["key"] = s.m.key;
    return j;
  };
  out["a"] = side(a);
  out["b"] = side(b);
  out["shape"] = c.shape;
  const MatrixComparison& top = c.matrices[c.max_matrix];
  out["max_abs_diff"] = json_number(top.max_abs_diff);
  Json at = json_position(n, top.max_row, top.max_col);
  at["batch"] = top.batch;
  at["head"] = top.head;
  at["a"] = json_number(top.a_at_max);
  at["b"] = json_number(top.b_at_max);
  out["at"] = at;
  out["mean_abs_diff"] = json_number(c.mean_abs_diff);
  out["rows_compared"] = c.rows_compared;
  out["rows_skipped"] = c.rows_skipped;
  out["cells_masked"] = c.cells_masked;
  if (req.tolerance) {
    out["tolerance"] = *req.tolerance;
    out["passed"] = passed(c, req);
  }
  Json list = Json::array();
  for (const MatrixComparison& m : c.matrices) {
    Json j = {{"batch", m.batch}, {"head", m.head}};
    j["max_abs_diff"] = json_number(m.max_abs_diff);
    Json mat = json_position(n, m.max_row, m.max_col);
    mat["a"] = json_number(m.a_at_max);
    mat["b"] = json_number(m.b_at_max);
    j["at"] = mat;
    j["mean_abs_diff"] = json_number(m.mean_abs_diff);
    j["rows_compared"] = m.rows_compared;
    j["rows_skipped"] = m.rows_skipped;
    j["cells_masked"] = m.cells_masked;
    if (m.rows_compared > 0) {
      Json kl = {{"mean", json_number(m.kl_mean)}, {"max", json_number(m.kl_max)}};
      kl["max_row"] = m.kl_max_row;
      if (!n.rows.empty()) kl["max_row_label"] = n.row(m.kl_max_row);
      kl["infinite_rows"] = m.rows_kl_infinite;
      j["kl"] = kl;
      j["entropy_a"] = json_number(m.entropy_a);
      j["entropy_b"] = json_number(m.entropy_b);
    } else {
      j["kl"] = nullptr;
      j["entropy_a"] = nullptr;
      j["entropy_b"] = nullptr;
    }
    list.push_back(j);
  }
  out["matrices"] = list;
  return out.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string format_csv(const Comparison& c, const Names& n) {
  std::string out =
      "batch,head,max_abs_diff,row,col,row_label,col_label,a,b,mean_abs_diff,kl_mean,kl_max,"
      "kl_max_row,entropy_a,entropy_b,rows_compared,rows_skipped,cells_masked\n";
  auto num = [](double x) { return format_shortest(x); };
  for (const MatrixComparison& m : c.matrices) {
    const bool any = m.rows_compared > 0;
    out += std::to_string(m.batch) + "," + std::to_string(m.head) + "," + num(m.max_abs_diff) +
           "," + std::to_string(m.max_row) + "," + std::to_string(m.max_col) + "," +
           (n.rows.empty() ? "" : csv_field(n.row(m.max_row))) + "," +
           (n.cols.empty() ? "" : csv_field(n.col(m.max_col))) + "," + num(m.a_at_max) + "," +
           num(m.b_at_max) + "," + num(m.mean_abs_diff) + "," + (any ? num(m.kl_mean) : "") + "," +
           (any ? num(m.kl_max) : "") + "," + (any ? std::to_string(m.kl_max_row) : "") + "," +
           (any ? num(m.entropy_a) : "") + "," + (any ? num(m.entropy_b) : "") + "," +
           std::to_string(m.rows_compared) + "," + std::to_string(m.rows_skipped) + "," +
           std::to_string(m.cells_masked) + "\n";
  }
  return out;
}

// B − A on a diverging scale centred on 0: ±max |B − A|, or ±X when only
// one of --vmin -X and --vmax X is given.
HeatmapData difference_figure(const Comparison& c, const Side& a, const Side& b, const Names& n,
                              const MaskedBoth& masked, const DiffRequest& req) {
  HeatmapData d = heatmap_from_tensor(c.diff);
  // Masked on both sides: hatched, as a run's figure hatches its masked cells.
  if (!masked.flags.empty()) d.masked = masked.flags.data();
  d.row_labels = n.rows;
  d.col_labels = n.cols;
  if (n.attention) {
    d.row_title = "queries";
    d.col_title = "keys";
  }
  d.value_name = "B − A";
  d.title = req.title.empty() ? "B − A" : req.title;
  const std::string& key = a.m.key.empty() ? b.m.key : a.m.key;
  d.subtitle = "A: " + a.name + ", B: " + b.name + " (" + (key.empty() ? "" : key + " ") +
               shape_string(c.shape) + ")";
  d.source = b.name;
  return d;
}

HeatmapOptions difference_options(const DiffRequest& req) {
  HeatmapOptions o = req.options;
  o.colormap = Colormap::kRdBu;
  if (o.vmin && !o.vmax && *o.vmin < 0) o.vmax = -*o.vmin;
  if (o.vmax && !o.vmin && *o.vmax > 0) o.vmin = -*o.vmax;
  return o;
}

}  // namespace

int diff_command(const DiffRequest& req, Console& console) {
  if (req.a == "-" && req.b == "-") {
    throw_usage("diff: A and B are both stdin (-); at most one of them can be read from stdin");
  }
  const std::string& h = req.heatmap_path;
  if (!h.empty() && is_stdout(h)) {
    throw_usage("--heatmap " + h +
                " writes the figure to stdout, which already carries the result; "
                "write the figure to a file");
  }
  InputFiles inputs;
  inputs.add(req.a);
  inputs.add(req.b);
  inputs.add_font(req.options.font);
  inputs.refuse_output(h, "--heatmap");
  if (req.show && req.format != Format::kTable) {
    throw_usage(std::string("--show would mix the preview into the ") +
                (req.format == Format::kJson ? "json" : "csv") +
                " on stdout; drop --show, or draw the figure with --heatmap FILE");
  }
  const Side a = read_side(req, req.a);
  const Side b = read_side(req, req.b);
  check_same_member(a, b);
  const MaskedBoth masked = masked_in_both(a, b);
  const Comparison c = compare_matrices(a.m.values, b.m.values, a.name, b.name,
                                        masked.flags.empty() ? nullptr : masked.flags.data());

  Names n;
  n.rows = labels_of(a.m.row_labels, b.m.row_labels, c.rows);
  n.cols = labels_of(a.m.col_labels, b.m.col_labels, c.cols);
  const std::string& key = a.m.key.empty() ? b.m.key : a.m.key;
  n.attention = key == "weights" || key == "scores";

  // Everything is rendered before anything is written.
  std::string figure, preview;
  if (!h.empty() || req.show) {
    const HeatmapData d = difference_figure(c, a, b, n, masked, req);
    const HeatmapOptions o = difference_options(req);
    if (!h.empty()) figure = render_heatmap_file(d, o, h);
    if (req.show) preview = render_terminal(d, o, req.terminal);
  }
  std::string summary = req.format == Format::kJson  ? format_json(c, a, b, n, req)
                        : req.format == Format::kCsv ? format_csv(c, n)
                                                     : format_table(c, a, b, n, masked, req);
  if (!h.empty()) write_file_atomic(h, figure);
  console.out(summary);
  if (req.show) console.out("\n" + preview);
  return passed(c, req) ? 0 : 1;
}

}  // namespace attn
