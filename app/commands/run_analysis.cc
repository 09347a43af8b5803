// `attn run --checkpoint DIR --text T|--ids I,J --layer all` with an
// analysis of the whole model: --summary (one number per head; no stack is
// held), --of rollout and --of value-norm (their stacks, written and drawn
// as the weights' would be), --predict and --logit-lens (what the model
// predicts, from its last hidden state and from each one), --logits-out;
// and the checks of those flags, for every run.

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attn/analysis.h"
#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/escape.h"
#include "attn/file_io.h"
#include "attn/npy.h"
#include "attn/tokenizer.h"
#include "base/number_text.h"
#include "commands/heatmap_command.h"
#include "commands/run_internal.h"
#include "commands/summary_output.h"
#include "heatmap/font.h"
#include "heatmap/geometry.h"
#include "io/formats.h"
#include "io/json_writer.h"
#include "model/model_store.h"

namespace attn::detail {

namespace {

const char* of_name(StackOf of) {
  return of == StackOf::kRollout ? "rollout" : of == StackOf::kValueNorm ? "value-norm" : "weights";
}

// The first of --predict, --logit-lens and --logits-out given, for messages.
const char* prediction_flag(const AnalysisRequest& a) {
  return a.predict > 0 ? "--predict" : a.logit_lens > 0 ? "--logit-lens" : "--logits-out";
}

// The K most likely tokens of each position, and of each hidden state.
struct Predictions {
  std::vector<std::vector<TokenProbability>> next;               // [q][K]
  std::vector<std::vector<std::vector<TokenProbability>>> lens;  // [layers + 1][q][K]
  std::optional<Tokenizer> tokenizer;

  std::string token(int64_t id) const { return tokenizer ? tokenizer->token(id) : ""; }
  std::string readable(int64_t id) const {
    const std::string t = token(id);
    return t.empty() ? std::to_string(id) : tokenizer->readable(t);
  }
};

// The name of hidden state t: the embeddings, then each layer's output.
std::string state_name(int64_t t) {
  return t == 0 ? "embeddings" : "layer " + std::to_string(t - 1);
}

void write_tokens(JsonWriter& w, const Predictions& p,
                  const std::vector<std::vector<TokenProbability>>& rows) {
  w.begin_array(JsonLayout::kBlock);
  for (const std::vector<TokenProbability>& row : rows) {
    w.begin_array(JsonLayout::kInline);
    for (const TokenProbability& t : row) {
      w.begin_object(JsonLayout::kInline);
      w.key("id").integer(t.id);
      const std::string tk = p.token(t.id);
      if (tk.empty()) {
        w.key("token").null();
      } else {
        w.key("token").string(tk);
      }
      w.key("p").number(t.p);
      w.end_object();
    }
    w.end_array();
  }
  w.end_array();
}

void write_predictions(JsonWriter& w, const Predictions& p) {
  if (!p.next.empty()) write_tokens(w.key("predictions"), p, p.next);
  if (!p.lens.empty()) {
    std::vector<std::string> names;
    for (size_t t = 0; t < p.lens.size(); ++t) names.push_back(state_name(static_cast<int64_t>(t)));
    w.key("logit_lens_states").strings(names);
    w.key("logit_lens").begin_array(JsonLayout::kBlock);
    for (const auto& state : p.lens) write_tokens(w, p, state);
    w.end_array();
  }
}

// Columns of text, the first left-aligned, the others too (tokens).
std::string columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  auto cells = [](const std::string& s) {
    size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
  };
  for (const auto& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], cells(r[c]));
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      line += (c ? "  " : "") + r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - cells(r[c]), ' ');
    }
    out += line + "\n";
  }
  return out;
}

// A token as a table shows it: without the space a word starts with.
std::string shown_token(const std::string& readable) {
  return terminal_text(readable.substr(std::min(readable.size(), readable.find_first_not_of(' '))));
}

std::string shown(const Predictions& p, const TokenProbability& t, int precision) {
  return shown_token(p.readable(t.id)) + " " + format_fixed(t.p, precision);
}

// The predictions and the lens as tables: a row per position, then a row
// per hidden state with the most likely token at each position.
std::string predictions_table(const Predictions& p, const std::vector<std::string>& labels,
                              int precision) {
  std::string out;
  if (!p.next.empty()) {
    out += "predictions: the " + std::to_string(p.next[0].size()) +
           " most likely next tokens after each position (p)\n";
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < p.next.size(); ++i) {
      rows.push_back({std::to_string(i), shown_token(labels[i])});
      for (const TokenProbability& t : p.next[i]) rows.back().push_back(shown(p, t, precision));
    }
    out += columns(rows);
  }
  if (!p.lens.empty()) {
    if (!out.empty()) out += "\n";
    out += "logit lens: the most likely next token from each hidden state (p)\n";
    std::vector<std::vector<std::string>> rows{{""}};
    for (const std::string& l : labels) rows[0].push_back(shown_token(l));
    for (size_t s = 0; s < p.lens.size(); ++s) {
      rows.push_back({state_name(static_cast<int64_t>(s))});
      for (const auto& at : p.lens[s]) rows.back().push_back(shown(p, at[0], precision));
    }
    out += columns(rows);
  }
  return out;
}

// The first n characters of UTF-8 text, the last of them "…" when it is cut.
std::string first_characters(const std::string& s, size_t n) {
  size_t chars = 0, at = 0, cut = 0;
  for (; at < s.size(); ++at) {
    if ((static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) continue;
    if (chars == n - 1) cut = at;
    if (++chars > n) return s.substr(0, cut) + "…";
  }
  return s;
}

// The lens as a figure: hidden states down, positions across, each cell
// the most likely token coloured by its probability (as Ecco draws it).
HeatmapData lens_figure(const Predictions& p, const std::vector<std::string>& labels,
                        const std::string& title) {
  auto values = std::make_shared<std::vector<double>>();
  HeatmapData d;
  for (size_t s = 0; s < p.lens.size(); ++s) {
    d.row_labels.push_back(state_name(static_cast<int64_t>(s)));
    for (const auto& at : p.lens[s]) {
      values->push_back(at[0].p);
      // Without the space a word starts with, short enough for a cell.
      std::string t = p.readable(at[0].id);
      t.erase(0, std::min(t.size(), t.find_first_not_of(' ')));
      d.cell_text.push_back(first_characters(t, 10));
    }
  }
  d.owned_values = values;
  d.values = values->data();
  d.rows = static_cast<int64_t>(p.lens.size());
  d.cols = static_cast<int64_t>(labels.size());
  d.col_labels = labels;
  d.row_title = "hidden states";
  d.col_title = "positions";
  d.value_name = "p of the most likely token";
  d.zero_based = true;
  d.title = title;
  d.subtitle =
      "logit lens: the most likely next token from each hidden state, through the final norm and "
      "the unembedding";
  return d;
}

// The largest cells the figure has room for (--cell-size chooses
// otherwise), each token cut to what its cell writes at the labels' size.
HeatmapOptions lens_options(const HeatmapOptions& given, HeatmapData& d) {
  HeatmapOptions o = given;
  // The labels, the colour bar and the margins take about 500 pixels.
  const auto longest = static_cast<int>(std::max<int64_t>(d.rows, d.cols));
  if (!o.cell_size) {
    const int room = (o.max_size - 500) / std::max(longest, 1);
    if (room > 480 / std::max(longest, 1)) o.cell_size = std::min(heatmap::kMaxCell, room);
  }
  const int cell = o.cell_size.value_or(480 / std::max(longest, 1));
  for (std::string& t : d.cell_text) {
    // As the cells' numbers are fitted: scale 2, 4 px a side, the grid's line.
    auto fits = [&](const std::string& s) {
      return heatmap::text_extent(s, 1) * heatmap::kScale + 4 * heatmap::kScale + 4 <= cell;
    };
    for (size_t n = 10; n > 2 && !fits(t); --n) t = first_characters(t, n);
  }
  return o;
}

// What the run computes of the model, layer by layer.
struct ModelRun {
  ModelAttention m;
  Tensor<double> stack;         // rollout or value norms, [layers][1][heads][q][k]
  std::vector<double> summary;  // [layers][heads]
  std::string left_out;
  int64_t layers = 0, heads = 0;
  Predictions predictions;
  Tensor<double> logits;  // [1][q][vocab], --logits-out
};

ModelRun run_model(const RunRequest& req, const CheckpointTokens& t, bool keep_weights) {
  const AnalysisRequest& a = req.analysis;
  const StackOf of = req.heatmap.stack_of;
  ModelRun run;
  ForwardRequest fr = forward_request(req, t);
  fr.keep_weights = keep_weights;
  fr.keep_hidden = !req.hidden_out.empty();
  fr.keep_logits = a.predict > 0 || !a.logits_out.empty();
  Rollout rollout(a.fusion);
  LayerValues values;
  if (of == StackOf::kValueNorm) fr.on_values = [&](const LayerValues& v) { values = v; };
  fr.on_layer = [&](int64_t n, int64_t layers, const Tensor<double>& w) {
    run.layers = layers;
    run.heads = w.dim(1);
    if (a.summary) {
      const HeadSummaries s = summarise_heads(w, *a.summary);
      run.summary.insert(run.summary.end(), s.values.begin(), s.values.end());
      if (n == 0) run.left_out = s.left_out;
    }
    if (of == StackOf::kWeights) return;
    const Tensor<double> layer =
        of == StackOf::kRollout ? rollout.add_layer(w) : value_norms(w, values);
    if (n == 0) {
      Shape shape = layer.shape();
      shape.insert(shape.begin(), layers);
      run.stack = Tensor<double>(shape);
    }
    std::copy(layer.data(), layer.data() + layer.size(), run.stack.data() + n * layer.size());
  };
  if (a.logit_lens > 0) {
    fr.on_lens = [&](int64_t, int64_t, const Tensor<double>& logits) {
      run.predictions.lens.push_back(top_tokens(logits, a.logit_lens, "--logit-lens"));
    };
  }
  if (a.predictions()) run.predictions.tokenizer = run_tokenizer(req, false);
  run.m = model_attention(fr);
  if (a.predict > 0) run.predictions.next = top_tokens(run.m.logits, a.predict, "--predict");
  if (!a.logits_out.empty()) run.logits = std::move(run.m.logits);
  return run;
}

}  // namespace

void check_analysis_flags(const RunRequest& req) {
  const AnalysisRequest& a = req.analysis;
  const StackOf of = req.heatmap.stack_of;
  const std::string corpus = a.texts.empty() ? "--text-file --each-line" : "--texts";
  if (!req.checkpoint.all_layers) {
    if (a.sentences()) {
      throw_usage(corpus +
                  " runs every layer of the model on each sentence: give --layer all "
                  "--summary STAT");
    }
    if (a.summary) {
      throw_usage(
          "--summary gives one number per head of every layer: give --layer all (with "
          "--checkpoint DIR and --text, --ids or --texts)");
    }
    if (of != StackOf::kWeights) {
      throw_usage(std::string("--of ") + of_name(of) +
                  " is made of every layer's weights, a stack a run of one layer does not "
                  "have: give --checkpoint DIR --layer all with --text or --ids");
    }
    if (a.predictions()) {
      throw_usage(std::string(prediction_flag(a)) +
                  " runs the whole model: give --layer all (with --checkpoint DIR and --text or "
                  "--ids)");
    }
  }
  if (a.fusion_given && of != StackOf::kRollout) {
    throw_usage("--rollout-fusion goes with --of rollout");
  }
  if (a.summary && of != StackOf::kWeights) {
    throw_usage(std::string("--summary summarises the weights; --of ") + of_name(of) +
                " writes a stack of its own");
  }
  if (a.sentences()) {
    if (!a.summary) {
      throw_usage(corpus +
                  " gives the mean of a head summary over the sentences: give --summary "
                  "STAT");
    }
    const std::pair<bool, std::string> one_text_only[] = {
        {a.predictions(), prediction_flag(a)},
        {of != StackOf::kWeights, std::string("--of ") + of_name(of)},
        {!req.hidden_out.empty(), "--hidden-out"},
        {!req.weights_out.empty(), "--weights-out"},
    };
    for (const auto& [given, flag] : one_text_only) {
      if (given) throw_usage(flag + " goes with one text (--text or --ids), not with " + corpus);
    }
  }
  const bool npy = has_format(req.output_path, MatrixFormat::kNpy);
  if (a.summary && npy) {
    throw_usage("-o " + req.output_path +
                ": --summary writes numbers per head as JSON, CSV or a table, not .npy");
  }
  if (a.summary && !req.weights_out.empty()) {
    throw_usage(
        "--weights-out: --summary holds no stack of weights; run without --summary to "
        "write it");
  }
  if ((a.predict > 0 || a.logit_lens > 0) && req.output.format == Format::kCsv) {
    throw_usage(std::string(a.predict > 0 ? "--predict" : "--logit-lens") +
                " adds to the JSON (-f json) or the table, not to CSV");
  }
  if ((a.predict > 0 || a.logit_lens > 0) && npy && !a.summary) {
    throw_usage(std::string(a.predict > 0 ? "--predict" : "--logit-lens") +
                " adds to the JSON (-f json) or the table, not to " + req.output_path +
                "; --logits-out FILE.npy writes the logits");
  }
}

bool wants_model_analysis(const RunRequest& req) {
  return req.analysis.summary || req.heatmap.stack_of != StackOf::kWeights ||
         req.analysis.predictions();
}

int run_model_analysis(const RunRequest& req, Console& console) {
  const AnalysisRequest& a = req.analysis;
  const StackOf of = req.heatmap.stack_of;
  const bool npy = has_format(req.output_path, MatrixFormat::kNpy);
  const Format format = req.output.format;
  const bool output_file = !req.output_path.empty() && req.output_path != "-";
  const bool has_predictions = a.predict > 0 || a.logit_lens > 0;
  // With only a figure (or --logits-out) asked for, nothing goes to stdout.
  const bool nothing_printed = (req.output_path.empty() || req.output_path == "-") &&
                               format == Format::kTable && !a.summary && !has_predictions;
  if (!a.summary && format == Format::kCsv) {
    throw_usage("--layer all: a stack has no CSV; write it with -f json or -o FILE.npy");
  }
  if (nothing_printed && !req.heatmap.wanted() && a.logits_out.empty()) {
    throw_usage(std::string("--layer all --of ") + of_name(of) +
                ": a stack of every layer's heads has no table; write it with -f json or -o "
                "FILE.npy, or draw it with --heatmap FILE");
  }
  // The stack of weights is held only where it is written or drawn.
  // With predictions, JSON holds the stack of weights when -w asks for it.
  const bool stack_in_json = of != StackOf::kWeights || !has_predictions || req.output.weights;
  const bool stack_written = !a.summary && (npy || (format == Format::kJson && stack_in_json));
  const bool stack_drawn = req.heatmap.wanted() && !a.summary && a.logit_lens == 0;
  const bool keep_weights =
      of == StackOf::kWeights && (stack_written || stack_drawn || !req.weights_out.empty());
  const CheckpointTokens t = checkpoint_tokens(req);
  ModelRun run = run_model(req, t, keep_weights);
  const std::string model = run.m.model_type;
  const std::string where = " (" + display_name(req.checkpoint.path) + ")";
  const std::string what = of == StackOf::kRollout
                               ? "attention rollout (" +
                                     rollout_fusion_names()[static_cast<size_t>(a.fusion)] +
                                     " of heads)"
                           : of == StackOf::kValueNorm ? "value norms, α·‖v W_O‖ per head"
                                                       : "every layer";
  ModelAttention shown;  // the stack written and drawn: weights, rollout or value norms
  shown.model_type = model;
  shown.weights = of == StackOf::kWeights ? std::move(run.m.weights) : std::move(run.stack);
  const std::function<void(JsonWriter&)> more = [&](JsonWriter& w) {
    write_predictions(w, run.predictions);
  };

  std::string text;
  if (a.summary) {
    SummaryNumbers s;
    s.stat = *a.summary;
    for (int64_t l = 0; l < run.layers; ++l) s.layers.push_back(l);
    for (int64_t h = 0; h < run.heads; ++h) s.heads.push_back(h);
    s.values = run.summary;
    s.left_out = run.left_out;
    s.source = model + ", " + std::to_string(t.ids.size()) + " tokens" + where;
    s.top = a.top;
    text = format_summary(s, format, req.output.precision, more);
    if (format == Format::kTable && has_predictions) {
      text += "\n" + predictions_table(run.predictions, t.labels, req.output.precision);
    }
  } else if (npy) {
    text = format_npy(shown.weights, req.dtype);
  } else if (format == Format::kJson) {
    if (!stack_in_json) {
      // Predictions without the stack (-w adds it).
      JsonWriter w(text);
      w.begin_object(JsonLayout::kBlock);
      w.key("title").string(model + where);
      w.key("tokens").strings(t.labels);
      more(w);
      w.end_object();
      text += '\n';
    } else {
      text = stack_json(req, shown, t.labels, req.dtype, what, more);
    }
  } else if (has_predictions) {
    text = predictions_table(run.predictions, t.labels, req.output.precision);
  }

  // The figure: the lens, the summary, or the stack.
  RenderedHeatmap heatmap;
  if (req.heatmap.wanted()) {
    if (a.logit_lens > 0) {
      HeatmapData d = lens_figure(run.predictions, t.labels, model + where);
      const HeatmapOptions o = lens_options(req.heatmap.options, d);
      heatmap = render_run_figure(req, d, &o);
    } else if (a.summary) {
      SummaryNumbers s;
      s.stat = *a.summary;
      for (int64_t l = 0; l < run.layers; ++l) s.layers.push_back(l);
      for (int64_t h = 0; h < run.heads; ++h) s.heads.push_back(h);
      s.values = run.summary;
      s.left_out = run.left_out;
      heatmap = render_run_figure(req, summary_figure(s, model + where));
    } else {
      heatmap = render_stack_heatmap(req, shown.weights, t.labels, model + ", " + what + where,
                                     of == StackOf::kValueNorm ? "α·‖v W_O‖"
                                     : of == StackOf::kRollout ? "rollout"
                                                               : "",
                                     of != StackOf::kValueNorm);
    }
  }
  std::string weights_text, hidden_text, logits_text;
  if (!req.weights_out.empty()) {
    weights_text = has_format(req.weights_out, MatrixFormat::kNpy)
                       ? format_npy(shown.weights, req.dtype)
                       : stack_json(req, shown, t.labels, req.dtype, what);
  }
  if (!req.hidden_out.empty()) hidden_text = format_npy(run.m.hidden, req.dtype);
  if (!a.logits_out.empty()) logits_text = format_npy(run.logits, DType::kF32);

  std::vector<std::pair<std::string, std::string_view>> files;
  if (output_file) files.emplace_back(req.output_path, text);
  const bool heatmap_file = !req.heatmap.path.empty() && req.heatmap.path != "-";
  if (heatmap_file) files.emplace_back(req.heatmap.path, heatmap.file);
  if (!req.weights_out.empty() && req.weights_out != "-") {
    files.emplace_back(req.weights_out, weights_text);
  }
  if (!req.hidden_out.empty()) files.emplace_back(req.hidden_out, hidden_text);
  if (!a.logits_out.empty()) files.emplace_back(a.logits_out, logits_text);
  write_files_atomic(files);
  if (heatmap_file && !heatmap.warning.empty() && !req.quiet) console.warn(heatmap.warning);
  if (!output_file && !text.empty()) console.out(text);
  if (req.weights_out == "-") console.out(weights_text);
  finish_run_heatmap(req, heatmap, console, heatmap_file);
  return 0;
}

}  // namespace attn::detail
