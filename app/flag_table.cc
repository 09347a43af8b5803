// The flag table: every flag of attn's commands but the run settings
// (lib/src/io/settings.cc), one row each, and the binding of a row to a
// request's field. A row names the commands that take it; where a flag's
// help says something else in another command (--title of a run, of a
// figure, of B - A), that command has its own row of the same flag.
#include "flag_table.h"

#include <stdexcept>

#include "attn/analysis.h"
#include "attn/checkpoint.h"
#include "attn/heatmap.h"
#include "attn/options.h"
#include "attn/output.h"
#include "attn/trace.h"
#include "commands/flags.h"
#include "commands/heatmap_flags.h"

namespace attn::cli {

namespace {

constexpr Complete kFile = Complete::kFile;
constexpr Complete kDirectory = Complete::kDirectory;
constexpr Complete kNames = Complete::kNames;

// The library's name lists, as the table's choices.
template <const std::vector<std::string>& (*names)()>
std::vector<std::string> copy() {
  return names();
}
std::vector<std::string> stack_names() { return {"batch", "layers"}; }
std::vector<std::string> fit_names() { return {"column", "slide"}; }
std::vector<std::string> color_scale_names() { return {"linear", "log", "power:0.5"}; }
std::vector<std::string> tokenize_format_names() { return {"text", "json"}; }
std::vector<std::string> models_format_names() { return {"table", "json"}; }

// "llama, mistral, ...": the architectures the engine reads, in its order.
std::string arch_list() {
  std::string s;
  for (const std::string& a : architecture_names()) s += (s.empty() ? "" : ", ") + a;
  return s;
}

const char* const kTensorInput =
    "a JSON array or attn result document, a CSV or .npy matrix, FILE.npz:NAME, "
    "FILE.safetensors:NAME or FILE.gguf:NAME; - reads stdin";

// The rows of several commands: the shared flags and the drawing flags.
std::vector<Flag> shared_rows() {
  return {
      // Shared by several commands.
      {"--top", "run heatmap", "N",
       "with --summary: list the N heads with the largest value (the smallest entropy) "
       "(default: none)"},
      {"-q,--quiet", "heatmap diff", "",
       "quiet: no warnings and no progress bar (errors are still printed)"},
      {"--color", "heatmap diff", "WHEN",
       "colour --show: auto (a terminal, unless NO_COLOR), always or never (default auto)", kNames,
       copy<color_names>},
      {"--max-input-bytes", "heatmap diff", "N",
       "largest input file (or stdin) to read, in bytes (default 2^30); reading stops past it"},
      {"--max-elements", "heatmap diff", "N",
       "largest array to read, in elements (default 2^26); checked from the file's header "
       "before anything is allocated"},

      // The drawing flags of attn run and attn heatmap (heatmap_cli.cc's
      // kDrawingFlags lists them); --max-size is attn diff's too.
      {"--colormap", "run heatmap", "NAME",
       "viridis (default), magma, gray, blues, or rdbu (default for signed values)", kNames,
       copy<colormap_names>},
      {"--vmin", "run heatmap", "X",
       "value drawn in the bottom colour, or auto for the data's minimum (default: 0 for "
       "attention weights, else the data's minimum)"},
      {"--vmax", "run heatmap", "X",
       "value drawn in the top colour, auto for the data's maximum, or qP for its P-th "
       "percentile, as q99 (default: 1 for attention weights, else the data's maximum)"},
      {"--color-scale", "run heatmap", "SCALE",
       "how values map to colours: linear (default), log (ends above 0), or power:G, the range's "
       "fraction to the power G (G < 1 spreads small values, as power:0.5)",
       kNames, color_scale_names},
      {"--ignore-first", "run heatmap", "",
       "leave the first column (the first token, an attention sink) out when choosing the colour "
       "range; its cells are drawn clipped"},
      {"--normalize", "run heatmap", "HOW",
       "none (default), row or col: divide each row/column by its max |value|", kNames,
       copy<normalize_names>},
      {"--batch", "run heatmap", "B",
       "draw (or trace) only this batch entry, 0-based (default: every one)"},
      {"--head", "run heatmap", "H",
       "draw (or trace) only this head, 0-based; attn run's table, JSON, CSV and --weights-out "
       "keep only its weights too (default: every head)"},
      {"--max-size", "run heatmap diff", "PX",
       "longest side of the image in pixels (default 2048); larger matrices are downsampled"},
      {"--fit", "run heatmap", "TARGET",
       "lay the figure out for a target: column (a paper column, 700 px wide at 200 dpi, text at "
       "7 pt or more), slide (1920x1080) or WxH pixels; panels per row, a model view's "
       "orientation, cell size and labels are chosen to fill it (default: none; --max-size)",
       kNames, fit_names},
      {"--reduce", "run heatmap", "HOW",
       "mean (default; max in a stack's model view) or max: how downsampled blocks are merged",
       kNames, copy<reduce_names>},
      {"--cell-size", "run heatmap", "PX",
       "pixels per cell, 1 to 256 (default: the largest that fits --max-size)"},
      {"--labels-every", "run heatmap", "N",
       "label every Nth row and column (default: every label that fits)"},
      {"--annotate", "run heatmap", "WHEN",
       "write the values in the cells: auto (default: when they fit), always or never", kNames,
       copy<annotate_names>},
      {"--token-style", "run heatmap", "STYLE",
       "how tokens are shown on the axes: readable (default: a word's leading space marker Ġ or "
       "▁ left out, byte pieces as their text, newlines as ↵, repeated tokens numbered by "
       "position), marker (the same, the leading space as ␣) or raw (as given)",
       kNames, copy<token_style_names>},
      {"--font", "run heatmap", "FILE",
       "TrueType/OpenType font for the text, e.g. Noto Sans CJK for Chinese (default: the "
       "built-in DejaVu Sans)",
       kFile, nullptr, "*.(ttf|otf|ttc)"},

  };
}

// attn run's rows: its input, files, a checkpoint's layer.
std::vector<Flag> run_input_rows() {
  return {
      // attn run: the input (its settings are the settings table's rows).
      {"FILE", "run", "",
       "a JSON document, or a CSV/.npy matrix taken as X; - reads stdin. Several files or a "
       "directory: a batch (needs --out-dir)",
       kFile},
      {"--example", "run", "NAME", "run a built-in example (attn examples lists them)",
       Complete::kExample},
      // attn run: inputs from files.
      {"--x", "run", "FILE", "X (queries; also keys/values in self mode)", kFile},
      {"--y", "run", "FILE", "Y (keys and values, cross mode)", kFile},
      {"--q", "run", "FILE", "Q (qkv mode)", kFile},
      {"--k", "run", "FILE", "K (qkv mode)", kFile},
      {"--v", "run", "FILE", "V (qkv mode; defaults to K)", kFile},
      {"--mask", "run", "FILE", "boolean mask [q][k]: 1/true = may not attend", kFile},
      {"--bias", "run", "FILE", "additive bias [q][k] (attn_bias; -inf allowed)", kFile},
      {"--key-padding-mask", "run", "FILE", "key padding mask [k] or [batch][k]", kFile},
      {"--valid-lens", "run", "LENS", "d2l valid lengths: 2,6 or JSON such as [[1,2],[3,4]]"},
      {"--labels", "run", "LIST",
       "token labels, comma separated (default: the input's, else indices)"},
      {"--key-labels", "run", "LIST",
       "key labels when they differ from the queries' (default: as --labels)"},
      {"--tokens", "run", "FILE",
       "labels from a file: a JSON list of strings or one token per line (default: none)", kFile},
      // attn run: a layer of a checkpoint.
      {"--checkpoint", "run", "DIR|FILE|NAME",
       "take params and settings from this model: a directory (config.json beside "
       "model.safetensors or its shards), a .safetensors or .gguf file, or a model on this "
       "machine, ollama:NAME[:TAG] or hf:ORG/NAME[@REVISION] (attn models lists them) (default: "
       "none)",
       kFile},
      {"--layer", "run", "N",
       "the layer to read, 0-based, or all: every layer's weights as one stack "
       "[layers][1][heads][q][k], from --text or --ids (default: 0)"},
      {"--text", "run", "TEXT",
       "compute the layer's input from this text: the checkpoint's tokenizer.json, then the "
       "layers before it; the tokens are the labels (default: none, X from --x)"},
      {"--text-file", "run", "FILE",
       "the same with the text of FILE (- for stdin), without its final newline (default: none)",
       kFile},
      {"--ids", "run", "I,J,...",
       "the same from token ids, comma separated; the labels are the tokens where the checkpoint "
       "has a tokenizer.json, else the ids (default: none)"},
      {"--hidden-out", "run", "FILE",
       "with --text or --ids: also write the model's hidden states [layers+1][1][q][hidden] to "
       "FILE.npy, as transformers' output_hidden_states (default: none)",
       kFile, nullptr, "*.npy"},
      {"--tokenizer", "run", "FILE|DIR",
       "the tokenizer.json (or a directory holding it) of --text and of the labels, for a "
       "checkpoint without one or given as a file (default: the checkpoint directory's)",
       kFile},
      {"--no-special", "run", "",
       "--text without the tokenizer's special tokens, add_special_tokens=False (default: with "
       "them)"},
      {"--arch", "run", "NAME",
       "architecture when there is no config.json: " + arch_list() +
           " (default: config.json's model_type)",
       kNames, architecture_names},
  };
}

// attn run's rows: the whole model, output, the heatmap.
std::vector<Flag> run_output_rows() {
  return {
      // attn run: the whole model.
      {"--summary", "run", "STAT",
       "one number per layer and head instead of the stack of weights: entropy, first, previous, "
       "self or distance (the mean over the query rows, a causal model's first query left out); "
       "with --texts, its mean and numpy.std over the sentences (default: none)",
       kNames, copy<head_stat_names>},
      {"--texts", "run", "FILE",
       "run every sentence of FILE, JSON Lines (a JSON string or {\"text\": ...} a line), in "
       "batches, for --summary (default: none)",
       kFile},
      {"--each-line", "run", "",
       "--text-file FILE holds a sentence a line, run as --texts runs them (default: the whole "
       "file is one text)"},
      {"--rollout-fusion", "run", "HOW",
       "--of rollout: how the heads of a layer are fused, mean, max or min (default mean)", kNames,
       copy<rollout_fusion_names>},
      {"--predict", "run", "K",
       "add the K most likely next tokens of each position, softmax of the final logits "
       "(default: none)"},
      {"--logit-lens", "run", "K",
       "add the K most likely tokens of every hidden state through the final norm and the "
       "unembedding; with --heatmap, drawn as layers x positions (default: none)"},
      {"--logits-out", "run", "FILE",
       "write the final logits [1][q][vocab] to FILE.npy, float32 (default: none)", kFile, nullptr,
       "*.npy"},
      // attn run: output.
      {"-f,--format", "run", "FORMAT",
       "table, json or csv (default: from the extension of -o, else table)", kNames,
       copy<format_names>},
      {"-w,--weights", "run", "", "include the attention weights"},
      {"--long", "run", "",
       "with -f csv: the weights as a long table, a row per cell: "
       "layer,batch,head,query,key,query_token,key_token,weight (default: a block per array)"},
      {"-o,--output", "run", "FILE",
       "write to FILE atomically; its extension sets the format: .json, .csv, .npy, .npz (the "
       "whole result as NumPy arrays), else a table (default -: stdout)",
       kFile},
      {"--out-dir", "run", "DIR",
       "batch: write each input's result to DIR/<name>.<format> (DIR is created)", kDirectory},
      {"--weights-out", "run", "FILE", "also write the weights to FILE", kFile},
      {"--trace", "run", "",
       "print every step of the computation (inputs, QKᵀ, scaling, masks, softmax, ...)"},
      {"--trace-format", "run", "FORMAT",
       "text, markdown, latex or json (default: from the extension of -o: .md, .tex, .json; else "
       "text)",
       kNames, copy<trace_format_names>},
      {"--query", "run", "I",
       "trace only this query, an index or a label (default: every query); --batch and --head "
       "narrow a trace too"},
      {"--similarity", "run", "", "add dot products between output rows (and input rows)"},
      {"--precision", "run", "N",
       "digits after the point in tables and traces (default 4), and, when given, of JSON and "
       "CSV numbers (default: every digit)"},
      {"--average-heads", "run", "", "report the mean of the head weights"},
      {"--dtype", "run", "NAME", "f64 (default) or f32 arithmetic", kNames, copy<dtype_names>},
      {"--threads", "run", "N", "threads of the computation (default 0: all cores)"},
      {"--check", "run", "", "compare with the input's expected numbers; exit 1 if different"},
      {"--expect", "run", "FILE", "expected numbers for --check from FILE", kFile},
      {"--rtol", "run", "R",
       "relative tolerance of --check: |got - expected| <= atol + rtol·|expected| (NumPy's "
       "allclose) (default 1e-9; 1.3e-6 when the reference is float32 or the run --dtype f32)"},
      {"--atol", "run", "A",
       "absolute tolerance of --check (default 1e-9; 1e-5 when the reference is float32 or the "
       "run --dtype f32)"},
      {"-q,--quiet", "run", "",
       "quiet: no warnings, batch summary or progress bar, and --check lists only mismatches "
       "(errors are still printed)"},
      {"--max-elements", "run", "N",
       "largest tensor the run may hold, in elements (default 2^26); larger runs stop before "
       "allocating"},
      {"--max-input-bytes", "run", "N",
       "largest file (or stdin) the run may read, in bytes (default 2^30); reading stops past "
       "it"},
      {"--emit-pytorch", "run", "",
       "print a Python/PyTorch program that recomputes this run (to cross-check)"},
      {"--title", "run", "TEXT", "title of tables, traces and figures (default: the input's)"},
      {"--description", "run", "TEXT", "description shown in traces (default: the input's)"},
      {"--color", "run", "WHEN",
       "colour traces and --show: auto (a terminal, unless NO_COLOR), always or never (default "
       "auto)",
       kNames, copy<color_names>},
      // attn run: the heatmap (with the drawing flags above).
      {"--heatmap", "run", "FILE",
       "draw the weights as FILE.png, FILE.svg or FILE.html (an interactive page); with "
       "--out-dir, png, svg or html draws one figure per input",
       kFile},
      {"--show", "run", "", "draw the weights in the terminal, after the table"},
      {"--of", "run", "STAGE",
       "what --heatmap/--show draw: weights (default), scores, output or bias; with --layer all, "
       "rollout (attention rollout) or value-norm (weights times the norms of the values through "
       "W_O), written and drawn as the stack",
       kNames, copy<run_of_names>},

  };
}

// attn heatmap's and attn diff's own rows.
std::vector<Flag> heatmap_diff_rows() {
  return {
      // attn heatmap.
      {"input", "heatmap", "FILE", kTensorInput, kFile},
      {"-o,--output", "heatmap", "FILE",
       "write the figure to FILE.png, FILE.svg or FILE.html (an interactive page; - writes PNG "
       "to stdout)",
       kFile},
      {"--show", "heatmap", "", "draw the matrix in the terminal"},
      {"--key", "heatmap", "NAME",
       "JSON documents: the member to draw (default weights, else output)"},
      {"--title", "heatmap", "TEXT", "figure title (default: the file name)"},
      {"--labels", "heatmap", "LIST", "row labels, comma separated (columns too if square)"},
      {"--key-labels", "heatmap", "LIST", "column labels, comma separated"},
      {"--tokens", "heatmap", "FILE",
       "row (and column) labels from a file: a JSON list of strings or one token per line "
       "(default: none)",
       kFile},
      {"--layer", "heatmap", "N",
       "draw only this layer of a stack, 0-based (default: every layer, the model view)"},
      {"--layers", "heatmap", "LIST",
       "draw only these layers of a stack: indices and ranges, as 0-5,11 (default: every layer)"},
      {"--heads", "heatmap", "LIST",
       "draw only these heads of a stack: indices and ranges, as 0,3,8-11 (default: every head)"},
      {"--summary", "heatmap", "STAT",
       "one cell per layer and head: entropy, or the mean weight on the first token, the previous "
       "token or the token itself (first, previous, self), or the mean distance looked back "
       "(distance)",
       kNames, copy<head_stat_names>},
      {"-f,--format", "heatmap", "FORMAT",
       "with --summary: the numbers instead of the figure, as json ({\"summary\", \"values\": "
       "[layer][head]}), csv (layer,head,value) or a table (default: from the extension of -o, "
       ".json or .csv; else the figure)",
       kNames, copy<format_names>},
      {"--stack", "heatmap", "AXIS",
       "what the first axis of a rank-4 array is: batch ([batch][heads][q][k]) or layers "
       "([layers][heads][q][k]) (default: as an attn result records it; layers with --layer; "
       "else batch, with a warning); rank 5 is always [layers][batch][heads][q][k]",
       kNames, stack_names},
      {"--precision", "heatmap", "N",
       "digits after the point of the values in the cells (default: 2, or 3 when that writes "
       "them exactly)"},

      // attn diff.
      {"a", "diff", "A",
       "A, the reference: a JSON array or attn result document (attn run -f json -w), a CSV or "
       ".npy matrix, FILE.npz:NAME, FILE.safetensors:NAME or FILE.gguf:NAME; - reads stdin (on "
       "one side)",
       kFile},
      {"b", "diff", "B", "B, compared with A (B - A)", kFile},
      {"-f,--format", "diff", "FORMAT",
       "the summary as table (default), json or csv (one row per batch entry and head)", kNames,
       copy<format_names>},
      {"--key", "diff", "NAME",
       "JSON documents: the member compared in both (default weights, else output)"},
      {"--layer", "diff", "N",
       "compare layer N, 0-based, of each side that is a stack (of both, or of the stack beside "
       "one layer's weights) (default: none: two stacks compare head by head, a stack beside one "
       "layer's weights needs it)"},
      {"--head", "diff", "H", "compare only head H, 0-based (default: every head)"},
      {"--stack", "diff", "AXIS",
       "what the first axis of a rank-4 array is: batch ([batch][heads][q][k]) or layers "
       "([layers][heads][q][k]) (default: as an attn result records it; with --layer, the "
       "reading under which A and B compare; else batch, with a warning)",
       kNames, stack_names},
      {"--tolerance", "diff", "T",
       "exit with 1 when max |B - A| is above T (default: none, exit 0)"},
      {"--precision", "diff", "N", "digits after the point in the table (default 4)"},
      {"--heatmap", "diff", "FILE", "draw B - A as FILE.png or FILE.svg", kFile},
      {"--show", "diff", "", "draw B - A in the terminal, after the table"},
      {"--title", "diff", "TEXT", "figure title (default \"B − A\")"},
      {"--vmin", "diff", "X",
       "value drawn in the bottom colour (default: -max |B - A|, or -X of --vmax X)"},
      {"--vmax", "diff", "X",
       "value drawn in the top colour (default: max |B - A|, or -X of --vmin X)"},

  };
}

// The rows of attn bench, tokenize, models, examples show and help.
std::vector<Flag> other_rows() {
  return {
      // attn bench (with the settings table's rows marked bench).
      {"--n", "bench", "N", "sequence length: queries = keys (default 2048)"},
      {"--d", "bench", "N", "head width (default 64)"},
      {"--heads", "bench", "N", "heads (default 1)"},
      {"--batch", "bench", "N", "batch size (default 1)"},
      {"--dtype", "bench", "NAME", "f32 (default) or f64", kNames, copy<dtype_names>},
      {"--no-weights", "bench", "", "output only: the streaming kernel, no n×n weights"},
      {"--causal", "bench", "", "with a causal mask (skips the masked tiles)"},
      {"--threads", "bench", "N", "threads (default: all cores)"},
      {"--seconds", "bench", "S", "repeat for at least this many seconds, such as 0.5 (default 1)"},
      {"--json", "bench", "", "one JSON line instead of text"},
      {"--max-elements", "bench", "N", "largest tensor to allocate, in elements (default 2^26)"},

      // attn tokenize (its texts are the words left over: see its footer).
      {"--tokenizer", "tokenize", "FILE|DIR",
       "tokenizer.json, a directory holding it (a checkpoint's), or a GGUF file (its own "
       "tokenizer)",
       kFile},
      {"--checkpoint", "tokenize", "DIR",
       "a checkpoint directory (its tokenizer.json) or GGUF file", kFile},
      {"--text-file", "tokenize", "FILE",
       "one more text: the whole file, without its final newline", kFile},
      {"--no-special", "tokenize", "",
       "no special tokens from the post-processor (add_special_tokens=False), or no BOS/EOS from "
       "a GGUF's"},
      {"--parse-special", "tokenize", "",
       "GGUF: control tokens written in the text read as tokens (llama.cpp's parse_special); "
       "tokenizer.json's added tokens always are"},
      {"-f,--format", "tokenize", "FORMAT",
       "text (default: one line per token, id and token as it reads) or json ({\"text\", "
       "\"ids\", \"tokens\"} per text; an array when several)",
       kNames, tokenize_format_names},

      // attn models, attn examples show, attn help.
      {"-f,--format", "models", "FORMAT",
       "table (default: a line per model) or json (an array, an object a line)", kNames,
       models_format_names},
      {"name", "show", "TEXT", "example name", Complete::kExample},
      {"command", "help", "COMMAND", "a command (run, heatmap, examples show, ...)",
       Complete::kCommand},
  };
}

std::vector<Flag> make_table() {
  std::vector<Flag> table;
  for (auto rows : {shared_rows, run_input_rows, run_output_rows, heatmap_diff_rows, other_rows}) {
    for (Flag& f : rows()) table.push_back(std::move(f));
  }
  return table;
}

bool has_word(std::string_view words, std::string_view word) {
  size_t at = 0;
  while (at <= words.size()) {
    const size_t end = std::min(words.find(' ', at), words.size());
    if (words.substr(at, end - at) == word) return true;
    at = end + 1;
  }
  return false;
}

const Flag& row_of(const CLI::App* cmd, std::string_view name) {
  return flag_of(cmd->get_name(), name);
}

}  // namespace

const std::vector<Flag>& flag_table() {
  static const std::vector<Flag> table = make_table();
  return table;
}

const Flag* find_flag(std::string_view command, std::string_view name) {
  for (const Flag& f : flag_table()) {
    if (!has_word(f.commands, command)) continue;
    // "-f,--format": each spelling names the row.
    const std::string_view names = f.names;
    size_t at = 0;
    while (at <= names.size()) {
      const size_t end = std::min(names.find(',', at), names.size());
      if (names.substr(at, end - at) == name) return &f;
      at = end + 1;
    }
  }
  return nullptr;
}

const Flag& flag_of(std::string_view command, std::string_view name) {
  if (const Flag* f = find_flag(command, name)) return *f;
  throw std::logic_error("the flag table has no row " + std::string(name) + " for attn " +
                         std::string(command));
}

CLI::Option* add(CLI::App* cmd, std::string_view name, std::string& value) {
  const Flag& f = row_of(cmd, name);
  return cmd->add_option(f.names, value, f.help)->type_name(f.value);
}

CLI::Option* add(CLI::App* cmd, std::string_view name, std::vector<std::string>& values) {
  const Flag& f = row_of(cmd, name);
  return cmd->add_option(f.names, values, f.help)->type_name(f.value);
}

CLI::Option* add(CLI::App* cmd, std::string_view name, bool& on) {
  const Flag& f = row_of(cmd, name);
  return cmd->add_flag(f.names, on, f.help);
}

CLI::Option* add(CLI::App* cmd, std::string_view name, std::function<void()> on_given) {
  const Flag& f = row_of(cmd, name);
  return cmd->add_flag_callback(f.names, std::move(on_given), f.help);
}

}  // namespace attn::cli
