#include "commands/run.h"

#include <algorithm>
#include <utility>

#include "attn/attention.h"
#include "attn/check.h"
#include "attn/document.h"
#include "attn/emit_pytorch.h"
#include "attn/error.h"
#include "attn/escape.h"
#include "attn/file_io.h"
#include "attn/heatmap.h"
#include "attn/matrix_file.h"
#include "attn/npy.h"
#include "attn/problem.h"
#include "attn/trace.h"
#include "base/names.h"
#include "base/path.h"
#include "commands/examples.h"
#include "commands/exit_codes.h"
#include "commands/heatmap_command.h"
#include "commands/input_files.h"
#include "commands/run_internal.h"
#include "io/formats.h"

namespace attn {

namespace {

std::string fully_masked_warning(const Problem& p, const FullyMaskedRow& r) {
  std::string s = p.source + ": query " + std::to_string(r.query);
  if (!p.query_labels.empty()) {
    s += " (\"" + terminal_text(p.query_labels[static_cast<size_t>(r.query)]) + "\")";
  }
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
    const std::string name = display_name(req.expect_path);
    if (is_multi_tensor_file(req.expect_path)) {
      Expected e;
      MatrixData m = read_matrix(req.expect_path, CellKind::kExtended, {}, req.max_input_bytes,
                                 req.max_elements);
      e.output = Input{std::move(m.values), name};
      e.stored = m.stored;
      e.place = name;
      return e;
    }
    const std::string text = read_file(req.expect_path, {}, req.max_input_bytes);
    // A .npy or CSV matrix is the expected output (np.save of a PyTorch result).
    if (matrix_format(req.expect_path, text) != MatrixFormat::kJson) {
      Expected e;
      MatrixData m = parse_matrix(text, req.expect_path, CellKind::kExtended, req.max_elements);
      e.output = Input{std::move(m.values), name};
      e.stored = m.stored;
      e.place = name;
      return e;
    }
    json::Value v = json::parse(text, name);
    // An expected block, an attn JSON result ({"output", "weights"}), or a
    // bare array: the expected output.
    json::Value wrapped = json::Value::object();
    if (v.is_array()) {
      json::Value block = json::Value::object();
      block.add_member("output", v);
      v = block;
    }
    if (!v.is_object()) throw_input(name, "expected a JSON object with output and/or weights");
    // An attn result also carries its labels, similarity and what its
    // figure needs (title, settings, weights_axes, masked): not numbers to
    // compare.
    static const std::vector<std::string> kNotNumbers = {
        "labels", "labels_readable", "similarity", "title", "settings", "weights_axes", "masked"};
    json::Value numbers = json::Value::object();
    for (const json::Member& m : v.members()) {
      if (std::find(kNotNumbers.begin(), kNotNumbers.end(), m.key) == kNotNumbers.end()) {
        numbers.add_member(m.key, m.value);
      }
    }
    wrapped.add_member("expected", numbers);
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

// Every file the run reads: no output may replace one.
InputFiles run_inputs(const RunRequest& req) {
  InputFiles in;
  const MatrixFiles& m = req.matrices;
  for (const std::string* spec :
       {&req.input, &req.expect_path, &m.x, &m.y, &m.q, &m.k, &m.v, &m.mask, &m.bias,
        &m.key_padding_mask, &req.tokens, &req.analysis.texts, &req.analysis.lines}) {
    in.add(*spec);
  }
  in.add_checkpoint(req.checkpoint.path);
  in.add_font(req.heatmap.options.font);
  return in;
}

// Two outputs into one file: the later write would replace the earlier.
// Devices (-o /dev/null --weights-out /dev/null) are fine.
void refuse_shared_outputs(const RunRequest& req) {
  const std::pair<const std::string*, const char*> outs[] = {
      {&req.output_path, "-o"},
      {&req.weights_out, "--weights-out"},
      {&req.heatmap.path, "--heatmap"},
      {&req.hidden_out, "--hidden-out"},
      {&req.analysis.logits_out, "--logits-out"}};
  for (size_t i = 0; i < std::size(outs); ++i) {
    for (size_t j = i + 1; j < std::size(outs); ++j) {
      const std::string &a = *outs[i].first, &b = *outs[j].first;
      if (a.empty() || b.empty() || a == "-" || b == "-") continue;
      if ((a == b || same_file(a, b)) && !is_special_file(a)) {
        throw_usage(std::string(outs[j].second) + " " + b + ": " + outs[i].second +
                    " writes that file too; give each output its own file");
      }
    }
  }
}

// Dot products between rows (the blog post's sim(it, milk)): of the output rows
// and, for comparison, of the query-side input rows; per batch (and head).
std::vector<TraceStep> similarity_steps(const Problem& p, const Result& r) {
  std::vector<TraceStep> steps;
  const Tensor<double>& in = p.query_in;
  const int64_t blocks = p.four_d ? p.batch * p.heads : p.batch;
  const int64_t rows = p.len_q;
  const int64_t in_w = in.dim(in.rank() - 1);
  const int64_t out_w = r.output.dim(r.output.rank() - 1);
  for (int64_t b = 0; b < blocks; ++b) {
    TraceStep s;
    s.batch = p.batched ? (p.four_d ? b / p.heads : b) : -1;
    s.head = p.four_d ? b % p.heads : -1;
    s.row_labels = s.col_labels = p.query_labels;
    s.id = StepId::kSimilarityInput;
    s.facts.source = p.query_name;
    s.values = row_similarity(in.data() + b * rows * in_w, rows, in_w);
    steps.push_back(s);
    s.id = StepId::kSimilarityOutput;
    s.facts.source = "o";
    s.values = row_similarity(r.output.data() + b * rows * out_w, rows, out_w);
    steps.push_back(s);
  }
  return steps;
}

// The similarity steps as two tensors, for JSON and CSV documents.
Similarity similarity_tensors(const std::vector<TraceStep>& steps) {
  Values<double> in, out;
  int64_t n = 0, blocks = 0;
  for (const TraceStep& s : steps) {
    n = s.values.rows();
    Values<double>& dst = s.id == StepId::kSimilarityInput ? in : out;
    if (s.id == StepId::kSimilarityInput) ++blocks;
    dst.insert(dst.end(), s.values.data(), s.values.data() + s.values.size());
  }
  const Shape shape = blocks > 1 ? Shape{blocks, n, n} : Shape{n, n};
  return Similarity{Tensor<double>(shape, std::move(in)), Tensor<double>(shape, std::move(out))};
}

// The similarity tables after a normal result.
std::string similarity_text(const std::vector<TraceStep>& steps, const OutputOptions& o) {
  std::string out;
  for (const TraceStep& s : steps) {
    const StepWords w = step_words(s, o.precision);
    out += "\n" + w.title + " (" + w.formula + ")";
    if (s.batch >= 0) out += ", batch " + std::to_string(s.batch);
    if (s.head >= 0) out += ", head " + std::to_string(s.head);
    out += "\n" + format_table_matrix(s.values.data(), s.values.rows(), s.values.cols(),
                                      s.row_labels, s.col_labels, o.precision);
  }
  return out;
}

// In a trace, the document's expected numbers next to the result, and when
// they differ, the reading of the formula that gives them (the self-attention blog post prints
// softmax(QKᵀ)·V/√d: the scale after the softmax).
void append_expected_steps(const Problem& p, const Result& r, const Expected& e, DType dtype,
                           std::vector<TraceStep>& steps) {
  if (e.output->tensor.shape() != r.output.shape() || r.output.rank() != 2) return;
  TraceStep s;
  s.id = StepId::kExpected;
  s.values = Eigen::Map<const MatrixR>(e.output->tensor.data(), r.output.dim(0), r.output.dim(1));
  s.row_labels = p.query_labels;
  Expected only_output = e;
  only_output.weights.reset();
  s.facts.matches = check_result(r, only_output).passed();
  if (s.facts.matches) {
    steps.push_back(s);
    return;
  }
  auto alt = explain_mismatch(p, only_output, dtype);
  if (alt) s.facts.explanation = alt->explanation;
  steps.push_back(s);
  if (alt) {
    TraceStep a;
    a.id = StepId::kExpectedReading;
    a.facts.setting = alt->setting;
    a.facts.detail = alt->name;
    a.facts.factor = scale_factor(p);  // applied to the output under --scale-at output
    a.values =
        Eigen::Map<const MatrixR>(alt->result.output.data(), r.output.dim(0), r.output.dim(1));
    a.row_labels = p.query_labels;
    steps.push_back(a);
  }
}

// The position of the query named `q`: its label as given, else as the
// table shows it (`the₄`), else as it reads (`cat` for `Ġcat`, `▁cat` or
// ` cat`). A name that several positions have is refused with them all.
int64_t query_by_name(const std::string& q, const std::vector<std::string>& labels) {
  const std::vector<std::string> shown = shown_tokens(labels, TokenStyle::kReadable);
  const std::vector<std::vector<std::string>> forms = {labels, shown,
                                                       token_texts(labels, TokenStyle::kReadable)};
  for (const std::vector<std::string>& names : forms) {
    std::vector<int64_t> at;
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == q) at.push_back(static_cast<int64_t>(i));
    }
    if (at.size() == 1) return at.front();
    if (at.empty()) continue;
    // Two queries of one name ("the" twice): the first is not a guess to
    // make silently.
    std::string list;
    for (int64_t i : at) {
      list += (list.empty() ? "" : ", ") + std::to_string(i) + " (" +
              terminal_text(shown[static_cast<size_t>(i)]) + ")";
    }
    throw_usage("--query " + q + ": queries " + list + " are all called '" + q +
                "'; give the index of the one to trace");
  }
  const std::string near = closest_name(q, shown);
  throw_usage("--query " + q + ": no query is called '" + q + "'" +
              (near.empty() ? "" : "; did you mean '" + near + "'?") +
              (labels.empty() ? " (the queries have no labels; give an index)" : ""));
}

void check_index(const char* flag, int64_t i, int64_t n, const char* one, const char* many) {
  if (i >= n) {
    throw_usage(std::string(flag) + " " + std::to_string(i) + ": out of range; the input has " +
                std::to_string(n) + " " + (n == 1 ? one : many) + " (0 to " +
                std::to_string(n - 1) + ")");
  }
}

// --batch, --head and --query of a trace, checked against the problem;
// fills o.showing for the trace's header.
TraceSelection trace_selection(const RunRequest& req, const Problem& p, TraceOptions& o) {
  TraceSelection sel;
  sel.batch = req.trace.batch;
  sel.head = req.trace.head;
  std::vector<std::string> parts;
  if (sel.batch >= 0) {
    check_index("--batch", sel.batch, p.batch, "batch entry", "batch entries");
    parts.push_back("batch " + std::to_string(sel.batch));
  }
  if (sel.head >= 0) {
    check_index("--head", sel.head, p.heads, "head", "heads");
    parts.push_back("head " + std::to_string(sel.head));
  }
  const std::string& q = req.trace.query;
  if (!q.empty()) {
    const bool index = q.find_first_not_of("0123456789") == std::string::npos && q.size() < 10;
    if (index) {
      sel.query = std::stoll(q);
      check_index("--query", sel.query, p.len_q, "query", "queries");
    } else {
      sel.query = query_by_name(q, p.query_labels);
    }
    std::string part = "query " + std::to_string(sel.query);
    if (static_cast<size_t>(sel.query) < p.query_labels.size()) {
      part += " (" +
              shown_tokens(p.query_labels, TokenStyle::kReadable)[static_cast<size_t>(sel.query)] +
              ")";
    }
    parts.push_back(part);
  }
  for (size_t i = 0; i < parts.size(); ++i) o.showing += (i ? ", " : "") + parts[i];
  return sel;
}

}  // namespace

void refuse_conflicting_flags(const RunRequest& req) {
  if (!req.emit_pytorch) return;
  // The program is printed instead of computing: a flag that asks for the
  // computation or something drawn from it would be dropped without a word.
  const std::pair<bool, const char*> needs_result[] = {
      {req.trace.enabled, "--trace"},
      {req.trace.similarity, "--similarity"},
      {!req.expect_path.empty(), "--expect"},
      {req.check, "--check"},
      {!req.weights_out.empty(), "--weights-out"},
      {!req.heatmap.path.empty(), "--heatmap"},
      {req.heatmap.show, "--show"},
      {req.output.head >= 0, "--head"},
  };
  for (const auto& [given, flag] : needs_result) {
    if (!given) continue;
    const std::string f = flag;
    throw_usage(f + " does not go with --emit-pytorch, which prints a program instead of " +
                "computing" +
                (f == "--check" || f == "--expect"
                     ? "; run the program and give its output to --expect in a second run"
                     : ""));
  }
}

namespace {

// ".json, .csv, .npy or .npz": the formats whose rows pass `writes`.
template <class Pred>
std::string written_formats(Pred writes) {
  std::vector<std::string> extensions;
  for (const TensorFormat& f : tensor_formats()) {
    if (writes(f)) extensions.emplace_back(f.extension);
  }
  return extension_list(extensions, "or");
}

// A file named for a format attn reads but does not write there (-o
// r.safetensors, --weights-out w.npz) is refused, not filled with the text
// of another format. A program (--emit-pytorch) goes by no extension.
void refuse_unwritten_formats(const RunRequest& req) {
  const TensorFormat* out = format_by_extension(req.output_path);
  if (out && out->result == ResultFile::kNone && !req.emit_pytorch) {
    const std::string results =
        written_formats([](const TensorFormat& f) { return f.result != ResultFile::kNone; });
    throw_usage("-o " + req.output_path + ": attn does not write ." + out->extension +
                " files; write the result as " + results);
  }
  const TensorFormat* w = format_by_extension(req.weights_out);
  if (w && !w->write) {
    const std::string ext = w->extension;
    const bool archive = w->result == ResultFile::kArchive;
    std::string why = "--weights-out " + req.weights_out + ": attn does not write " +
                      (archive ? "one tensor as ." + ext : "." + ext + " files") +
                      "; write the weights as " +
                      written_formats([](const TensorFormat& f) { return f.write != nullptr; });
    // A result's archive holds its weights; a stack (--layer all) has none.
    if (archive && !req.checkpoint.all_layers) {
      why += ", or the whole result with -o FILE." + ext + " --weights";
    }
    throw_usage(why);
  }
}

// Flags whose outputs cannot be written as asked, before anything is read.
void refuse_unwritable_outputs(const RunRequest& req) {
  refuse_conflicting_flags(req);
  const InputFiles inputs = run_inputs(req);
  inputs.refuse_output(req.output_path, "-o");
  inputs.refuse_output(req.weights_out, "--weights-out");
  inputs.refuse_output(req.heatmap.path, "--heatmap");
  inputs.refuse_output(req.hidden_out, "--hidden-out");
  inputs.refuse_output(req.analysis.logits_out, "--logits-out");
  refuse_shared_outputs(req);
  // A .npy file holds one array: -o FILE.npy writes the output tensor
  // whatever --format says, and the weights need a file of their own.
  const TensorFormat* result = result_format(req.output_path);
  if (result && result->result == ResultFile::kOutputArray && req.output.weights) {
    const std::string ext = result->extension;
    throw_usage("-o " + req.output_path + ": a ." + ext + " file holds one array, the output; " +
                "write the weights with --weights-out FILE." + ext);
  }
  refuse_unwritten_formats(req);
}

// --head H narrows the result to one head: it must be one of the
// problem's, not averaged away, and something written must have heads.
void check_head(const RunRequest& req, const Problem& p) {
  const int64_t h = req.output.head;
  if (h < 0) return;
  if (req.average_heads) {
    throw_usage("--head " + std::to_string(h) +
                " and --average-heads: one head's weights or the mean of them all; give one");
  }
  check_index("--head", h, p.heads, "head", "heads");
  const bool per_head = p.four_d || !req.weights_out.empty() || req.output.weights ||
                        req.heatmap.wanted() || req.trace.enabled;
  if (!per_head) {
    throw_usage("--head " + std::to_string(h) + ": -o " + req.output_path +
                " holds the output, which has no head axis; write head " + std::to_string(h) +
                "'s weights with --weights-out FILE.npy");
  }
}

// The weights --weights-out writes: those of the result (of one head with
// --head). A checkpoint's layer writes them as transformers'
// output_attentions[layer], [batch][heads][q][k] (a batch of one when X
// had no batch axis, and the head axis of a one-head model), so that the
// file compares with Hugging Face's array as it is; other runs keep the
// shape of their input's axes.
Tensor<double> weights_out_tensor(const RunRequest& req, const Problem& p, const Result& r) {
  Tensor<double> w = req.output.head < 0 ? *r.weights : *one_head(p, r, req.output.head).weights;
  if (req.checkpoint.path.empty() || p.four_d) return w;
  Shape s = w.shape();
  if (!p.batched) s.insert(s.begin(), 1);
  if (p.heads == 1 && !req.average_heads && req.output.head < 0) s.insert(s.begin() + 1, 1);
  w.reshape(s);
  return w;
}

// What compute() must keep for the outputs asked for.
ComputeRequest compute_request(const RunRequest& req, const std::optional<Expected>& expected) {
  ComputeRequest creq;
  creq.dtype = req.dtype;
  creq.threads = req.threads;
  creq.average_heads = req.average_heads;
  creq.progress = progress_task(req.progress, "computing");
  creq.weights =
      req.output.weights || !req.weights_out.empty() || (expected && expected->weights.has_value());
  request_heatmap_maps(req.heatmap, creq);
  return creq;
}

// The first five fully masked rows, each a warning, then how many more.
void warn_fully_masked(const Problem& p, const Result& r, Console& console) {
  const size_t shown = std::min<size_t>(r.fully_masked_rows.size(), 5);
  for (size_t i = 0; i < shown; ++i) console.warn(fully_masked_warning(p, r.fully_masked_rows[i]));
  if (r.fully_masked_rows.size() > shown) {
    console.warn(p.source + ": " + std::to_string(r.fully_masked_rows.size() - shown) +
                 " more fully masked rows");
  }
}

// The text of -o (or stdout): a .npy or .npz array file, the trace, or
// the result in --format; `extra` holds the steps after the engine's
// (similarity, expected numbers).
std::string result_text(const RunRequest& req, const Problem& p, const Result& r,
                        TraceRecorder& recorder, const std::vector<TraceStep>& extra) {
  const TensorFormat* file = result_format(req.output_path);
  if (file && file->result == ResultFile::kOutputArray) return file->write(r.output, r.dtype);
  if (file && file->result == ResultFile::kArchive) {
    // Everything the JSON result holds, as arrays NumPy loads directly.
    if (!req.trace.similarity) return format_result_npz(p, r, req.output);
    const Similarity sim = similarity_tensors(extra);
    return format_result_npz(p, r, req.output, &sim);
  }
  if (req.trace.enabled) {
    std::vector<TraceStep>& steps = recorder.steps();
    steps.insert(steps.end(), extra.begin(), extra.end());
    TraceOptions options = req.trace.options;
    const TraceSelection sel = trace_selection(req, p, options);
    return format_trace(p, sel.all() ? steps : select_steps(std::move(steps), sel), options);
  }
  if (req.trace.similarity && req.output.format != Format::kTable) {
    const Similarity sim = similarity_tensors(extra);
    return format_result(p, r, req.output, &sim);
  }
  std::string text = format_result(p, r, req.output);
  if (!extra.empty()) text += similarity_text(extra, req.output);
  return text;
}

// --emit-pytorch of a checkpoint's layer run from token ids: the program
// runs the model itself with transformers and compares its weights with
// attn's, which go beside it (-o check.py writes check.npy).
int emit_model_program(const RunRequest& req, const Problem& p) {
  if (req.output_path.empty() || req.output_path == "-") {
    throw_usage(
        "--emit-pytorch of a model run writes attn's weights beside the program: give -o "
        "FILE.py");
  }
  if (req.average_heads) {
    throw_usage("--average-heads: the program compares each head with transformers' weights");
  }
  const std::string& out = req.output_path;
  const std::string numbers = path::without_extension(out) + ".npy";
  run_inputs(req).refuse_output(numbers, "--emit-pytorch's weights");
  ComputeRequest creq;
  creq.dtype = req.dtype;
  creq.threads = req.threads;
  creq.weights = true;
  const Result r = compute(p, creq);
  const std::string weights = format_npy(weights_out_tensor(req, p, r), r.dtype);
  ModelProgram m;
  m.command = req.command_line;
  m.checkpoint = req.checkpoint.path;
  const path::Kind kind = path::kind_of(m.checkpoint);
  if (kind != path::Kind::kNone && kind != path::Kind::kDirectory) {
    // from_pretrained takes the directory of a file of weights (without
    // its last '/').
    const std::string dir = path::directory_prefix(m.checkpoint);
    m.checkpoint = dir.empty() ? "." : dir.substr(0, dir.size() - 1);
  }
  m.numbers = path::file_name_of(numbers);
  m.ids = detail::checkpoint_tokens(req).ids;
  m.layer = req.checkpoint.layer;
  m.dtype = req.dtype;
  const std::string program = emit_pytorch_model(m);
  write_files_atomic({{numbers, weights}, {out, program}});
  return 0;
}

// --check's report (empty without --check), and exit code 1 when the
// numbers differ, with the common misreading that explains it if any.
std::pair<std::string, int> check_report(const RunRequest& req, const Problem& p, const Result& r,
                                         const std::optional<Expected>& expected) {
  if (!expected) return {"", kExitSuccess};
  Expected e = *expected;  // the flags' tolerances win over the document's
  if (req.rtol) e.rtol = req.rtol;
  if (req.atol) e.atol = req.atol;
  const CheckReport rep = check_result(r, e);
  std::string report = format_check_report(rep, p, req.quiet);
  if (rep.passed()) return {report, kExitSuccess};
  if (auto alt = explain_mismatch(p, *expected, req.dtype)) {
    report +=
        "\nlikely cause: " + alt->name +
        (alt->setting.empty() ? "" : " (" + alt->setting + " reproduces the expected numbers)") +
        "\nwhy: " + alt->explanation + "\n";
  }
  return {report, kExitCheckFailed};
}

}  // namespace

int run_command(const RunRequest& req, Console& console) {
  refuse_unwritable_outputs(req);
  detail::check_analysis_flags(req);
  if (req.checkpoint.all_layers) return detail::run_all_layers(req, console);
  InputDocument doc = detail::load_document(req);
  if (!doc.files.empty()) {
    // The tensor files the document named are inputs too: no output may
    // replace one.
    InputFiles named;
    const std::string dir = path::directory_prefix(req.input);
    for (const std::string& f : doc.files) named.add(dir + split_tensor_reference(f).path);
    named.refuse_output(req.output_path, "-o");
    named.refuse_output(req.weights_out, "--weights-out");
    named.refuse_output(req.heatmap.path, "--heatmap");
    named.refuse_output(req.hidden_out, "--hidden-out");
  }
  detail::apply_flags(req, doc);
  const Problem p = build_problem(std::move(doc));
  if (req.emit_pytorch && req.emit_model && req.checkpoint.from_tokens()) {
    return emit_model_program(req, p);
  }
  if (req.emit_pytorch) {
    write_output(req, console,
                 emit_pytorch(p, req.command_line, req.average_heads,
                              req.emit_load_from.value_or(kLoadFromFiles), req.dtype));
    return 0;
  }
  std::optional<Expected> expected;
  if (req.check) {
    expected = load_expected(req, p);
    if (!expected) {
      throw_usage(
          "--check needs numbers to compare with: an \"expected\" block in the input "
          "or --expect FILE");
    }
  }
  check_head(req, p);
  const ComputeRequest creq = compute_request(req, expected);
  detail::check_run_limits(req, p, creq);
  TraceRecorder recorder;
  const Result r = compute(p, creq, req.trace.enabled ? &recorder : nullptr);
  if (!req.quiet) warn_fully_masked(p, r, console);

  // Render everything before writing anything, so an error cannot leave
  // half of the output behind.
  std::vector<TraceStep> extra;  // similarity, expected numbers: after the engine's steps
  if (req.trace.similarity) {
    extra = similarity_steps(p, r);
    // --head: the similarity of that head's rows (4-D inputs have one a head).
    const int64_t h = req.output.head;
    extra.erase(
        std::remove_if(extra.begin(), extra.end(),
                       [h](const TraceStep& s) { return h >= 0 && s.head >= 0 && s.head != h; }),
        extra.end());
  }
  const Expected* shown_expected = expected ? &*expected : (p.expected ? &*p.expected : nullptr);
  if (req.trace.enabled && shown_expected && shown_expected->output) {
    append_expected_steps(p, r, *shown_expected, req.dtype, extra);
  }
  if (req.trace.enabled && req.checkpoint.from_tokens()) {
    // A layer run from token ids: the trace starts from them.
    std::vector<TraceStep> first = detail::model_input_steps(req);
    recorder.steps().insert(recorder.steps().begin(), first.begin(), first.end());
  }
  const std::string text = result_text(req, p, r, recorder, extra);
  std::string weights_text;
  if (!req.weights_out.empty()) {
    // "-" has no extension to go by: CSV weights beside CSV output, else JSON.
    const bool csv = req.weights_out == "-" && req.output.format == Format::kCsv;
    const std::string file = csv ? "-.csv" : req.weights_out;
    weights_text = format_matrix_file(weights_out_tensor(req, p, r), r.dtype, file);
  }
  const RenderedHeatmap heatmap = render_run_heatmap(req, p, r);
  const auto [report, code] = check_report(req, p, r, expected);

  // Named files before stdout, all or none, so that one that cannot be
  // written stops the run before anything reaches stdout and leaves every
  // other named file as it was (docs/errors.md, "Output files").
  const bool output_file = !req.output_path.empty() && req.output_path != "-";
  const bool weights_file = !req.weights_out.empty() && req.weights_out != "-";
  const bool heatmap_file = !req.heatmap.path.empty() && req.heatmap.path != "-";
  std::vector<std::pair<std::string, std::string_view>> files;
  if (weights_file) files.emplace_back(req.weights_out, weights_text);
  if (heatmap_file) files.emplace_back(req.heatmap.path, heatmap.file);
  if (output_file) files.emplace_back(req.output_path, text);
  std::string hidden_text;
  if (!req.hidden_out.empty()) {
    // The whole model's hidden states, whichever layer the run shows.
    const detail::CheckpointTokens t = detail::checkpoint_tokens(req);
    ForwardRequest fr = detail::forward_request(req, t);
    fr.keep_weights = false;  // the layer's weights come from the run itself
    hidden_text = format_npy(model_attention(fr).hidden, req.dtype);
    files.emplace_back(req.hidden_out, hidden_text);
  }
  write_files_atomic(files);
  if (heatmap_file && !heatmap.warning.empty() && !req.quiet) console.warn(heatmap.warning);
  if (!output_file) console.out(text);
  if (!req.weights_out.empty() && !weights_file) console.out(weights_text);
  if (!report.empty()) {
    const bool table_to_stdout =
        req.output.format == Format::kTable && (req.output_path.empty() || req.output_path == "-");
    if (table_to_stdout) {
      console.out("\n" + report);
    } else {
      console.info(report);
    }
  }
  finish_run_heatmap(req, heatmap, console, heatmap_file);
  return code;
}

}  // namespace attn
