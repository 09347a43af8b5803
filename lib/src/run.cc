#include "attn/run.h"

#include <algorithm>

#include "attn/attention.h"
#include "attn/check.h"
#include "attn/document.h"
#include "attn/emit_pytorch.h"
#include "attn/error.h"
#include "attn/examples.h"
#include "attn/file_io.h"
#include "attn/heatmap_command.h"
#include "attn/matrix_file.h"
#include "attn/npy.h"
#include "attn/problem.h"

namespace attn {

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t comma = s.find(',', start);
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t b = item.find_first_not_of(' ');
    const size_t e = item.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : item.substr(b, e - b + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// The document a run starts from: a JSON document, a matrix file taken as
// X, a built-in example, or nothing (everything from flags).
InputDocument load_document(const RunRequest& req) {
  if (!req.example.empty()) {
    if (!req.input.empty()) {
      throw_usage("give either an input file or --example, not both");
    }
    const Example* ex = find_example(req.example);
    if (!ex) {
      std::string near = closest_name(req.example, example_names());
      throw_usage("--example: no example called '" + req.example + "'" +
                  (near.empty() ? "" : "; did you mean '" + near + "'?") +
                  " (attn examples lists them)");
    }
    return read_document(ex->text, "example " + ex->name);
  }
  if (req.input.empty()) {
    InputDocument doc;
    doc.source = "<flags>";
    doc.settings_place = "<flags>";
    return doc;
  }
  const std::string text = read_file(req.input);
  const std::string name = display_name(req.input);
  if (matrix_format(req.input, text) == MatrixFormat::kJson) {
    return read_document(text, name);
  }
  // A matrix file is the X of a self-attention run.
  MatrixData m = parse_matrix(text, req.input, CellKind::kFinite);
  InputDocument doc;
  doc.source = name;
  doc.settings_place = name;
  doc.X = Input{std::move(m.values), name};
  if (!m.row_labels.empty()) {
    doc.labels = LabelSet{m.row_labels, m.row_labels, true, name};
  }
  return doc;
}

// Flags replace the document's inputs and settings.
void apply_flags(const RunRequest& req, InputDocument& doc) {
  struct Slot {
    const std::string* path;
    std::optional<Input>* target;
    CellKind kind;
    bool query_side;  // its row labels name queries (else keys)
  };
  const MatrixFiles& m = req.matrices;
  std::optional<Input> kpm;
  const Slot slots[] = {
      {&m.x, &doc.X, CellKind::kFinite, true},         {&m.y, &doc.Y, CellKind::kFinite, false},
      {&m.q, &doc.Q, CellKind::kFinite, true},         {&m.k, &doc.K, CellKind::kFinite, false},
      {&m.v, &doc.V, CellKind::kFinite, false},        {&m.mask, &doc.mask, CellKind::kBool, true},
      {&m.bias, &doc.attn_bias, CellKind::kExtended, true},
      {&m.key_padding_mask, &doc.key_padding_mask, CellKind::kBool, false},
  };
  std::vector<std::string> query_labels, key_labels;
  for (const Slot& s : slots) {
    if (s.path->empty()) continue;
    const std::string text = read_file(*s.path);
    MatrixData md = parse_matrix(text, *s.path, s.kind);
    *s.target = Input{std::move(md.values), display_name(*s.path)};
    if (!md.row_labels.empty()) (s.query_side ? query_labels : key_labels) = md.row_labels;
    if (s.target == &doc.mask || s.target == &doc.attn_bias) {
      if (!md.column_labels.empty()) key_labels = md.column_labels;
    }
  }
  if (!req.valid_lens.empty()) {
    const std::string& t = req.valid_lens;
    Tensor<double> lens;
    if (t.find('[') != std::string::npos) {
      lens = json_to_tensor(json::parse(t, "--valid-lens"), "--valid-lens", "", CellKind::kCount, 2);
    } else {
      std::vector<std::string> parts = split_list(t);
      std::vector<double> v;
      for (const std::string& p : parts) {
        double x = 0;
        if (p.empty() || p.find_first_not_of("0123456789") != std::string::npos) {
          throw_usage("--valid-lens: expected non-negative integers such as 2,6, got '" + t + "'");
        }
        x = std::stod(p);
        v.push_back(x);
      }
      if (v.size() == 1 && t.find(',') == std::string::npos) {
        lens = Tensor<double>(Shape{}, std::move(v));
      } else {
        lens = Tensor<double>(Shape{static_cast<int64_t>(v.size())}, std::move(v));
      }
    }
    doc.valid_lens = Input{std::move(lens), "--valid-lens"};
  }
  // Labels: flags, then the document, then labels found in matrix files.
  if (!req.labels.empty() || !req.key_labels.empty()) {
    LabelSet l;
    l.place = !req.labels.empty() ? "--labels" : "--key-labels";
    if (!req.labels.empty()) l.queries = split_list(req.labels);
    if (!req.key_labels.empty()) {
      l.keys = split_list(req.key_labels);
    } else if (doc.labels && !doc.labels->keys.empty() && !doc.labels->shared) {
      l.keys = doc.labels->keys;
    } else {
      l.keys = l.queries;
      l.shared = true;
    }
    doc.labels = l;
  } else if (!doc.labels && (!query_labels.empty() || !key_labels.empty())) {
    LabelSet l;
    l.place = "labels from matrix files";
    l.queries = query_labels;
    l.keys = key_labels;
    const bool self = !doc.Y && !doc.Q;
    if (self && l.keys.empty()) l.keys = l.queries;
    doc.labels = l;
  }
  doc.settings.merge(req.settings);
  if (req.settings.mode || req.settings.variant || req.settings.heads || req.settings.scale) {
    // Settings now mix two sources; messages about them name both.
    if (doc.settings_place != "<flags>") doc.settings_place = doc.source + " and flags";
  }
}

std::string fully_masked_warning(const Problem& p, const FullyMaskedRow& r) {
  std::string s = p.source + ": query " + std::to_string(r.query);
  if (!p.query_labels.empty()) s += " (\"" + p.query_labels[static_cast<size_t>(r.query)] + "\")";
  if (p.batched) s += " of batch " + std::to_string(r.batch);
  if (p.heads > 1) s += " in head " + std::to_string(r.head);
  s += " has every key masked; ";
  switch (p.fully_masked) {
    case FullyMasked::kZero:
      s += "its weights and attention output are 0 (fully_masked: zero)";
      break;
    case FullyMasked::kUniform:
      s += "it attends uniformly to all keys (fully_masked: uniform)";
      break;
    case FullyMasked::kNan:
      s += "its weights and output are NaN (fully_masked: nan)";
      break;
    case FullyMasked::kError:
      break;
  }
  return s;
}

std::optional<Expected> load_expected(const RunRequest& req, const Problem& p) {
  if (!req.expect_path.empty()) {
    const std::string text = read_file(req.expect_path);
    const std::string name = display_name(req.expect_path);
    json::Value v = json::parse(text, name);
    // Either an expected block or an attn JSON result ({"output", "weights"}).
    if (!v.is_object()) throw_input(name, "expected a JSON object with output and/or weights");
    json::Value wrapped = json::Value::object(0);
    wrapped.add_member("expected", v);
    InputDocument d = document_from_json(wrapped, name);
    return d.expected;
  }
  return p.expected;
}

void write_output(const RunRequest& req, Console& console, const std::string& text) {
  if (req.output_path.empty() || req.output_path == "-") {
    console.out(text);
  } else {
    write_file_atomic(req.output_path, text);
  }
}

void refuse_overwrite(const RunRequest& req, const std::string& out, const char* flag) {
  if (out.empty() || out == "-") return;
  const MatrixFiles& m = req.matrices;
  for (const std::string* in : {&req.input, &req.expect_path, &m.x, &m.y, &m.q, &m.k, &m.v,
                                &m.mask, &m.bias, &m.key_padding_mask}) {
    if (!in->empty() && (*in == out || same_file(*in, out))) {
      throw_usage(std::string(flag) + " " + out + ": refusing to overwrite the input file " + *in);
    }
  }
}

}  // namespace

int run_command(const RunRequest& req, Console& console) {
  refuse_overwrite(req, req.output_path, "-o");
  refuse_overwrite(req, req.weights_out, "--weights-out");
  // A .npy file holds one array: -o FILE.npy writes the output tensor
  // whatever --format says, and the weights need a file of their own.
  const bool npy_out = extension(req.output_path) == "npy";
  if (npy_out && req.output.weights) {
    throw_usage("-o " + req.output_path + ": a .npy file holds one array, the output; " +
                "write the weights with --weights-out FILE.npy");
  }
  InputDocument doc = load_document(req);
  apply_flags(req, doc);
  const Problem p = build_problem(doc);
  if (req.emit_pytorch) {
    const std::string program = emit_pytorch(p, req.command_line, req.average_heads);
    write_output(req, console, program);
    return 0;
  }

  std::optional<Expected> expected;
  if (req.check) {
    expected = load_expected(req, p);
    if (!expected) {
      throw_usage("--check needs numbers to compare with: an \"expected\" block in the input "
                  "or --expect FILE");
    }
  }

  ComputeRequest creq;
  creq.dtype = req.dtype;
  creq.average_heads = req.average_heads;
  creq.weights = req.output.weights || !req.weights_out.empty() ||
                 (expected && expected->weights.has_value());
  request_heatmap_maps(req.heatmap, creq);
  const Result r = compute(p, creq);

  if (!req.quiet) {
    const size_t shown = std::min<size_t>(r.fully_masked_rows.size(), 5);
    for (size_t i = 0; i < shown; ++i) console.warn(fully_masked_warning(p, r.fully_masked_rows[i]));
    if (r.fully_masked_rows.size() > shown) {
      console.warn(p.source + ": " + std::to_string(r.fully_masked_rows.size() - shown) +
                   " more fully masked rows");
    }
  }

  // Render everything before writing anything, so an error cannot leave
  // half of the output behind.
  const std::string text = npy_out ? format_npy(r.output, r.dtype) : format_result(p, r, req.output);
  std::string weights_text;
  if (!req.weights_out.empty()) weights_text = format_matrix_file(*r.weights, r.dtype, req.weights_out);
  const RenderedHeatmap heatmap = render_run_heatmap(req, p, r);

  int code = 0;
  std::string report;
  if (expected) {
    const CheckReport rep = check_result(r, *expected);
    report = format_check_report(rep, p);
    if (!rep.passed()) code = 1;
  }

  write_output(req, console, text);
  if (!req.weights_out.empty()) {
    if (req.weights_out == "-") {
      console.out(weights_text);
    } else {
      write_file_atomic(req.weights_out, weights_text);
    }
  }
  if (!report.empty()) {
    const bool table_to_stdout = req.output.format == Format::kTable &&
                                 (req.output_path.empty() || req.output_path == "-");
    if (table_to_stdout) {
      console.out("\n" + report);
    } else {
      console.info(report);
    }
  }
  write_run_heatmap(req, heatmap, console);
  return code;
}

}  // namespace attn
