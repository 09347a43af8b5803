#include "commands/heatmap_command.h"

#include <algorithm>
#include <cstring>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/file_io.h"
#include "commands/flags.h"
#include "commands/input_files.h"
#include "commands/matrix_input.h"
#include "commands/summary_output.h"
#include "io/tokens.h"

namespace attn {

namespace {

std::vector<std::string> labels_for(const char* flag, const std::string& text, int64_t n,
                                    const char* what) {
  std::vector<std::string> l = split_list(text);
  if (static_cast<int64_t>(l.size()) != n) {
    throw_usage(std::string(flag) + ": " + std::to_string(l.size()) + " labels for " +
                std::to_string(n) + " " + what);
  }
  return l;
}

// "-" writes the figure to stdout, as PNG (there is no name to choose by).
std::string figure_kind(const std::string& path) { return path == "-" ? "<stdout>.png" : path; }

void write_figure(const std::string& path, const std::string& bytes, Console& console) {
  if (path == "-") {
    console.out(bytes);
  } else {
    write_file_atomic(path, bytes);
  }
}

std::vector<std::string> tokens_for(const HeatmapCommandRequest& req, int64_t n) {
  std::vector<std::string> t = read_tokens(req.tokens, req.max_input_bytes);
  if (static_cast<int64_t>(t.size()) != n) {
    throw_usage("--tokens " + req.tokens + ": " + std::to_string(t.size()) + " tokens for " +
                std::to_string(n) + " rows");
  }
  return t;
}

// Renders everything before writing anything.
int draw(const HeatmapCommandRequest& req, const HeatmapData& d, const HeatmapOptions& o,
         Console& console) {
  std::string file, preview;
  if (!req.output_path.empty()) file = render_heatmap_file(d, o, figure_kind(req.output_path));
  if (req.show) preview = render_terminal(d, o, req.terminal);
  if (!req.output_path.empty()) {
    const std::string warning = req.quiet ? "" : missing_glyph_warning(d, o);
    if (!warning.empty()) console.warn(warning);
    write_figure(req.output_path, file, console);
  }
  if (req.show) console.out(preview);
  return 0;
}

// What of a stack [layers][batch][heads][q][k] a figure at `path` draws:
// the layer, batch and head chosen, and how far its panels are reduced.
StackChoice stack_choice(const Shape& shape, std::optional<int64_t> layer, const HeatmapOptions& o,
                         const std::string& path, const std::vector<int64_t>& layers = {},
                         const std::vector<int64_t>& heads = {}) {
  StackChoice c;
  c.layer = layer;
  c.layers = layers;
  c.heads = heads;
  c.batch = o.batch;
  c.head = o.head;
  const int64_t n_layers = c.layer             ? 1
                           : !c.layers.empty() ? static_cast<int64_t>(c.layers.size())
                                               : shape[0];
  const int64_t n_heads = c.head             ? 1
                          : !c.heads.empty() ? static_cast<int64_t>(c.heads.size())
                                             : shape[2];
  const int64_t panels = n_layers * (n_heads + (n_heads > 1 ? 1 : 0));
  // A grid of small panels merges blocks by their maximum unless --reduce
  // says otherwise: a mean thins a one-cell line (a previous-token head's
  // diagonal) to 1/f of itself, and the grid goes dark.
  c.reduce = o.reduce_given || panels == 1 ? o.reduce : Reduce::kMax;
  // One panel keeps its cells for the renderer (which fits them to
  // --max-size); a grid of panels needs far fewer per panel.
  c.max_side = panels == 1 ? 4096 : 256;
  // Every head's panel is held while the figure is drawn (the means are
  // made from them): at most 2^24 cells in all (128 MB), so 64 layers × 64
  // heads keep 64 × 64 each. No figure shows more: --max-size 16384 over
  // 64 panels a side leaves 256 pixels a panel.
  if (panels > 1) {
    const int64_t held = n_layers * n_heads;
    int64_t side = 4;
    while ((side + 1) * (side + 1) * held <= (int64_t{1} << 24)) ++side;
    c.max_side = std::min(c.max_side, side);
  }
  if (extension(path) == "html") {
    // A page holds every panel's numbers: all of them within its bound.
    c.max_side =
        std::min<int64_t>({c.max_side, static_cast<int64_t>(o.max_size), html_panel_side(panels)});
  }
  return c;
}

// The figure of a stack: one panel, a layer's heads, or the model view.
int draw_stack(const HeatmapCommandRequest& req, BinaryArray a, const std::string& name,
               Console& console, const std::vector<std::string>& file_labels = {}) {
  if (a.shape.size() == 4) a.shape.insert(a.shape.begin() + 1, 1);  // [layers][1][heads][q][k]
  const StackChoice c =
      stack_choice(a.shape, req.layer, req.options, req.output_path, req.layers, req.heads);
  if (req.summary) {
    if (req.options.ignore_first) {
      throw_usage(
          "--ignore-first leaves out the first token's column; the columns of --summary "
          "are heads");
    }
    if (!req.labels.empty() || !req.tokens.empty() || !req.key_labels.empty()) {
      throw_usage("--summary draws layers and heads; --tokens and --labels name tokens");
    }
    if (req.format) {
      // The numbers, not the figure.
      const StackSummaries n = stack_head_summaries(a, c, *req.summary, name);
      SummaryNumbers s;
      s.stat = *req.summary;
      s.layers = n.layers;
      s.heads = n.heads;
      s.values = n.values;
      s.left_out = n.left_out;
      s.source = name;
      s.top = req.top;
      const std::string text = format_summary(s, *req.format, req.options.decimals.value_or(4));
      if (req.output_path.empty() || req.output_path == "-") {
        console.out(text);
      } else {
        write_file_atomic(req.output_path, text);
      }
      return 0;
    }
    HeatmapData d = head_summary(a, c, *req.summary, name);
    d.title = req.title.empty() ? name : req.title;
    HeatmapOptions o = req.options;
    o.batch.reset();  // chosen above
    o.head.reset();
    return draw(req, d, o, console);
  }
  HeatmapData d = heatmap_from_stack(a, c, name);
  const int64_t q = a.shape[3], k = a.shape[4];
  if (!req.labels.empty() && !req.tokens.empty()) {
    throw_usage("give --tokens or --labels, not both");
  }
  std::vector<std::string> labels;
  if (static_cast<int64_t>(file_labels.size()) == q) labels = file_labels;
  if (!req.tokens.empty()) labels = tokens_for(req, q);
  if (!req.labels.empty()) labels = labels_for("--labels", req.labels, q, "queries");
  if (!labels.empty() && d.rows == q) {
    d.row_labels = labels;
    if (k == q) d.col_labels = labels;
  }
  if (!req.key_labels.empty() && d.cols == k) {
    d.col_labels = labels_for("--key-labels", req.key_labels, k, "keys");
  }
  d.title = req.title.empty() ? name : req.title;
  HeatmapOptions o = req.options;
  o.batch.reset();  // chosen above
  o.head.reset();
  o.reduce = c.reduce;
  return draw(req, d, o, console);
}

// The title of a run's figure whose inputs all came from flags (--x, --q,
// --k, ...), which name no document: its files, such as "Q q.npy, K k.npy,
// V v.npy". Empty when there is a document or an example to name instead.
std::string flag_inputs_title(const RunRequest& req) {
  if (!req.input.empty() || !req.example.empty()) return "";
  std::string title;
  for (const auto& [role, path] : req.matrices.sequences()) {
    if (path->empty()) continue;
    // A file name is bytes, not always UTF-8 text.
    title +=
        (title.empty() ? "" : ", ") + std::string(role) + " " + sanitize_utf8(display_name(*path));
  }
  return title;
}

// Whether a rank-4 array without recorded axes is a stack of layers
// [layers][heads][q][k]: --stack says, else --layer (only a stack has
// layers to pick); else it is [batch][heads][q][k], the default, which a
// warning names with the flag that reads it the other way when the readings
// differ (a first axis above 1).
bool rank4_layers(const HeatmapCommandRequest& req, const Shape& shape, const std::string& name,
                  Console& console) {
  if (!req.stack.empty()) return req.stack == "layers";
  if (req.layer || !req.layers.empty()) return true;
  if (shape[0] > 1 && !req.quiet) {
    console.warn(name + ": " + shape_string(shape) +
                 " drawn as [batch][heads][q][k]; --stack layers draws it as "
                 "[layers][heads][q][k], a stack of layers");
  }
  return false;
}

// Flags that only a stack of attention weights takes.
bool wants_stack(const HeatmapCommandRequest& req) {
  return req.layer || req.stack == "layers" || req.summary || !req.layers.empty() ||
         !req.heads.empty();
}

// The first of them given, for messages.
std::string stack_flag(const HeatmapCommandRequest& req) {
  return req.layer             ? "--layer"
         : !req.layers.empty() ? "--layers"
         : !req.heads.empty()  ? "--heads"
         : req.summary         ? "--summary"
                               : "--stack layers";
}

// --layer or --stack layers on what is no stack.
[[noreturn]] void not_a_stack(const HeatmapCommandRequest& req, const std::string& name,
                              const Shape& shape) {
  throw_usage(stack_flag(req) + ": " + name + " has shape " + shape_string(shape) +
              ", not a stack of attention weights (rank 5, or rank 4 with --stack layers)");
}

}  // namespace

int heatmap_command(const HeatmapCommandRequest& req, Console& console) {
  if (req.format && !req.summary) {
    throw_usage(
        "--format writes the numbers of --summary STAT; a figure's format is its "
        "file's extension (-o FILE.png, .svg, .html)");
  }
  if (req.top > 0 && !req.summary) {
    throw_usage("--top N lists the heads of --summary: give --summary STAT");
  }
  if (req.top > 0 && !req.format) {
    throw_usage("--top N lists heads with the numbers of --summary: give -f json, csv or table");
  }
  if (req.format && req.show) {
    throw_usage("--show draws the figure; --format writes the numbers of --summary; give one");
  }
  if (req.output_path.empty() && !req.show && !req.format) {
    throw_usage("heatmap: nothing to do; give -o FILE.png (or .svg, .html) or --show");
  }
  if (req.output_path == "-" && req.show) {
    throw_usage("-o - and --show would both write to stdout; write the figure to a file");
  }
  InputFiles inputs;
  inputs.add(req.input);
  inputs.add(req.tokens);
  inputs.add_font(req.options.font);
  inputs.refuse_output(req.output_path, "-o");
  const std::string name = display_name(req.input);
  MatrixInput l;
  if (std::optional<MatrixInput> result =
          read_npz_result(req.input, req.key, req.max_input_bytes, req.max_elements)) {
    if (wants_stack(req)) {
      throw_usage(stack_flag(req) + ": " + name +
                  " is an attn result, not a stack of attention weights");
    }
    l = std::move(*result);
  } else if (std::optional<NpzStack> stack = read_npz_stack(req.input, req.max_input_bytes)) {
    // A model's stack with its tokens (attn run --layer all -o FILE.npz).
    std::optional<BinaryArray> a = view_binary_matrix(stack->weights, req.max_input_bytes);
    if (!a || a->shape.size() != 5) {
      throw_input(name + ":weights", "expected a stack [layers][batch][heads][q][k]");
    }
    return draw_stack(req, std::move(*a), name, console, stack->tokens);
  } else if (std::optional<BinaryArray> a = view_binary_matrix(req.input, req.max_input_bytes)) {
    if (a->shape.size() == 5 ||
        (a->shape.size() == 4 && rank4_layers(req, a->shape, name, console))) {
      return draw_stack(req, std::move(*a), name, console);
    }
    if (wants_stack(req)) not_a_stack(req, name, a->shape);
    if (a->shape.size() > 4) {
      throw_input(name, "array of rank " + std::to_string(a->shape.size()) +
                            "; attn heatmap reads rank 1 to 4, and stacks of rank 5");
    }
    l.values = read_binary_matrix(*a, name, req.max_input_bytes, req.max_elements);
  } else {
    l = read_text_matrix(req.input, req.key, name, req.max_input_bytes, req.progress, 5);
    const int64_t rank = l.values.rank();
    const std::string place = l.key.empty() ? name : name + ": " + l.key;
    // An attn result says what its axes are.
    const bool layers = rank == 5 || (rank == 4 && l.axes.empty() &&
                                      rank4_layers(req, l.values.shape(), place, console));
    if (layers) {
      // A stack written as JSON (json.dump(np.stack(attentions).tolist())):
      // its numbers as the binary stacks are drawn.
      std::string cells(static_cast<size_t>(l.values.size()) * sizeof(double), '\0');
      if (!cells.empty()) std::memcpy(&cells[0], l.values.data(), cells.size());
      BinaryArray a;
      a.type = ElementType::kF64;
      a.shape = l.values.shape();
      a.keep = FileBytes::from_string(std::move(cells));
      a.data = reinterpret_cast<const unsigned char*>(a.keep.view().data());
      return draw_stack(req, std::move(a), place, console, l.row_labels);
    }
    if (wants_stack(req)) not_a_stack(req, name, l.values.shape());
  }
  if (l.values.size() == 0) {
    // [] or [[]] would be drawn as a frame around nothing.
    throw_input(
        l.key.empty() ? name : name + ": " + l.key,
        "nothing to draw: the array is empty (shape " + shape_string(l.values.shape()) + ")");
  }
  HeatmapData d = heatmap_from_tensor(l.values);
  d.source = name;
  d.row_labels = l.row_labels;
  d.col_labels = l.col_labels;
  if (!req.labels.empty()) {
    d.row_labels = labels_for("--labels", req.labels, d.rows, "rows");
    if (req.key_labels.empty() && d.cols == d.rows) d.col_labels = d.row_labels;
  }
  if (!req.key_labels.empty())
    d.col_labels = labels_for("--key-labels", req.key_labels, d.cols, "columns");
  if (!req.tokens.empty()) {
    if (!req.labels.empty()) throw_usage("give --tokens or --labels, not both");
    d.row_labels = tokens_for(req, d.rows);
    if (req.key_labels.empty() && d.cols == d.rows) d.col_labels = d.row_labels;
  }
  if (l.key == "weights" || l.key == "scores") {
    d.row_title = "queries";
    d.col_title = "keys";
    d.zero_based = l.key == "weights";
  }
  if (!l.key.empty()) d.value_name = l.key;
  d.title = req.title.empty() ? name + (l.key.empty() ? "" : ": " + l.key) : req.title;
  d.subtitle = shape_string(l.values.shape());
  // An attn result redraws as its run drew it: title, settings, axes, mask.
  if (req.title.empty() && !l.title.empty()) d.title = l.title;
  if (!l.settings.empty()) d.subtitle = d.value_name + ": " + l.settings;
  if (l.axes.size() == 3 && l.axes[0] == "batch") {  // [batch][q][k], one head
    d.batch = d.heads;
    d.heads = 1;
    d.batch_axis = true;
    d.head_axis = false;
    d.head_average = false;
  }
  if (!l.masked.empty()) {
    auto masked = std::make_shared<const std::vector<uint8_t>>(std::move(l.masked));
    d.masked = masked->data();
    d.owned_masked = masked;
  }

  return draw(req, d, req.options, console);
}

void request_heatmap_maps(const HeatmapRequest& h, ComputeRequest& creq) {
  if (!h.wanted()) return;
  // The bias figure takes its masked cells from the weights' flags.
  if (h.stage == HeatmapStage::kWeights || h.stage == HeatmapStage::kBias) creq.weights = true;
  if (h.stage == HeatmapStage::kScores) creq.scores = true;
}

RenderedHeatmap render_run_heatmap(const RunRequest& req, const Problem& p, const Result& r) {
  RenderedHeatmap out;
  const HeatmapRequest& h = req.heatmap;
  if (!h.wanted()) return out;
  const bool data_on_stdout =
      req.output.format != Format::kTable && (req.output_path.empty() || req.output_path == "-");
  if (h.show && data_on_stdout) {
    throw_usage("--show would mix the preview into the " +
                std::string(req.output.format == Format::kJson ? "json" : "csv") +
                " on stdout; write the data with -o FILE");
  }
  // "-", /dev/stdout, /dev/fd/1: a figure there would be mixed with the result.
  if (is_stdout(h.path) && (req.output_path.empty() || is_stdout(req.output_path) ||
                            is_stdout(req.weights_out) || h.show)) {
    throw_usage("--heatmap " + h.path +
                " writes the figure to stdout, which already carries the result; "
                "write the result with -o FILE");
  }
  HeatmapData d = heatmap_from_result(p, r, h.stage);
  if (p.title.empty()) {
    const std::string title = flag_inputs_title(req);
    if (!title.empty()) d.title = title;
  }
  if (!h.path.empty()) {
    out.file = render_heatmap_file(d, h.options, figure_kind(h.path));
    out.warning = missing_glyph_warning(d, h.options);
  }
  if (h.show) out.preview = render_terminal(d, h.options, h.terminal);
  return out;
}

RenderedHeatmap render_run_figure(const RunRequest& req, const HeatmapData& d,
                                  const HeatmapOptions* options) {
  RenderedHeatmap out;
  const HeatmapRequest& h = req.heatmap;
  if (!h.wanted()) return out;
  const bool data_on_stdout =
      req.output.format != Format::kTable && (req.output_path.empty() || req.output_path == "-");
  if (h.show && data_on_stdout) {
    throw_usage("--show would mix the preview into the " +
                std::string(req.output.format == Format::kJson ? "json" : "csv") +
                " on stdout; write the data with -o FILE");
  }
  if (is_stdout(h.path) && (req.output_path.empty() || is_stdout(req.output_path) || h.show)) {
    throw_usage("--heatmap " + h.path +
                " writes the figure to stdout, which already carries the result; "
                "write the result with -o FILE");
  }
  HeatmapOptions o = options ? *options : h.options;
  o.batch.reset();
  o.head.reset();
  if (!h.path.empty()) {
    out.file = render_heatmap_file(d, o, figure_kind(h.path));
    out.warning = missing_glyph_warning(d, o);
  }
  if (h.show) out.preview = render_terminal(d, o, h.terminal);
  return out;
}

RenderedHeatmap render_stack_heatmap(const RunRequest& req, const Tensor<double>& stack,
                                     const std::vector<std::string>& labels,
                                     const std::string& title, const std::string& value_name,
                                     bool zero_based) {
  RenderedHeatmap out;
  const HeatmapRequest& h = req.heatmap;
  if (!h.wanted()) return out;
  if (h.stage != HeatmapStage::kWeights) {
    throw_usage("--layer all keeps every layer's weights only; --of " + std::string(name(h.stage)) +
                " goes with one layer (--layer N)");
  }
  if (is_stdout(h.path) && (req.output_path.empty() || is_stdout(req.output_path) || h.show)) {
    throw_usage("--heatmap " + h.path +
                " writes the figure to stdout, which already carries the result; "
                "write the result with -o FILE");
  }
  BinaryArray a;
  a.type = ElementType::kF64;
  a.shape = stack.shape();
  a.data = reinterpret_cast<const unsigned char*>(stack.data());
  const StackChoice c = stack_choice(a.shape, std::nullopt, h.options, figure_kind(h.path));
  HeatmapData d = heatmap_from_stack(a, c, title);
  if (!value_name.empty()) {
    d.value_name = value_name;
    d.zero_based = zero_based;
  }
  const auto q = static_cast<int64_t>(labels.size());
  if (d.rows == q && d.cols == q) {
    d.row_labels = labels;
    d.col_labels = labels;
  }
  d.title = title;
  HeatmapOptions o = h.options;
  o.batch.reset();  // chosen above
  o.head.reset();
  o.reduce = c.reduce;
  if (!h.path.empty()) {
    out.file = render_heatmap_file(d, o, figure_kind(h.path));
    out.warning = missing_glyph_warning(d, o);
  }
  if (h.show) out.preview = render_terminal(d, o, h.terminal);
  return out;
}

void write_run_heatmap(const RunRequest& req, const RenderedHeatmap& h, Console& console) {
  if (!h.warning.empty() && !req.quiet) console.warn(h.warning);
  if (!req.heatmap.path.empty()) write_figure(req.heatmap.path, h.file, console);
  write_run_heatmap_preview(req, h, console);
}

void finish_run_heatmap(const RunRequest& req, const RenderedHeatmap& h, Console& console,
                        bool written_with_files) {
  if (written_with_files) {
    write_run_heatmap_preview(req, h, console);
  } else {
    write_run_heatmap(req, h, console);
  }
}

void write_run_heatmap_preview(const RunRequest& req, const RenderedHeatmap& h, Console& console) {
  if (!req.heatmap.show) return;
  const bool after_table = req.output_path.empty() || req.output_path == "-";
  console.out(after_table ? "\n" + h.preview : h.preview);
}

}  // namespace attn
