// `attn run --checkpoint DIR --text T|--ids I,J --layer all`: the whole
// model on the tokens, every layer's attention weights as one stack
// ([layers][1][heads][q][k], transformers' torch.stack(output_attentions)),
// written as JSON or .npy, which attn heatmap draws as the model view and
// attn diff compares; --hidden-out adds the hidden states.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/npy.h"
#include "attn/output.h"
#include "commands/heatmap_command.h"
#include "commands/run_internal.h"
#include "io/formats.h"
#include "io/json_writer.h"

namespace attn::detail {

// The stack as a result document that attn heatmap and attn diff read back
// with its labels.
std::string stack_json(const RunRequest& req, const ModelAttention& m,
                       const std::vector<std::string>& labels, DType dtype, const std::string& what,
                       const std::function<void(JsonWriter&)>& more) {
  const Shape& s = m.weights.shape();
  std::string out;
  JsonWriter w(out);
  w.begin_object(JsonLayout::kBlock);
  w.key("labels").begin_object(JsonLayout::kInline);
  w.key("queries").strings(labels).key("keys").strings(labels).end_object();
  w.key("title").string(m.model_type + ", " + what + " (" + display_name(req.checkpoint.path) +
                        ")");
  w.key("settings")
      .string(m.model_type + ", " + std::to_string(s[0]) + " layers, " + std::to_string(s[2]) +
              " heads, " + std::to_string(s[3]) + " tokens; the forward pass in " +
              (dtype == DType::kF32 ? "float32" : "float64"));
  write_json_tensor(w.key("weights"), m.weights, dtype);
  w.key("weights_axes").strings({"layers", "batch", "heads", "queries", "keys"});
  if (more) more(w);
  w.end_object();
  out += '\n';
  return out;
}

int run_all_layers(const RunRequest& req, Console& console) {
  const CheckpointFlags& c = req.checkpoint;
  if (!c.from_tokens() && !req.analysis.sentences()) {
    throw_usage("--layer all runs the whole model: give --text TEXT or --ids I,J,...");
  }
  // What a single layer's run offers and a stack has not.
  const std::pair<bool, const char*> single_layer_only[] = {
      {req.trace.enabled, "--trace"},
      {req.trace.similarity, "--similarity"},
      {req.check || !req.expect_path.empty(), "--check"},
      {req.emit_pytorch, "--emit-pytorch"},
      {req.average_heads, "--average-heads"},
      {!req.input.empty() || !req.example.empty(), "an input document"},
  };
  for (const auto& [given, what] : single_layer_only) {
    if (!given) continue;
    throw_usage(std::string(what) +
                " goes with one layer (--layer N); with --layer all write the stack with -o "
                "FILE.npy and draw it with attn heatmap FILE.npy (the model view)");
  }
  if (req.output.head >= 0 && !req.heatmap.wanted()) {
    throw_usage("--head " + std::to_string(req.output.head) +
                ": --layer all writes every head of every layer; draw one head with --heatmap "
                "FILE --head H, or give the stack to attn heatmap FILE --head H");
  }
  if (req.analysis.sentences()) return run_sentences(req, console);
  if (wants_model_analysis(req)) return run_model_analysis(req, console);
  const bool npy = has_format(req.output_path, MatrixFormat::kNpy);
  const bool json =
      req.output.format == Format::kJson || has_format(req.output_path, MatrixFormat::kJson);
  // With only a figure asked for, nothing goes to stdout.
  const bool figure_only = req.heatmap.wanted() &&
                           (req.output_path.empty() || req.output_path == "-") &&
                           req.output.format == Format::kTable;
  if (!npy && !json && !figure_only) {
    throw_usage(
        "--layer all: a stack of every layer's heads has no table; write it with -f json "
        "or -o FILE.npy, or draw it with --heatmap FILE");
  }
  const CheckpointTokens t = checkpoint_tokens(req);
  const bool output_file = !req.output_path.empty() && req.output_path != "-";
  // An .npy stack to a regular file is written while it grows, each layer
  // as it is done, on a thread of its own: the file is complete (and on
  // the disk) soon after the last layer, and renamed over the target with
  // the other files, all or none, as before.
  std::unique_ptr<StreamedFile> stream;
  ForwardRequest fr = forward_request(req, t);
  if (npy && output_file && can_stream(req.output_path)) {
    stream = std::make_unique<StreamedFile>(req.output_path);
    fr.on_layer = [&](int64_t n, int64_t layers, const Tensor<double>& w) {
      std::string part;
      if (n == 0) {
        Shape shape = w.shape();
        shape.insert(shape.begin(), layers);
        part = format_npy_header(shape, req.dtype);
      }
      append_npy_cells(part, w, req.dtype);
      stream->append(std::move(part));
    };
  }
  // The stack in memory only for what is rendered from it, the hidden
  // states only for --hidden-out.
  fr.keep_weights = !stream || req.heatmap.wanted() || !req.weights_out.empty();
  fr.keep_hidden = !req.hidden_out.empty();
  const ModelAttention m = model_attention(fr);
  const std::string text = figure_only || stream ? ""
                           : npy                 ? format_npy(m.weights, req.dtype)
                                 : stack_json(req, m, t.labels, req.dtype, "every layer");
  const RenderedHeatmap heatmap = render_stack_heatmap(
      req, m.weights, t.labels,
      m.model_type + ", every layer (" + display_name(req.checkpoint.path) + ")");
  std::string weights_text, hidden_text;
  if (!req.weights_out.empty()) {
    weights_text = has_format(req.weights_out, MatrixFormat::kNpy)
                       ? format_npy(m.weights, req.dtype)
                       : stack_json(req, m, t.labels, req.dtype, "every layer");
  }
  if (!req.hidden_out.empty()) hidden_text = format_npy(m.hidden, req.dtype);
  std::vector<std::pair<std::string, std::string_view>> files;
  if (output_file && !stream) files.emplace_back(req.output_path, text);
  const bool heatmap_file = !req.heatmap.path.empty() && req.heatmap.path != "-";
  if (heatmap_file) files.emplace_back(req.heatmap.path, heatmap.file);
  if (!req.weights_out.empty() && req.weights_out != "-")
    files.emplace_back(req.weights_out, weights_text);
  if (!req.hidden_out.empty()) files.emplace_back(req.hidden_out, hidden_text);
  write_files_atomic(files, stream.get());
  if (heatmap_file && !heatmap.warning.empty() && !req.quiet) console.warn(heatmap.warning);
  if (!output_file && !figure_only) console.out(text);
  if (req.weights_out == "-") console.out(weights_text);
  if (!heatmap_file) {
    write_run_heatmap(req, heatmap, console);
  } else if (req.heatmap.show) {
    write_run_heatmap_preview(req, heatmap, console);
  }
  return 0;
}

}  // namespace attn::detail
