// `attn run --checkpoint DIR --text T|--ids I,J --layer all`: the whole
// model on the tokens, every layer's attention weights as one stack
// ([layers][1][heads][q][k], transformers' torch.stack(output_attentions)),
// written as a table, JSON, CSV (a row per cell), .npy or .npz (with the
// tokens and ids), which attn heatmap draws as the model view and attn
// diff compares; --hidden-out adds the hidden states.
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/escape.h"
#include "attn/file_io.h"
#include "attn/heatmap.h"
#include "attn/npy.h"
#include "attn/npz.h"
#include "attn/output.h"
#include "base/number_text.h"
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
  // The tokens as tables and figures show them (--token-style readable).
  const std::vector<std::string> readable = shown_tokens(labels, TokenStyle::kReadable);
  w.key("labels_readable").begin_object(JsonLayout::kInline);
  w.key("queries").strings(readable).key("keys").strings(readable).end_object();
  w.key("title").string(m.model_type + ", " + what + " (" + display_name(req.checkpoint.path) +
                        ")");
  w.key("settings")
      .string(m.model_type + ", " + std::to_string(s[0]) + " layers, " + std::to_string(s[2]) +
              " heads, " + std::to_string(s[3]) + " tokens; the forward pass in " +
              (dtype == DType::kF32 ? "float32" : "float64"));
  write_json_tensor(w.key("weights"), round_digits(m.weights, req.output.digits), dtype);
  w.key("weights_axes").strings({"layers", "batch", "heads", "queries", "keys"});
  if (more) more(w);
  w.end_object();
  out += '\n';
  return out;
}

namespace {

std::string stack_title(const RunRequest& req, const ModelAttention& m) {
  return m.model_type + ", every layer (" + display_name(req.checkpoint.path) + ")";
}

// The stack as tables, a layer's head each, labelled by the tokens as they
// read.
std::string stack_table(const RunRequest& req, const ModelAttention& m,
                        const std::vector<std::string>& labels) {
  const std::vector<std::string> shown = shown_tokens(labels, TokenStyle::kReadable);
  const Shape& s = m.weights.shape();  // [layers][1][heads][q][k]
  const int64_t cells = s[3] * s[4];
  std::string out = terminal_text(stack_title(req, m)) + "\n";
  for (int64_t l = 0; l < s[0]; ++l) {
    for (int64_t h = 0; h < s[2]; ++h) {
      out += "\nweights (layer " + std::to_string(l) + ", head " + std::to_string(h) + ")  " +
             shape_string({s[3], s[4]}) + "\n";
      out += format_table_matrix(m.weights.data() + (l * s[2] + h) * cells, s[3], s[4], shown,
                                 shown, req.output.precision);
    }
  }
  return out;
}

// The stack as a long table, a row per cell, for pandas and R: layer,
// batch, head, query, key, the two tokens as given and the weight.
std::string stack_csv(const RunRequest& req, const ModelAttention& m,
                      const std::vector<std::string>& labels) {
  const Shape& s = m.weights.shape();
  const Tensor<double> w = round_digits(m.weights, req.output.digits);
  std::vector<std::string> fields;
  for (const std::string& l : labels) fields.push_back(csv_field(l));
  std::string out = "layer,batch,head,query,key,query_token,key_token,weight\n";
  // A causal model's weights right of the diagonal are exactly 0 in every
  // head: masked cells, written nan as a run's masked cells are.
  bool causal = s[3] > 1 && s[3] == s[4];
  const int64_t q = s[3], k = s[4];
  for (int64_t p = 0; causal && p < w.size() / (q * k); ++p) {
    for (int64_t i = 0; causal && i < q; ++i) {
      for (int64_t j = i + 1; causal && j < k; ++j) causal = w[(p * q + i) * k + j] == 0;
    }
  }
  const double* v = w.data();
  for (int64_t l = 0; l < s[0]; ++l) {
    for (int64_t b = 0; b < s[1]; ++b) {
      for (int64_t h = 0; h < s[2]; ++h) {
        const std::string lead =
            std::to_string(l) + "," + std::to_string(b) + "," + std::to_string(h) + ",";
        for (int64_t i = 0; i < s[3]; ++i) {
          for (int64_t j = 0; j < s[4]; ++j, ++v) {
            out += lead + std::to_string(i) + "," + std::to_string(j) + "," +
                   fields[static_cast<size_t>(i)] + "," + fields[static_cast<size_t>(j)] + ",";
            append_csv_number(out, causal && j > i ? NAN : *v, req.dtype);
            out += '\n';
          }
        }
      }
    }
  }
  return out;
}

// The stack as an .npz archive that keeps its tokens: weights, tokens,
// ids, and the hidden states with --hidden-out; attn heatmap and attn diff
// read it with the tokens as labels.
std::string stack_npz(const RunRequest& req, const ModelAttention& m, const CheckpointTokens& t) {
  const Shape& s = m.weights.shape();
  std::vector<std::pair<std::string, std::string>> members;
  members.emplace_back("weights", format_npy(m.weights, req.dtype));
  members.emplace_back("weights_axes",
                       format_npy_strings({"layers", "batch", "heads", "queries", "keys"}, false));
  members.emplace_back("tokens", format_npy_strings(t.labels, false));
  members.emplace_back("ids", format_npy_int64(t.ids));
  if (!req.hidden_out.empty()) members.emplace_back("hidden", format_npy(m.hidden, req.dtype));
  members.emplace_back("title", format_npy_strings({stack_title(req, m)}, true));
  members.emplace_back(
      "settings",
      format_npy_strings({m.model_type + ", " + std::to_string(s[0]) + " layers, " +
                          std::to_string(s[2]) + " heads, " + std::to_string(s[3]) + " tokens"},
                         true));
  return format_npz(members);
}

}  // namespace

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
  const bool npz = has_format(req.output_path, MatrixFormat::kNpz);
  // With only a figure asked for, nothing goes to stdout.
  const bool figure_only = req.heatmap.wanted() &&
                           (req.output_path.empty() || req.output_path == "-") &&
                           req.output.format == Format::kTable;
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
  std::string text;
  if (figure_only || stream) {
  } else if (npy) {
    text = format_npy(m.weights, req.dtype);
  } else if (npz) {
    text = stack_npz(req, m, t);
  } else if (req.output.format == Format::kJson) {
    text = stack_json(req, m, t.labels, req.dtype, "every layer");
  } else if (req.output.format == Format::kCsv) {
    text = stack_csv(req, m, t.labels);
  } else {
    text = stack_table(req, m, t.labels);
  }
  const RenderedHeatmap heatmap =
      render_stack_heatmap(req, m.weights, t.labels, stack_title(req, m));
  std::string weights_text, hidden_text;
  if (!req.weights_out.empty()) {
    // As -o writes them: .npy, a CSV file (or - beside CSV) as the long
    // table, else JSON.
    const bool csv = req.weights_out == "-" ? req.output.format == Format::kCsv
                                            : has_format(req.weights_out, MatrixFormat::kCsv);
    weights_text = has_format(req.weights_out, MatrixFormat::kNpy)
                       ? format_npy(m.weights, req.dtype)
                   : csv ? stack_csv(req, m, t.labels)
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
  finish_run_heatmap(req, heatmap, console, heatmap_file);
  return 0;
}

}  // namespace attn::detail
