// `attn run`: binds flags to a RunRequest and calls attn::run_command.
#include <map>
#include <memory>
#include <tuple>

#include "attn/checkpoint.h"
#include "attn/error.h"
#include "base/path.h"
#include "commands.h"
#include "commands/batch.h"
#include "commands/flags.h"
#include "commands/run.h"
#include "console.h"
#include "io/formats.h"
#include "progress_bar.h"

namespace attn::cli {

namespace {

// "llama, mistral, ...": the architectures the engine reads, in its order.
std::string arch_list() {
  std::string s;
  for (const std::string& a : architecture_names()) s += (s.empty() ? "" : ", ") + a;
  return s;
}

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

// '' for a file is a mistake, not "stdout" or "no file": every flag that
// names a file or directory says so before anything runs.
void check_path_flags(const CLI::App* run, const std::shared_ptr<RunFlags>& f) {
  for (const std::string& in : f->inputs) check_path_flag("input", in, PathFlag::kInput);
  const MatrixFiles& m = f->req.matrices;
  const std::pair<const char*, const std::string*> inputs[] = {
      {"--x", &m.x},
      {"--y", &m.y},
      {"--q", &m.q},
      {"--k", &m.k},
      {"--v", &m.v},
      {"--mask", &m.mask},
      {"--bias", &m.bias},
      {"--key-padding-mask", &m.key_padding_mask},
      {"--expect", &f->req.expect_path},
      {"--tokens", &f->req.tokens},
      {"--checkpoint", &f->req.checkpoint.path},
      {"--tokenizer", &f->req.checkpoint.tokenizer}};
  for (const auto& [flag, path] : inputs) {
    if (run->count(flag) > 0) check_path_flag(flag, *path, PathFlag::kInput);
  }
  if (run->count("-o") > 0) check_path_flag("-o", f->req.output_path, PathFlag::kOutput);
  if (run->count("--weights-out") > 0) {
    check_path_flag("--weights-out", f->req.weights_out, PathFlag::kOutput);
  }
  if (run->count("--out-dir") > 0) check_path_flag("--out-dir", f->out_dir, PathFlag::kDirectory);
}

}  // namespace

Action add_run(CLI::App& app, const std::string& command_line) {
  auto f = std::make_shared<RunFlags>();
  CLI::App* run = app.add_subcommand("run", "compute attention for an input document or matrix");
  run->allow_extras();
  // Named FILE, as in the man page and docs/cli.md: "attn run [OPTIONS] [FILE...]".
  run->add_option("FILE", f->inputs,
                  "a JSON document, or a CSV/.npy matrix taken as X; - reads stdin. "
                  "Several files or a directory: a batch (needs --out-dir)")
      ->type_name("");
  run->add_option("--example", f->req.example, "run a built-in example (attn examples lists them)")
      ->type_name("NAME");

  auto settings = add_setting_flags(run, "Settings (override the input file)", false);

  auto* m =
      "Inputs from files (JSON, CSV, .npy, FILE.safetensors:NAME, FILE.npz:NAME, FILE.gguf:NAME; "
      "- is stdin)";
  MatrixFiles& mf = f->req.matrices;
  run->add_option("--x", mf.x, "X (queries; also keys/values in self mode)")
      ->group(m)
      ->type_name("FILE");
  run->add_option("--y", mf.y, "Y (keys and values, cross mode)")->group(m)->type_name("FILE");
  run->add_option("--q", mf.q, "Q (qkv mode)")->group(m)->type_name("FILE");
  run->add_option("--k", mf.k, "K (qkv mode)")->group(m)->type_name("FILE");
  run->add_option("--v", mf.v, "V (qkv mode; defaults to K)")->group(m)->type_name("FILE");
  run->add_option("--mask", mf.mask, "boolean mask [q][k]: 1/true = may not attend")
      ->group(m)
      ->type_name("FILE");
  run->add_option("--bias", mf.bias, "additive bias [q][k] (attn_bias; -inf allowed)")
      ->group(m)
      ->type_name("FILE");
  run->add_option("--key-padding-mask", mf.key_padding_mask, "key padding mask [k] or [batch][k]")
      ->group(m)
      ->type_name("FILE");
  run->add_option("--valid-lens", f->req.valid_lens,
                  "d2l valid lengths: 2,6 or JSON such as [[1,2],[3,4]]")
      ->type_name("LENS")
      ->group(m);
  run->add_option("--labels", f->req.labels,
                  "token labels, comma separated (default: the input's, else indices)")
      ->type_name("LIST")
      ->group(m);
  run->add_option("--key-labels", f->req.key_labels,
                  "key labels when they differ from the queries' (default: as --labels)")
      ->type_name("LIST")
      ->group(m);
  run->add_option("--tokens", f->req.tokens,
                  "labels from a file: a JSON list of strings or one token per line "
                  "(default: none)")
      ->type_name("FILE")
      ->group(m);

  auto* c = "A layer of a Hugging Face checkpoint (X from --x, or from --text or --ids)";
  run->add_option("--checkpoint", f->req.checkpoint.path,
                  "take params and settings from this model: a directory (config.json beside "
                  "model.safetensors or its shards), a .safetensors or .gguf file, or a model "
                  "on this machine, ollama:NAME[:TAG] or hf:ORG/NAME[@REVISION] (attn models "
                  "lists them) (default: none)")
      ->type_name("DIR|FILE|NAME")
      ->group(c);
  run->add_option("--layer", f->layer,
                  "the layer to read, 0-based, or all: every layer's weights as one stack "
                  "[layers][1][heads][q][k], from --text or --ids (default: 0)")
      ->type_name("N")
      ->group(c);
  run->add_option("--text", f->text,
                  "compute the layer's input from this text: the checkpoint's tokenizer.json, "
                  "then the layers before it; the tokens are the labels (default: none, X from "
                  "--x)")
      ->type_name("TEXT")
      ->group(c);
  run->add_option("--text-file", f->text_file,
                  "the same with the text of FILE (- for stdin), without its final newline "
                  "(default: none)")
      ->type_name("FILE")
      ->group(c);
  run->add_option("--ids", f->ids,
                  "the same from token ids, comma separated; the labels are the tokens where the "
                  "checkpoint has a tokenizer.json, else the ids (default: none)")
      ->type_name("I,J,...")
      ->group(c);
  run->add_option("--hidden-out", f->req.hidden_out,
                  "with --text or --ids: also write the model's hidden states "
                  "[layers+1][1][q][hidden] to FILE.npy, as transformers' output_hidden_states "
                  "(default: none)")
      ->type_name("FILE")
      ->group(c);
  run->add_option("--tokenizer", f->req.checkpoint.tokenizer,
                  "the tokenizer.json (or a directory holding it) of --text and of the labels, "
                  "for a checkpoint without one or given as a file (default: the checkpoint "
                  "directory's)")
      ->type_name("FILE|DIR")
      ->group(c);
  run->add_flag("--no-special", f->req.checkpoint.no_special,
                "--text without the tokenizer's special tokens, add_special_tokens=False "
                "(default: with them)")
      ->group(c);
  run->add_option("--arch", f->req.checkpoint.arch,
                  "architecture when there is no config.json: " + arch_list() +
                      " (default: config.json's model_type)")
      ->type_name("NAME")
      ->group(c);

  auto* an = "The whole model (--layer all): numbers per head, rollout, predictions, corpora";
  run->add_option("--summary", f->summary,
                  "one number per layer and head instead of the stack of weights: entropy, "
                  "first, previous, self or distance (the mean over the query rows, a causal "
                  "model's first query left out); with --texts, its mean and numpy.std over the "
                  "sentences (default: none)")
      ->type_name("STAT")
      ->group(an);
  run->add_option("--top", f->top,
                  "with --summary: list the N heads with the largest value (the smallest "
                  "entropy) (default: none)")
      ->type_name("N")
      ->group(an);
  run->add_option("--texts", f->req.analysis.texts,
                  "run every sentence of FILE, JSON Lines (a JSON string or {\"text\": ...} a "
                  "line), in batches, for --summary (default: none)")
      ->type_name("FILE")
      ->group(an);
  run->add_flag("--each-line", f->each_line,
                "--text-file FILE holds a sentence a line, run as --texts runs them (default: "
                "the whole file is one text)")
      ->group(an);
  run->add_option("--rollout-fusion", f->rollout_fusion,
                  "--of rollout: how the heads of a layer are fused, mean, max or min (default "
                  "mean)")
      ->type_name("HOW")
      ->group(an);
  run->add_option("--predict", f->predict,
                  "add the K most likely next tokens of each position, softmax of the final "
                  "logits (default: none)")
      ->type_name("K")
      ->group(an);
  run->add_option("--logit-lens", f->logit_lens,
                  "add the K most likely tokens of every hidden state through the final norm "
                  "and the unembedding; with --heatmap, drawn as layers x positions (default: "
                  "none)")
      ->type_name("K")
      ->group(an);
  run->add_option("--logits-out", f->req.analysis.logits_out,
                  "write the final logits [1][q][vocab] to FILE.npy, float32 (default: none)")
      ->type_name("FILE")
      ->group(an);

  auto* o = "Output";
  run->add_option("-f,--format", f->format,
                  "table, json or csv (default: from the extension of -o, else table)")
      ->type_name("FORMAT")
      ->group(o);
  run->add_flag("-w,--weights", f->req.output.weights, "include the attention weights")->group(o);
  run->add_flag("--long", f->req.output.long_csv,
                "with -f csv: the weights as a long table, a row per cell: layer,batch,head,"
                "query,key,query_token,key_token,weight (default: a block per array)")
      ->group(o);
  run->add_option("-o,--output", f->req.output_path,
                  "write to FILE atomically; its extension sets the format: .json, .csv, .npy, "
                  ".npz (the whole result as NumPy arrays), else a table (default -: stdout)")
      ->type_name("FILE")
      ->group(o);
  run->add_option("--out-dir", f->out_dir,
                  "batch: write each input's result to DIR/<name>.<format> (DIR is created)")
      ->type_name("DIR")
      ->group(o);
  run->add_option("--weights-out", f->req.weights_out, "also write the weights to FILE")
      ->type_name("FILE")
      ->group(o);
  run->add_flag("--trace", f->req.trace.enabled,
                "print every step of the computation (inputs, QKᵀ, scaling, masks, softmax, ...)")
      ->group(o);
  run->add_option("--trace-format", f->trace_format,
                  "text, markdown, latex or json (default: from the extension of -o: .md, "
                  ".tex, .json; else text)")
      ->type_name("FORMAT")
      ->group(o);
  run->add_option("--query", f->req.trace.query,
                  "trace only this query, an index or a label (default: every query); "
                  "--batch and --head narrow a trace too")
      ->type_name("I")
      ->group(o);
  run->add_flag("--similarity", f->req.trace.similarity,
                "add dot products between output rows (and input rows)")
      ->group(o);
  run->add_option("--precision", f->precision,
                  "digits after the point in tables and traces (default 4), and, when given, "
                  "of JSON and CSV numbers (default: every digit)")
      ->type_name("N")
      ->group(o);
  run->add_flag("--average-heads", f->req.average_heads, "report the mean of the head weights")
      ->group(o);
  run->add_option("--dtype", f->dtype, "f64 (default) or f32 arithmetic")
      ->type_name("NAME")
      ->group(o);
  run->add_option("--threads", f->threads, "threads of the computation (default 0: all cores)")
      ->type_name("N")
      ->group(o);
  run->add_flag("--check", f->req.check,
                "compare with the input's expected numbers; exit 1 if different")
      ->group(o);
  run->add_option("--expect", f->req.expect_path, "expected numbers for --check from FILE")
      ->type_name("FILE")
      ->group(o);
  run->add_option("--rtol", f->rtol,
                  "relative tolerance of --check: |got - expected| <= atol + rtol·|expected| "
                  "(NumPy's allclose) (default 1e-9; 1.3e-6 when the reference is float32 or "
                  "the run --dtype f32)")
      ->type_name("R")
      ->group(o);
  run->add_option("--atol", f->atol,
                  "absolute tolerance of --check (default 1e-9; 1e-5 when the reference is "
                  "float32 or the run --dtype f32)")
      ->type_name("A")
      ->group(o);
  run->add_flag("-q,--quiet", f->req.quiet,
                "quiet: no warnings, batch summary or progress bar, and --check lists only "
                "mismatches (errors are still printed)")
      ->group(o);
  run->add_option("--max-elements", f->max_elements,
                  "largest tensor the run may hold, in elements (default 2^26); larger runs "
                  "stop before allocating")
      ->type_name("N")
      ->group(o);
  run->add_option("--max-input-bytes", f->max_input_bytes,
                  "largest file (or stdin) the run may read, in bytes (default 2^30); reading "
                  "stops past it")
      ->type_name("N")
      ->group(o);
  run->add_flag("--emit-pytorch", f->req.emit_pytorch,
                "print a Python/PyTorch program that recomputes this run (to cross-check)")
      ->group(o);
  run->add_option("--title", f->title, "title of tables, traces and figures (default: the input's)")
      ->type_name("TEXT")
      ->group(o);
  run->add_option("--description", f->description,
                  "description shown in traces (default: the input's)")
      ->type_name("TEXT")
      ->group(o);
  run->add_option("--color", f->color,
                  "colour traces and --show: auto (a terminal, unless NO_COLOR), always or "
                  "never (default auto)")
      ->type_name("WHEN")
      ->group(o);
  auto heatmap_flags = add_run_heatmap_flags(run);

  f->req.command_line = command_line;
  return [f, run, heatmap_flags, settings]() {
    RunRequest& req = f->req;
    check_path_flags(run, f);
    const ColorMode color = parse_color_flag(f->color);
    heatmap_flags(req.heatmap, req.trace.enabled, color);
    settings(req.settings);
    if (run->count("--title") > 0) req.title = f->title;
    if (run->count("--description") > 0) req.description = f->description;
    resolve_formats(FormatFlags{run->count("--format") > 0 ? f->format : "",
                                run->count("--trace-format") > 0 ? f->trace_format : ""},
                    req);
    req.output.precision = parse_int_flag("--precision", f->precision, 0, 17);
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
    req.dtype = parse_dtype_flag("--dtype", f->dtype);
    req.threads = parse_int_flag("--threads", f->threads, 0, 1024);
    if (f->layer == "all") {
      req.checkpoint.all_layers = true;
    } else {
      req.checkpoint.layer = parse_int_flag("--layer", f->layer, 0, 1 << 20);
      req.output.layer = req.checkpoint.layer;
    }
    if (run->count("--layer") > 0 && req.checkpoint.path.empty()) {
      throw_usage("--layer needs --checkpoint (attn heatmap --layer picks a layer of a stack)");
    }
    if (run->count("--text") > 0 && run->count("--text-file") > 0) {
      throw_usage("give --text or --text-file, not both");
    }
    if (run->count("--text") > 0) req.checkpoint.text = f->text;
    if (run->count("--text-file") > 0) {
      if (req.checkpoint.path.empty()) throw_usage("--text-file needs --checkpoint DIR");
      check_path_flag("--text-file", f->text_file, PathFlag::kInput);
      if (f->each_line) {
        req.analysis.lines = f->text_file;
      } else {
        req.checkpoint.text = std::string();  // read below, once --max-input-bytes is known
      }
    }
    if (f->each_line && run->count("--text-file") == 0) {
      throw_usage("--each-line needs --text-file FILE (a sentence a line)");
    }
    AnalysisRequest& an = req.analysis;
    if (run->count("--texts") > 0) {
      check_path_flag("--texts", an.texts, PathFlag::kInput);
      if (req.checkpoint.path.empty()) throw_usage("--texts needs --checkpoint DIR");
      if (!an.lines.empty()) throw_usage("give --texts or --text-file --each-line, not both");
    }
    if (run->count("--summary") > 0) an.summary = parse_head_stat(f->summary);
    if (run->count("--top") > 0) {
      if (!an.summary) throw_usage("--top N lists the heads of --summary: give --summary STAT");
      an.top = parse_int_flag("--top", f->top, 1, 1 << 20);
    }
    if (run->count("--rollout-fusion") > 0) {
      an.fusion = parse_rollout_fusion(f->rollout_fusion);
      an.fusion_given = true;
    }
    if (run->count("--predict") > 0)
      an.predict = parse_int_flag("--predict", f->predict, 1, 1 << 30);
    if (run->count("--logit-lens") > 0) {
      an.logit_lens = parse_int_flag("--logit-lens", f->logit_lens, 1, 1 << 30);
    }
    if (run->count("--logits-out") > 0) {
      check_path_flag("--logits-out", an.logits_out, PathFlag::kOutput);
      if (!has_format(an.logits_out, MatrixFormat::kNpy)) {
        throw_usage("--logits-out " + an.logits_out + ": the logits are written as .npy");
      }
    }
    if (run->count("--ids") > 0) req.checkpoint.ids = parse_ids_flag(f->ids);
    if (run->count("--tokenizer") > 0 && req.checkpoint.path.empty()) {
      throw_usage("--tokenizer needs --checkpoint DIR (the model whose tokens it reads)");
    }
    // attn run --checkpoint DIR "The cat sat": a sentence where a file goes.
    if (!req.checkpoint.path.empty() && !req.checkpoint.from_tokens() && !an.sentences()) {
      for (const std::string& in : f->inputs) {
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
    if (req.checkpoint.from_tokens() && !req.checkpoint.all_layers &&
        run->count("--weights") == 0 && !req.trace.enabled && !req.emit_pytorch &&
        !req.output.weights) {
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
    if (run->count("--max-elements") > 0)
      req.max_elements = parse_max_elements_flag(f->max_elements);
    if (run->count("--max-input-bytes") > 0) {
      req.max_input_bytes = parse_max_input_bytes_flag(f->max_input_bytes);
    }
    // Read once the limit is known: the text counts against it.
    if (run->count("--text-file") > 0 && !f->each_line) {
      req.checkpoint.text = text_of_file(f->text_file, req.max_input_bytes);
    }
    if (!req.expect_path.empty()) req.check = true;
    for (const auto& [flag, text, target] :
         {std::tuple{"--rtol", &f->rtol, &req.rtol}, std::tuple{"--atol", &f->atol, &req.atol}}) {
      if (run->count(flag) == 0) continue;
      if (!req.check)
        throw_usage(std::string(flag) + " is the tolerance of --check or --expect; give one");
      *target = parse_nonnegative_flag(flag, *text);
    }
    StdConsole console;
    const auto bar = progress_bar(req.quiet);
    req.progress = bar.get();
    return run_batch(BatchRequest{req, f->inputs, f->out_dir}, console);
  };
}

}  // namespace attn::cli
