#include "commands/diff_command.h"

#include <algorithm>
#include <cmath>

#include "attn/compare.h"
#include "attn/error.h"
#include "attn/escape.h"
#include "attn/heatmap.h"
#include "base/number_text.h"
#include "base/select_index.h"
#include "commands/diff_stacks.h"
#include "commands/exit_codes.h"
#include "commands/input_files.h"
#include "commands/matrix_input.h"
#include "io/json_writer.h"

namespace attn {

namespace {

// One side of the comparison, read as `attn heatmap` reads its input.
struct Side {
  const char* which = "A";  // "A" or "B"
  std::string name;         // as messages name it
  MatrixInput m;
  Tensor<uint8_t> masked;  // an attn result's masked flags, in m.values' shape; empty if none
  Shape read_shape;        // as read, before --layer and --head took their part
  std::optional<int64_t> layer, head;  // what --layer and --head took of it

  // "layer 1, head 2"; "" when the side is compared whole.
  std::string picked() const {
    std::string p = layer ? "layer " + std::to_string(*layer) : "";
    if (head) p += (p.empty() ? "" : ", ") + std::string("head ") + std::to_string(*head);
    return p;
  }
};

// The masked flags of an attn result as a tensor of its numbers' shape.
void keep_masked(Side& s) {
  if (s.m.masked.empty()) return;
  Values<uint8_t> flags(s.m.masked.begin(), s.m.masked.end());
  s.masked = Tensor<uint8_t>(s.m.values.shape(), std::move(flags));
  s.m.masked.clear();
}

// Reads a side: a matrix of rank 1 to 4, or a stack of a model's weights,
// [layers][batch][heads][q][k], of which --layer takes one layer.
Side read_side(const DiffRequest& req, const std::string& path, const char* which) {
  Side s;
  s.which = which;
  s.name = display_name(path);
  if (std::optional<MatrixInput> result =
          read_npz_result(path, req.key, req.max_input_bytes, req.max_elements)) {
    s.m = std::move(*result);
  } else if (std::optional<NpzStack> stack = read_npz_stack(path, req.max_input_bytes)) {
    // A model's stack with its tokens: they label the rows and columns.
    std::optional<BinaryArray> a = view_binary_matrix(stack->weights, req.max_input_bytes);
    if (!a) throw_input(s.name + ":weights", "expected a stack [layers][batch][heads][q][k]");
    s.m.values = read_binary_matrix(*a, s.name, req.max_input_bytes, req.max_elements);
    s.m.row_labels = s.m.col_labels = stack->tokens;
  } else if (std::optional<BinaryArray> a = view_binary_matrix(path, req.max_input_bytes)) {
    if (!req.key.empty())
      throw_usage("--key " + req.key + ": " + s.name + " is not a JSON document");
    s.m.values = read_binary_matrix(*a, s.name, req.max_input_bytes, req.max_elements);
  } else {
    s.m = read_text_matrix(path, req.key, s.name, req.max_input_bytes, req.progress, 5);
  }
  keep_masked(s);
  s.read_shape = s.m.values.shape();
  return s;
}

std::string side_name(const Side& s) { return std::string(s.which) + " (" + s.name + ")"; }

// A shape without its leading axes of size 1: [1][4][7][7] holds the
// matrices of [4][7][7].
Shape without_leading_ones(Shape s) {
  while (s.size() > 1 && s[0] == 1) s.erase(s.begin());
  return s;
}

Shape without_first_axis(Shape s) {
  s.erase(s.begin());
  return s;
}

// Whether the first axis of a side is layers, as far as the side says:
// rank 5 is [layers][batch][heads][q][k]; rank 4 as an attn result records
// it, else as --stack says; nullopt for a rank-4 array nothing names.
std::optional<bool> stated_layers(const Side& s, const DiffRequest& req) {
  const int rank = s.m.values.rank();
  if (rank == 5) return true;
  if (rank != 4) return false;
  if (!s.m.axes.empty()) return s.m.axes[0] == "layers";
  if (!req.stack.empty()) return req.stack == "layers";
  return std::nullopt;
}

// --layer N: which sides are stacks of layers to take layer N from. A
// rank-4 array nothing names is read the way that compares with the other
// side (its shape then or after taking the layer, leading axes of size 1
// aside): a squeezed stack [layers][heads][q][k] beside a stack of batch 1
// or another squeezed stack, a layer's [batch][heads][q][k] beside a stack.
// Where both readings compare, its first axis is 1 and both give the same
// numbers: it is read as one layer's weights.
std::pair<bool, bool> layer_readings(const Side& a, const Side& b, const DiffRequest& req) {
  const std::optional<bool> sa = stated_layers(a, req), sb = stated_layers(b, req);
  auto options = [](const std::optional<bool>& stated) {
    return stated ? std::vector<bool>{*stated} : std::vector<bool>{false, true};
  };
  std::optional<std::pair<bool, bool>> best;
  int best_layers = 3;
  for (const bool la : options(sa)) {
    for (const bool lb : options(sb)) {
      if (!la && !lb) continue;
      const Shape ta = la ? without_first_axis(a.m.values.shape()) : a.m.values.shape();
      const Shape tb = lb ? without_first_axis(b.m.values.shape()) : b.m.values.shape();
      if (without_leading_ones(ta) != without_leading_ones(tb)) continue;
      const int n = (la && !sa ? 1 : 0) + (lb && !sb ? 1 : 0);
      if (n < best_layers) {
        best = {la, lb};
        best_layers = n;
      }
    }
  }
  if (best) return *best;
  const bool can_a = sa.value_or(true), can_b = sb.value_or(true);
  if (!can_a && !can_b) {
    throw_usage("--layer " + std::to_string(*req.layer) + ": neither " + side_name(a) + " " +
                shape_string(a.m.values.shape()) + " nor " + side_name(b) + " " +
                shape_string(b.m.values.shape()) +
                " is a stack of layers, [layers][batch][heads][q][k] (or [layers][heads][q][k] "
                "with --stack layers)");
  }
  // No reading compares: the shapes after taking the layer say why.
  return {can_a, can_b};
}

// Layer N of a side whose first axis is layers.
void take_layer(Side& s, int64_t n) {
  const int64_t layers = s.m.values.dim(0);
  if (n >= layers) {
    throw_usage("--layer " + std::to_string(n) + ": out of range; " + side_name(s) + " has " +
                std::to_string(layers) + (layers == 1 ? " layer" : " layers") + " (0 to " +
                std::to_string(layers - 1) + ")");
  }
  s.m.values = detail::select_index(s.m.values, 0, n);
  if (!s.masked.empty()) s.masked = detail::select_index(s.masked, 0, n);
  if (!s.m.axes.empty()) s.m.axes.erase(s.m.axes.begin());
  s.layer = n;
}

// Head H of a side: [batch][heads][q][k] and [heads][q][k] (unless an attn
// result says its axes are [batch][q][k]) have a head axis; a matrix is one
// head. The head axis stays, of size 1, so the summary keeps the batch.
void take_head(Side& s, int64_t h) {
  const int rank = s.m.values.rank();
  int axis = rank == 4 ? 1 : rank == 3 ? 0 : -1;
  if (!s.m.axes.empty()) {
    const auto at = std::find(s.m.axes.begin(), s.m.axes.end(), "heads");
    axis = at == s.m.axes.end() ? -1 : static_cast<int>(at - s.m.axes.begin());
  }
  const int64_t heads = axis < 0 ? 1 : s.m.values.dim(axis);
  if (h >= heads) {
    throw_usage("--head " + std::to_string(h) + ": out of range; " + side_name(s) + " has " +
                std::to_string(heads) + (heads == 1 ? " head" : " heads") + " (0 to " +
                std::to_string(heads - 1) + ")");
  }
  s.head = h;
  if (axis < 0) return;
  Shape one = s.m.values.shape();
  one[static_cast<size_t>(axis)] = 1;
  s.m.values = detail::select_index(s.m.values, axis, h);
  s.m.values.reshape(one);
  if (!s.masked.empty()) {
    s.masked = detail::select_index(s.masked, axis, h);
    s.masked.reshape(one);
  }
}

// Shapes that differ only by leading axes of size 1 hold the same
// matrices (Hugging Face's [1][heads][q][k] and a run's [heads][q][k]):
// the side with fewer axes takes the other's shape.
void match_leading_ones(Side& a, Side& b) {
  const Shape &sa = a.m.values.shape(), &sb = b.m.values.shape();
  if (sa == sb || without_leading_ones(sa) != without_leading_ones(sb)) return;
  Side& shorter = sa.size() < sb.size() ? a : b;
  const Shape longer = sa.size() < sb.size() ? sb : sa;
  shorter.m.values.reshape(longer);
  if (!shorter.masked.empty()) shorter.masked.reshape(longer);
  shorter.m.axes.clear();
}

// Without --layer, what the first axis of the rank-4 sides is named in the
// summary: "layers" as --stack or an attn result says (one side's word
// goes for the other of its shape), else "batch", the default; `note`
// names the sides read so by default, when the readings differ (a first
// axis above 1). The numbers compared are the same either way.
std::string first_axis(const Side& a, const Side& b, const DiffRequest& req, std::string& note) {
  std::optional<bool> sa = stated_layers(a, req), sb = stated_layers(b, req);
  const Shape &ta = a.m.values.shape(), &tb = b.m.values.shape();
  if (!sa && ta == tb) sa = sb;
  if (!sb && ta == tb) sb = sa;
  std::vector<const Side*> unsaid;
  if (!sa && ta[0] > 1) unsaid.push_back(&a);
  if (!sb && tb[0] > 1) unsaid.push_back(&b);
  if (!unsaid.empty()) {
    note = unsaid[0]->name + (unsaid.size() > 1 ? " and " + unsaid[1]->name : "") + ": " +
           shape_string(unsaid[0]->m.values.shape()) +
           " read as [batch][heads][q][k]; --stack layers reads it as [layers][heads][q][k], a "
           "stack of layers";
  }
  const bool layers =
      (ta.size() == 4 && sa.value_or(false)) || (tb.size() == 4 && sb.value_or(false));
  return layers ? "layer" : "batch";
}

// Both sides, with what --layer and --head took from each.
struct Sides {
  Side a, b;
  std::string first_axis = "batch";  // what the summary calls the first axis of rank 4
  std::string note;                  // a rank-4 reading taken by default; "" for none
};

// Reads both sides and takes what --layer and --head ask for from each.
Sides read_sides(const DiffRequest& req) {
  Side a = read_side(req, req.a, "A");
  Side b = read_side(req, req.b, "B");
  // Two stacks without --layer: compared head by head (diff_stacks.h).
  const bool stacks = a.m.values.rank() == 5 && b.m.values.rank() == 5 && !req.layer;
  for (const Side* s : {&a, &b}) {
    const Shape& shape = s->m.values.shape();
    if (shape.size() > 5) {
      throw_input(s->name, "array of rank " + std::to_string(shape.size()) +
                               "; attn diff compares arrays of rank 1 to 4, and stacks of rank 5");
    }
    if (shape.size() == 5 && !req.layer && !stacks) {
      throw_usage(side_name(*s) + " is a stack " + shape_string(shape) +
                  " [layers][batch][heads][q][k]; attn diff compares one layer of it: give "
                  "--layer N (0 to " +
                  std::to_string(shape[0] - 1) + "), or two stacks to compare head by head");
    }
  }
  Sides out;
  if (stacks) {
    out.a = std::move(a);
    out.b = std::move(b);
    return out;
  }
  if (req.layer) {
    const auto [la, lb] = layer_readings(a, b, req);
    if (la) take_layer(a, *req.layer);
    if (lb) take_layer(b, *req.layer);
  } else if (a.m.values.rank() == 4 || b.m.values.rank() == 4) {
    out.first_axis = first_axis(a, b, req, out.note);
  }
  if (req.head) {
    take_head(a, *req.head);
    take_head(b, *req.head);
  }
  match_leading_ones(a, b);
  out.a = std::move(a);
  out.b = std::move(b);
  return out;
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
  bool attention = false;       // rows are queries and columns keys
  std::string first = "batch";  // the first axis of rank 4: "batch", or "layer" for a stack
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

// "f.json (weights [4][4])", "stack.npy ([2][1][4][7][7], layer 1)".
std::string what(const Side& s) {
  return s.name + " (" + (s.m.key.empty() ? "" : s.m.key + " ") + shape_string(s.read_shape) +
         (s.picked().empty() ? "" : ", " + s.picked()) + ")";
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
  if (batch) column(n.first.c_str(), false);
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
  std::string out = "A: " + terminal_text(what(a)) + "\n" + "B: " + terminal_text(what(b)) +
                    "\n\n" + aligned(rows, left);
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
    std::string at = batch ? n.first + " " + std::to_string(m.batch) + ", " : "";
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

// Where a matrix's largest difference is: its indices, and labels where the
// sides have them.
void write_position(JsonWriter& w, const Names& n, int64_t row, int64_t col) {
  w.key("row").integer(row).key("col").integer(col);
  if (!n.rows.empty()) w.key("row_label").string(n.row(row));
  if (!n.cols.empty()) w.key("col_label").string(n.col(col));
}

void write_shape(JsonWriter& w, const Shape& shape) {
  w.begin_array(JsonLayout::kBlock);
  for (int64_t d : shape) w.integer(d);
  w.end_array();
}

// Numbers as nlohmann::json wrote this summary before ("0.0", its digits),
// so scripts that compare summaries see the same text.
std::string format_json(const Comparison& c, const Side& a, const Side& b, const Names& n,
                        const DiffRequest& req) {
  std::string out;
  JsonWriter w(out, NumberStyle::kNlohmann);
  w.begin_object(JsonLayout::kBlock);
  for (const Side* s : {&a, &b}) {
    w.key(s == &a ? "a" : "b").begin_object(JsonLayout::kBlock);
    w.key("file").string(s->name);
    if (!s->m.key.empty()) w.key("key").string(s->m.key);
    if (s->read_shape != c.shape) write_shape(w.key("shape"), s->read_shape);
    if (s->layer) w.key("layer").integer(*s->layer);
    if (s->head) w.key("head").integer(*s->head);
    w.end_object();
  }
  write_shape(w.key("shape"), c.shape);
  const MatrixComparison& top = c.matrices[c.max_matrix];
  w.key("max_abs_diff").number(top.max_abs_diff);
  w.key("at").begin_object(JsonLayout::kBlock);
  write_position(w, n, top.max_row, top.max_col);
  w.key(n.first).integer(top.batch).key("head").integer(top.head);
  w.key("a").number(top.a_at_max).key("b").number(top.b_at_max);
  w.end_object();
  w.key("mean_abs_diff").number(c.mean_abs_diff);
  w.key("rows_compared").integer(c.rows_compared);
  w.key("rows_skipped").integer(c.rows_skipped);
  w.key("cells_masked").integer(c.cells_masked);
  if (req.tolerance) {
    w.key("tolerance").number(*req.tolerance);
    w.key("passed").boolean(passed(c, req));
  }
  w.key("matrices").begin_array(JsonLayout::kBlock);
  for (const MatrixComparison& m : c.matrices) {
    w.begin_object(JsonLayout::kBlock);
    w.key(n.first).integer(m.batch).key("head").integer(m.head);
    w.key("max_abs_diff").number(m.max_abs_diff);
    w.key("at").begin_object(JsonLayout::kBlock);
    write_position(w, n, m.max_row, m.max_col);
    w.key("a").number(m.a_at_max).key("b").number(m.b_at_max);
    w.end_object();
    w.key("mean_abs_diff").number(m.mean_abs_diff);
    w.key("rows_compared").integer(m.rows_compared);
    w.key("rows_skipped").integer(m.rows_skipped);
    w.key("cells_masked").integer(m.cells_masked);
    if (m.rows_compared > 0) {
      w.key("kl").begin_object(JsonLayout::kBlock);
      w.key("mean").number(m.kl_mean).key("max").number(m.kl_max);
      w.key("max_row").integer(m.kl_max_row);
      if (!n.rows.empty()) w.key("max_row_label").string(n.row(m.kl_max_row));
      w.key("infinite_rows").integer(m.rows_kl_infinite);
      w.end_object();
      w.key("entropy_a").number(m.entropy_a).key("entropy_b").number(m.entropy_b);
    } else {
      w.key("kl").null().key("entropy_a").null().key("entropy_b").null();
    }
    w.end_object();
  }
  w.end_array();
  w.end_object();
  out += '\n';
  return out;
}

std::string format_csv(const Comparison& c, const Names& n) {
  std::string out =
      n.first +
      ",head,max_abs_diff,row,col,row_label,col_label,a,b,mean_abs_diff,kl_mean,kl_max,"
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
  if (n.first == "layer") d.batch_name = "layer";
  d.title = req.title.empty() ? "B − A" : req.title;
  const std::string& key = a.m.key.empty() ? b.m.key : a.m.key;
  const std::string picked = a.picked().size() >= b.picked().size() ? a.picked() : b.picked();
  d.subtitle = "A: " + a.name + ", B: " + b.name + " (" + (key.empty() ? "" : key + " ") +
               shape_string(c.shape) + (picked.empty() ? "" : ", " + picked) + ")";
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
  const Sides sides = read_sides(req);
  const Side &a = sides.a, &b = sides.b;
  if (a.m.values.rank() == 5 && b.m.values.rank() == 5 && !req.layer) {
    return diff_stacks(req, StackSide{a.name, a.m}, StackSide{b.name, b.m}, console);
  }
  check_same_member(a, b);
  const MaskedBoth masked = masked_in_both(a, b);
  Comparison c = compare_matrices(a.m.values, b.m.values, a.name, b.name,
                                  masked.flags.empty() ? nullptr : masked.flags.data());
  // --head H: the one head left is H.
  if (req.head) {
    for (MatrixComparison& m : c.matrices) m.head = *req.head;
  }

  Names n;
  n.rows = labels_of(a.m.row_labels, b.m.row_labels, c.rows);
  n.cols = labels_of(a.m.col_labels, b.m.col_labels, c.cols);
  const std::string& key = a.m.key.empty() ? b.m.key : a.m.key;
  n.attention = key == "weights" || key == "scores";
  n.first = sides.first_axis;

  // Everything is rendered before anything is written.
  std::string figure, preview;
  if (!h.empty() || req.show) {
    const HeatmapData d = difference_figure(c, a, b, n, masked, req);
    const HeatmapOptions o = difference_options(req);
    if (!h.empty()) figure = render_heatmap_file(d, o, h);
    if (req.show) preview = render_terminal(d, o, req.terminal);
  }
  // The table names tokens as they read (Ġcat as cat), as figures do;
  // JSON and CSV keep them as given.
  Names shown = n;
  shown.rows = shown_tokens(n.rows, TokenStyle::kReadable);
  shown.cols = shown_tokens(n.cols, TokenStyle::kReadable);
  std::string summary = req.format == Format::kJson  ? format_json(c, a, b, n, req)
                        : req.format == Format::kCsv ? format_csv(c, n)
                                                     : format_table(c, a, b, shown, masked, req);
  if (!sides.note.empty() && !req.quiet) console.warn(sides.note);
  if (!h.empty()) write_file_atomic(h, figure);
  console.out(summary);
  if (req.show) console.out("\n" + preview);
  return passed(c, req) ? kExitSuccess : kExitCheckFailed;
}

}  // namespace attn
