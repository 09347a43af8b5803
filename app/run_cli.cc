// `attn run`: binds flags to a RunRequest and calls attn::run_command.
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "attn/checkpoint.h"
#include "attn/error.h"
#include "base/path.h"
#include "commands.h"
#include "commands/batch.h"
#include "commands/flags.h"
#include "commands/run.h"
#include "console.h"
#include "flag_table.h"
#include "io/formats.h"
#include "progress_bar.h"

namespace attn::cli {

namespace {

struct RunFlags {
  RunRequest req;
  std::string format = "table";
  std::string precision = "4";
  std::string trace_format = "text";
  std::string dtype = "f64";
  std::string threads = "0";
  std::string max_elements;
  std::string max_input_bytes;
  std::string rtol, atol;
  std::string color = "auto";
  std::string title, description;
  std::string layer = "0";
  std::string text, text_file, ids;
  std::string summary, top, rollout_fusion, predict, logit_lens;
  bool each_line = false;
  std::vector<std::string> inputs;  // several: a batch (attn/batch.h)
  std::string out_dir;
};

// The flags that name a matrix file, and their fields.
std::vector<std::pair<const char*, std::string*>> matrix_file_flags(MatrixFiles& m) {
  return {{"--x", &m.x},       {"--y", &m.y},
          {"--q", &m.q},       {"--k", &m.k},
          {"--v", &m.v},       {"--mask", &m.mask},
          {"--bias", &m.bias}, {"--key-padding-mask", &m.key_padding_mask}};
}

// '' for a file is a mistake, not "stdout" or "no file": every flag that
// names a file or directory says so before anything runs.
void check_path_flags(const CLI::App* run, const std::shared_ptr<RunFlags>& f) {
  for (const std::string& in : f->inputs) check_path_flag("input", in, PathFlag::kInput);
  std::vector<std::pair<const char*, std::string*>> inputs = matrix_file_flags(f->req.matrices);
  inputs.insert(inputs.end(), {{"--expect", &f->req.expect_path},
                               {"--tokens", &f->req.tokens},
                               {"--checkpoint", &f->req.checkpoint.path},
                               {"--tokenizer", &f->req.checkpoint.tokenizer}});
  for (const auto& [flag, path] : inputs) {
    if (run->count(flag) > 0) check_path_flag(flag, *path, PathFlag::kInput);
  }
  if (run->count("-o") > 0) check_path_flag("-o", f->req.output_path, PathFlag::kOutput);
  if (run->count("--weights-out") > 0) {
    check_path_flag("--weights-out", f->req.weights_out, PathFlag::kOutput);
  }
  if (run->count("--out-dir") > 0) check_path_flag("--out-dir", f->out_dir, PathFlag::kDirectory);
}

// The flags of each group of `attn run --help`, in its order.
void add_input_flags(CLI::App* run, RunFlags& f) {
  // Named FILE, as in the man page and docs/cli.md: "attn run [OPTIONS] [FILE...]".
  add(run, "FILE", f.inputs);
  add(run, "--example", f.req.example);
}

void add_file_flags(CLI::App* run, RunFlags& f) {
  const std::string g =
      "Inputs from files (JSON, CSV, .npy, FILE.safetensors:NAME, FILE.npz:NAME, FILE.gguf:NAME; "
      "- is stdin)";
  for (const auto& [flag, path] : matrix_file_flags(f.req.matrices)) {
    add(run, flag, *path)->group(g);
  }
  add(run, "--valid-lens", f.req.valid_lens)->group(g);
  add(run, "--labels", f.req.labels)->group(g);
  add(run, "--key-labels", f.req.key_labels)->group(g);
  add(run, "--tokens", f.req.tokens)->group(g);
}

void add_checkpoint_flags(CLI::App* run, RunFlags& f) {
  const std::string g =
      "A layer of a Hugging Face checkpoint (X from --x, or from --text or --ids)";
  add(run, "--checkpoint", f.req.checkpoint.path)->group(g);
  add(run, "--layer", f.layer)->group(g);
  add(run, "--text", f.text)->group(g);
  add(run, "--text-file", f.text_file)->group(g);
  add(run, "--ids", f.ids)->group(g);
  add(run, "--hidden-out", f.req.hidden_out)->group(g);
  add(run, "--tokenizer", f.req.checkpoint.tokenizer)->group(g);
  add(run, "--no-special", f.req.checkpoint.no_special)->group(g);
  add(run, "--arch", f.req.checkpoint.arch)->group(g);
}

void add_analysis_flags(CLI::App* run, RunFlags& f) {
  const std::string g =
      "The whole model (--layer all): numbers per head, rollout, predictions, corpora";
  add(run, "--summary", f.summary)->group(g);
  add(run, "--top", f.top)->group(g);
  add(run, "--texts", f.req.analysis.texts)->group(g);
  add(run, "--each-line", f.each_line)->group(g);
  add(run, "--rollout-fusion", f.rollout_fusion)->group(g);
  add(run, "--predict", f.predict)->group(g);
  add(run, "--logit-lens", f.logit_lens)->group(g);
  add(run, "--logits-out", f.req.analysis.logits_out)->group(g);
}

void add_output_flags(CLI::App* run, RunFlags& f) {
  const std::string g = "Output";
  RunRequest& req = f.req;
  add(run, "--format", f.format)->group(g);
  add(run, "--weights", req.output.weights)->group(g);
  add(run, "--long", req.output.long_csv)->group(g);
  add(run, "--output", req.output_path)->group(g);
  add(run, "--out-dir", f.out_dir)->group(g);
  add(run, "--weights-out", req.weights_out)->group(g);
  add(run, "--trace", req.trace.enabled)->group(g);
  add(run, "--trace-format", f.trace_format)->group(g);
  add(run, "--query", req.trace.query)->group(g);
  add(run, "--similarity", req.trace.similarity)->group(g);
  add(run, "--precision", f.precision)->group(g);
  add(run, "--average-heads", req.average_heads)->group(g);
  add(run, "--dtype", f.dtype)->group(g);
  add(run, "--threads", f.threads)->group(g);
  add(run, "--check", req.check)->group(g);
  add(run, "--expect", req.expect_path)->group(g);
  add(run, "--rtol", f.rtol)->group(g);
  add(run, "--atol", f.atol)->group(g);
  add(run, "--quiet", req.quiet)->group(g);
  add(run, "--max-elements", f.max_elements)->group(g);
  add(run, "--max-input-bytes", f.max_input_bytes)->group(g);
  add(run, "--emit-pytorch", req.emit_pytorch)->group(g);
  add(run, "--title", f.title)->group(g);
  add(run, "--description", f.description)->group(g);
  add(run, "--color", f.color)->group(g);
}

// What the flags ask, checked and set into the request; in this order, so
// that of two mistakes the same one is named first.
// The output's formats, the trace, --head, the arithmetic.
void apply_output_flags(const CLI::App* run, RunFlags& f, ColorMode color) {
  RunRequest& req = f.req;
  if (run->count("--title") > 0) req.title = f.title;
  if (run->count("--description") > 0) req.description = f.description;
  resolve_formats(FormatFlags{run->count("--format") > 0 ? f.format : "",
                              run->count("--trace-format") > 0 ? f.trace_format : ""},
                  req);
  req.output.precision = parse_int_flag("--precision", f.precision, 0, 17);
  if (run->count("--precision") > 0) req.output.digits = req.output.precision;
  if (req.output.long_csv) {
    if (req.output.format != Format::kCsv || req.trace.enabled) {
      throw_usage("--long is a CSV table: give -f csv or -o FILE.csv");
    }
    req.output.weights = true;
  }
  req.trace.options.precision = req.output.precision;
  if (run->count("--query") > 0 && !req.trace.enabled) throw_usage("--query needs --trace");
  if (req.trace.enabled) {
    req.trace.batch = req.heatmap.options.batch.value_or(-1);
    req.trace.head = req.heatmap.options.head.value_or(-1);
  }
  if (run->count("--head") > 0) {
    req.output.head = *req.heatmap.options.head;
    // With no figure or trace to narrow, --head asks for that head's
    // weights: the table (or JSON, CSV) shows them as -w would. A .npy
    // file holds the output alone.
    const TensorFormat* file = result_format(req.output_path);
    const bool one_array = file && file->result == ResultFile::kOutputArray;
    if (!req.heatmap.wanted() && !req.trace.enabled && !one_array) {
      req.output.weights = true;
    }
  }
  // A trace into a file is coloured only when asked for: always.
  const bool to_stdout = req.output_path.empty() || req.output_path == "-";
  req.trace.options.color = req.trace.options.format == TraceFormat::kText &&
                            (to_stdout ? use_color(color) : color == ColorMode::kAlways);
  req.dtype = parse_dtype_flag("--dtype", f.dtype);
  req.threads = parse_int_flag("--threads", f.threads, 0, 1024);
}

// --layer, --text, --text-file, --each-line.
void apply_layer_flags(const CLI::App* run, RunFlags& f) {
  RunRequest& req = f.req;
  if (f.layer == "all") {
    req.checkpoint.all_layers = true;
  } else {
    req.checkpoint.layer = parse_int_flag("--layer", f.layer, 0, 1 << 20);
    req.output.layer = req.checkpoint.layer;
  }
  if (run->count("--layer") > 0 && req.checkpoint.path.empty()) {
    throw_usage("--layer needs --checkpoint (attn heatmap --layer picks a layer of a stack)");
  }
  if (run->count("--text") > 0 && run->count("--text-file") > 0) {
    throw_usage("give --text or --text-file, not both");
  }
  if (run->count("--text") > 0) req.checkpoint.text = f.text;
  if (run->count("--text-file") > 0) {
    if (req.checkpoint.path.empty()) throw_usage("--text-file needs --checkpoint DIR");
    check_path_flag("--text-file", f.text_file, PathFlag::kInput);
    if (f.each_line) {
      req.analysis.lines = f.text_file;
    } else {
      req.checkpoint.text = std::string();  // read below, once --max-input-bytes is known
    }
  }
  if (f.each_line && run->count("--text-file") == 0) {
    throw_usage("--each-line needs --text-file FILE (a sentence a line)");
  }
}

// The whole model's analyses: --texts, --summary, --top, --predict, ...
void apply_analysis_flags(const CLI::App* run, RunFlags& f) {
  RunRequest& req = f.req;
  AnalysisRequest& an = req.analysis;
  if (run->count("--texts") > 0) {
    check_path_flag("--texts", an.texts, PathFlag::kInput);
    if (req.checkpoint.path.empty()) throw_usage("--texts needs --checkpoint DIR");
    if (!an.lines.empty()) throw_usage("give --texts or --text-file --each-line, not both");
  }
  if (run->count("--summary") > 0) an.summary = parse_head_stat(f.summary);
  if (run->count("--top") > 0) {
    if (!an.summary) throw_usage("--top N lists the heads of --summary: give --summary STAT");
    an.top = parse_int_flag("--top", f.top, 1, 1 << 20);
  }
  if (run->count("--rollout-fusion") > 0) {
    an.fusion = parse_rollout_fusion(f.rollout_fusion);
    an.fusion_given = true;
  }
  if (run->count("--predict") > 0) an.predict = parse_int_flag("--predict", f.predict, 1, 1 << 30);
  if (run->count("--logit-lens") > 0) {
    an.logit_lens = parse_int_flag("--logit-lens", f.logit_lens, 1, 1 << 30);
  }
  if (run->count("--logits-out") > 0) {
    check_path_flag("--logits-out", an.logits_out, PathFlag::kOutput);
    if (!has_format(an.logits_out, MatrixFormat::kNpy)) {
      throw_usage("--logits-out " + an.logits_out + ": the logits are written as .npy");
    }
  }
}

// What a checkpoint reads: --ids, --tokenizer, a sentence where a file
// goes, and what the tokens' run writes (--hidden-out).
void apply_model_flags(const CLI::App* run, RunFlags& f) {
  RunRequest& req = f.req;
  const AnalysisRequest& an = req.analysis;
  if (run->count("--ids") > 0) req.checkpoint.ids = parse_ids_flag(f.ids);
  if (run->count("--tokenizer") > 0 && req.checkpoint.path.empty()) {
    throw_usage("--tokenizer needs --checkpoint DIR (the model whose tokens it reads)");
  }
  // attn run --checkpoint DIR "The cat sat": a sentence where a file goes.
  if (!req.checkpoint.path.empty() && !req.checkpoint.from_tokens() && !an.sentences()) {
    for (const std::string& in : f.inputs) {
      if (in == "-" || path::exists(in)) continue;
      throw_usage("input " + message_text(in) +
                  ": no such file; to run the model on a sentence, give it with --text \"" +
                  message_text(in) + "\" (or token ids with --ids)");
    }
  }
  for (const char* flag : {"--text", "--ids", "--no-special"}) {
    if (run->count(flag) > 0 && req.checkpoint.path.empty()) {
      throw_usage(std::string(flag) + " needs --checkpoint DIR (the model that reads it)");
    }
  }
  if (an.sentences() && (run->count("--text") > 0 || run->count("--ids") > 0)) {
    throw_usage(std::string(an.texts.empty() ? "--each-line" : "--texts") +
                " runs the sentences of a file; not with --" +
                (run->count("--text") > 0 ? "text" : "ids"));
  }
  if ((run->count("--text") > 0 || run->count("--text-file") > 0) && run->count("--ids") > 0) {
    throw_usage("give --text or --ids, not both");
  }
  if (run->count("--no-special") > 0 && !req.checkpoint.text && !an.sentences()) {
    throw_usage("--no-special goes with --text");
  }
  // A layer of a model run on a sentence is read for its weights: they
  // are what the table shows without -w (JSON and CSV hold both; -w
  // shows the output too, -o FILE.npy writes it alone).
  if (req.checkpoint.from_tokens() && !req.checkpoint.all_layers && run->count("--weights") == 0 &&
      !req.trace.enabled && !req.emit_pytorch && !req.output.weights) {
    const TensorFormat* file = result_format(req.output_path);
    if (!(file && file->result == ResultFile::kOutputArray)) {
      req.output.weights = true;
      req.output.table_output = false;
    }
  }
  if (run->count("--hidden-out") > 0) {
    check_path_flag("--hidden-out", req.hidden_out, PathFlag::kOutput);
    if (!req.checkpoint.from_tokens()) {
      throw_usage(
          "--hidden-out needs --text or --ids (and --checkpoint): the model's hidden "
          "states come from its forward pass");
    }
    if (!has_format(req.hidden_out, MatrixFormat::kNpy)) {
      throw_usage("--hidden-out " + req.hidden_out + ": the hidden states are written as .npy");
    }
  }
}

// The limits, then what waited for them (--text-file's text), and --check.
void apply_limit_flags(const CLI::App* run, RunFlags& f) {
  RunRequest& req = f.req;
  if (run->count("--max-elements") > 0) req.max_elements = parse_max_elements_flag(f.max_elements);
  if (run->count("--max-input-bytes") > 0) {
    req.max_input_bytes = parse_max_input_bytes_flag(f.max_input_bytes);
  }
  // Read once the limit is known: the text counts against it.
  if (run->count("--text-file") > 0 && !f.each_line) {
    req.checkpoint.text = text_of_file(f.text_file, req.max_input_bytes);
  }
  if (!req.expect_path.empty()) req.check = true;
  for (const auto& [flag, text, target] :
       {std::tuple{"--rtol", &f.rtol, &req.rtol}, std::tuple{"--atol", &f.atol, &req.atol}}) {
    if (run->count(flag) == 0) continue;
    if (!req.check)
      throw_usage(std::string(flag) + " is the tolerance of --check or --expect; give one");
    *target = parse_nonnegative_flag(flag, *text);
  }
}

}  // namespace

Action add_run(CLI::App& app, const std::string& command_line) {
  auto f = std::make_shared<RunFlags>();
  CLI::App* run = app.add_subcommand("run", "compute attention for an input document or matrix");
  run->allow_extras();
  add_input_flags(run, *f);
  auto settings = add_setting_flags(run, "Settings (override the input file)", false);
  add_file_flags(run, *f);
  add_checkpoint_flags(run, *f);
  add_analysis_flags(run, *f);
  add_output_flags(run, *f);
  auto heatmap_flags = add_run_heatmap_flags(run);

  f->req.command_line = command_line;
  return [f, run, heatmap_flags, settings]() {
    RunRequest& req = f->req;
    check_path_flags(run, f);
    const ColorMode color = parse_color_flag(f->color);
    heatmap_flags(req.heatmap, req.trace.enabled, color);
    settings(req.settings);
    apply_output_flags(run, *f, color);
    apply_layer_flags(run, *f);
    apply_analysis_flags(run, *f);
    apply_model_flags(run, *f);
    apply_limit_flags(run, *f);
    StdConsole console;
    const auto bar = progress_bar(req.quiet);
    req.progress = bar.get();
    return run_batch(BatchRequest{req, f->inputs, f->out_dir}, console);
  };
}

}  // namespace attn::cli
