#include "commands/diff_stacks.h"

#include <cmath>
#include <memory>

#include "attn/analysis.h"
#include "attn/error.h"
#include "attn/escape.h"
#include "base/number_text.h"
#include "commands/exit_codes.h"
#include "io/json_writer.h"

namespace attn {

namespace {

// The tokens compared: all of them, or those the sentences share.
struct Alignment {
  std::vector<int64_t> a, b;          // the positions compared, A's and B's
  std::vector<int64_t> out_a, out_b;  // the positions left out
  bool aligned = false;               // by the tokens (difflib), not by position
};

std::string side(const char* which, const StackSide& s) {
  return std::string(which) + " (" + s.name + ")";
}

Alignment align(const StackSide& a, const StackSide& b) {
  const Shape &sa = a.m.values.shape(), &sb = b.m.values.shape();
  Alignment out;
  const std::vector<std::string>&la = a.m.row_labels, &lb = b.m.row_labels;
  const int64_t qa = sa[3], qb = sb[3];
  const bool labelled =
      static_cast<int64_t>(la.size()) == qa && static_cast<int64_t>(lb.size()) == qb;
  if (sa == sb && (!labelled || la == lb)) return out;  // position by position
  if (!labelled) {
    throw_input(side("A", a) + " and " + side("B", b),
                "stacks of " + shape_string(sa) + " and " + shape_string(sb) +
                    " are compared on the tokens they share, which needs the tokens of both: "
                    "write each with attn run --layer all -f json (its labels)");
  }
  if (sa[3] != sa[4] || sb[3] != sb[4]) {
    throw_input(side("A", a) + " and " + side("B", b),
                "panels of " + std::to_string(sa[3]) + " x " + std::to_string(sa[4]) + " and " +
                    std::to_string(sb[3]) + " x " + std::to_string(sb[4]) +
                    ": aligning tokens needs self-attention, queries = keys");
  }
  out.aligned = true;
  std::vector<bool> kept_a(static_cast<size_t>(qa)), kept_b(static_cast<size_t>(qb));
  for (const auto& [i, j] : matching_tokens(la, lb)) {
    out.a.push_back(i);
    out.b.push_back(j);
    kept_a[static_cast<size_t>(i)] = kept_b[static_cast<size_t>(j)] = true;
  }
  if (out.a.empty()) {
    throw_input(side("A", a) + " and " + side("B", b), "no token in common to compare");
  }
  for (int64_t i = 0; i < qa; ++i) {
    if (!kept_a[static_cast<size_t>(i)]) out.out_a.push_back(i);
  }
  for (int64_t j = 0; j < qb; ++j) {
    if (!kept_b[static_cast<size_t>(j)]) out.out_b.push_back(j);
  }
  return out;
}

// "sat (2), on (3)"; "none".
std::string listed(const std::vector<int64_t>& at, const std::vector<std::string>& labels) {
  std::string s;
  for (int64_t i : at) {
    // Without the space a word starts with ("▁mat" reads " mat").
    const std::string& l = labels[static_cast<size_t>(i)];
    s += (s.empty() ? "" : ", ") +
         terminal_text(l.substr(std::min(l.size(), l.find_first_not_of(' ')))) + " (" +
         std::to_string(i) + ")";
  }
  return s.empty() ? "none" : s;
}

// The head with the largest |B − A| (the first; NaN counts as largest).
int64_t worst(const HeadDifferences& d) {
  int64_t at = 0;
  for (size_t c = 0; c < d.max_abs.size(); ++c) {
    const double v = d.max_abs[c], best = d.max_abs[static_cast<size_t>(at)];
    if (!std::isnan(best) && (std::isnan(v) || v > best)) at = static_cast<int64_t>(c);
  }
  return at;
}

std::string number(double x, int precision) {
  if (std::isnan(x)) return "nan";
  if (x != 0 && std::fabs(x) < 0.5 * std::pow(10.0, -precision)) {
    return format_scientific(x, std::max(1, std::min(precision, 4) - 1));
  }
  return format_fixed(x, precision);
}

std::string table_text(const HeadDifferences& d, const StackSide& a, const StackSide& b,
                       const Alignment& al, const DiffRequest& req) {
  std::string out = "A: " + terminal_text(a.name) + " (" + shape_string(a.m.values.shape()) +
                    ")\nB: " + terminal_text(b.name) + " (" + shape_string(b.m.values.shape()) +
                    ")\n";
  if (al.aligned) {
    out += "compared on the " + std::to_string(al.a.size()) +
           " tokens both have, aligned as difflib aligns them;\nleft out of A: " +
           listed(al.out_a, a.m.row_labels) +
           "\nleft out of B: " + listed(al.out_b, b.m.row_labels) + "\n";
  }
  out += "\nlayer  head  max |B-A|      JS\n";
  const int p = req.precision;
  for (int64_t l = 0; l < d.layers; ++l) {
    for (int64_t h = 0; h < d.heads; ++h) {
      const size_t c = static_cast<size_t>(l * d.heads + h);
      std::string row = std::to_string(l);
      row = std::string(5 - std::min<size_t>(5, row.size()), ' ') + row;
      std::string head = std::to_string(h);
      row += std::string(6 - std::min<size_t>(6, head.size()), ' ') + head;
      const std::string m = number(d.max_abs[c], p), js = number(d.js[c], p);
      row += std::string(11 - std::min<size_t>(11, m.size()), ' ') + m;
      row += std::string(8 - std::min<size_t>(8, js.size()), ' ') + js;
      out += row + "\n";
    }
  }
  out +=
      "\nJS = the Jensen-Shannon divergence of A's and B's rows (each over the keys "
      "compared, divided by its sum), in nats (at most ln 2), the mean over the " +
      std::to_string(d.rows_compared) + " rows compared";
  out += d.rows_skipped
             ? "; " + std::to_string(d.rows_skipped) + " skipped: not a distribution on a side.\n"
             : ".\n";
  const int64_t w = worst(d);
  out += "overall: max |B-A| " + number(d.max_abs[static_cast<size_t>(w)], p) + " at layer " +
         std::to_string(w / d.heads) + ", head " + std::to_string(w % d.heads) + "\n";
  if (req.tolerance) {
    const double m = d.max_abs[static_cast<size_t>(w)];
    const bool ok = !std::isnan(m) && m <= *req.tolerance;
    out += "max |B-A| " + number(m, p) + (ok ? " <= " : " > ") + "tolerance " +
           format_shortest(*req.tolerance) + (ok ? ": A and B agree\n" : ": A and B differ\n");
  }
  return out;
}

void write_grid(JsonWriter& w, const HeadDifferences& d, const std::vector<double>& v) {
  w.begin_array(JsonLayout::kBlock);
  for (int64_t l = 0; l < d.layers; ++l) {
    w.begin_array(JsonLayout::kInline);
    for (int64_t h = 0; h < d.heads; ++h) w.number(v[static_cast<size_t>(l * d.heads + h)]);
    w.end_array();
  }
  w.end_array();
}

void write_left_out(JsonWriter& w, const std::vector<int64_t>& at,
                    const std::vector<std::string>& labels) {
  w.begin_array(JsonLayout::kInline);
  for (int64_t i : at) {
    w.begin_object(JsonLayout::kInline);
    w.key("index").integer(i).key("token").string(labels[static_cast<size_t>(i)]);
    w.end_object();
  }
  w.end_array();
}

std::string json_text(const HeadDifferences& d, const StackSide& a, const StackSide& b,
                      const Alignment& al, const DiffRequest& req) {
  std::string out;
  JsonWriter w(out, NumberStyle::kNlohmann);
  w.begin_object(JsonLayout::kBlock);
  for (const StackSide* s : {&a, &b}) {
    w.key(s == &a ? "a" : "b").begin_object(JsonLayout::kInline);
    w.key("file").string(s->name);
    w.key("shape").begin_array(JsonLayout::kInline);
    for (int64_t n : s->m.values.shape()) w.integer(n);
    w.end_array();
    w.end_object();
  }
  w.key("layers").integer(d.layers).key("heads").integer(d.heads);
  w.key("tokens_compared")
      .integer(al.aligned ? static_cast<int64_t>(al.a.size()) : a.m.values.dim(3));
  if (al.aligned) {
    w.key("left_out").begin_object(JsonLayout::kBlock);
    write_left_out(w.key("a"), al.out_a, a.m.row_labels);
    write_left_out(w.key("b"), al.out_b, b.m.row_labels);
    w.end_object();
  }
  w.key("per_head").begin_object(JsonLayout::kBlock);
  write_grid(w.key("max_abs"), d, d.max_abs);
  write_grid(w.key("js"), d, d.js);
  w.end_object();
  const int64_t top = worst(d);
  w.key("max_abs").number(d.max_abs[static_cast<size_t>(top)]);
  w.key("at").begin_object(JsonLayout::kInline);
  w.key("layer").integer(top / d.heads).key("head").integer(top % d.heads);
  w.end_object();
  w.key("rows_compared").integer(d.rows_compared);
  w.key("rows_skipped").integer(d.rows_skipped);
  if (req.tolerance) {
    const double m = d.max_abs[static_cast<size_t>(top)];
    w.key("tolerance").number(*req.tolerance);
    w.key("passed").boolean(!std::isnan(m) && m <= *req.tolerance);
  }
  w.end_object();
  out += '\n';
  return out;
}

std::string csv_text(const HeadDifferences& d) {
  std::string out = "layer,head,max_abs,js\n";
  for (int64_t l = 0; l < d.layers; ++l) {
    for (int64_t h = 0; h < d.heads; ++h) {
      const size_t c = static_cast<size_t>(l * d.heads + h);
      out += std::to_string(l) + "," + std::to_string(h) + "," + format_shortest(d.max_abs[c]) +
             "," + format_shortest(d.js[c]) + "\n";
    }
  }
  return out;
}

// The mean JS divergence of each head, layers down and heads across.
HeatmapData js_figure(const HeadDifferences& d, const StackSide& a, const StackSide& b,
                      const Alignment& al, const DiffRequest& req) {
  auto values = std::make_shared<std::vector<double>>(d.js);
  HeatmapData f;
  f.owned_values = values;
  f.values = values->data();
  f.rows = d.layers;
  f.cols = d.heads;
  f.row_title = "layers";
  f.col_title = "heads";
  f.value_name = "JS divergence (nats)";
  f.title =
      req.title.empty() ? "A and B per head: Jensen-Shannon divergence of the rows" : req.title;
  f.subtitle = "A: " + a.name + ", B: " + b.name + "; the mean over the query rows" +
               (al.aligned ? "; on the " + std::to_string(al.a.size()) + " tokens both have (" +
                                 std::to_string(al.out_a.size()) + " of A and " +
                                 std::to_string(al.out_b.size()) + " of B left out)"
                           : "");
  f.source = b.name;
  return f;
}

}  // namespace

int diff_stacks(const DiffRequest& req, const StackSide& a, const StackSide& b, Console& console) {
  const Shape &sa = a.m.values.shape(), &sb = b.m.values.shape();
  if (sa[0] != sb[0] || sa[1] != sb[1] || sa[2] != sb[2]) {
    throw_input(side("A", a) + " and " + side("B", b),
                "stacks " + shape_string(sa) + " and " + shape_string(sb) +
                    " [layers][batch][heads][q][k] differ in layers, batch or heads; compare one "
                    "layer of each with --layer N");
  }
  if (req.head) {
    throw_usage("--head " + std::to_string(*req.head) +
                ": attn diff of two stacks compares every head; --layer N --head H compares one");
  }
  const Alignment al = align(a, b);
  const HeadDifferences d = compare_heads(a.m.values, b.m.values, al.a, al.b);
  std::string figure, preview;
  if (!req.heatmap_path.empty() || req.show) {
    const HeatmapData f = js_figure(d, a, b, al, req);
    // From 0 to ln 2, the divergence's range, so that two figures compare.
    HeatmapOptions o = req.options;
    if (!o.vmin && !o.vmax) {
      o.vmin = 0;
      o.vmax = std::log(2.0);
    }
    if (!req.heatmap_path.empty()) figure = render_heatmap_file(f, o, req.heatmap_path);
    if (req.show) preview = render_terminal(f, o, req.terminal);
  }
  const std::string summary = req.format == Format::kJson  ? json_text(d, a, b, al, req)
                              : req.format == Format::kCsv ? csv_text(d)
                                                           : table_text(d, a, b, al, req);
  if (!req.heatmap_path.empty()) write_file_atomic(req.heatmap_path, figure);
  console.out(summary);
  if (req.show) console.out("\n" + preview);
  const double m = d.max_abs[static_cast<size_t>(worst(d))];
  return !req.tolerance || (!std::isnan(m) && m <= *req.tolerance) ? kExitSuccess
                                                                   : kExitCheckFailed;
}

}  // namespace attn
