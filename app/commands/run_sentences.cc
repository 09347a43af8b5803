// `attn run --checkpoint DIR --texts FILE --layer all --summary STAT` (and
// `--text-file FILE --each-line`): every sentence of a corpus through the
// model, its head summary taken layer by layer and added to a running mean
// and spread, so that the memory held is a batch's whatever the corpus's
// length. The file is read twice: once to check every line and count the
// sentences (a bad line stops the run before the model does), once to run
// them, 32 sentences a batch.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attn/analysis.h"
#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/tokenizer.h"
#include "commands/heatmap_command.h"
#include "commands/run_internal.h"
#include "commands/summary_output.h"
#include "io/corpus.h"

namespace attn::detail {

namespace {

// As many sentences as PyTorch's peer pads into one batch (bench/): their
// rows share every product with the weights.
constexpr size_t kBatchSentences = 32;

struct Corpus {
  std::string path;
  CorpusFormat format;
};

// The sentences' ids, the place of each for messages.
std::vector<int64_t> sentence_ids(const Tokenizer& t, const std::string& text,
                                  const std::string& place, bool special) {
  const Encoding e = t.encode(text, special, place);
  if (e.ids.empty()) throw_input(place, "the text has no tokens");
  return e.ids;
}

}  // namespace

int run_sentences(const RunRequest& req, Console& console) {
  const AnalysisRequest& a = req.analysis;
  const Corpus corpus = a.texts.empty() ? Corpus{a.lines, CorpusFormat::kLines}
                                        : Corpus{a.texts, CorpusFormat::kJsonLines};
  const HeadStat stat = *a.summary;
  const bool special = !req.checkpoint.no_special;
  const Tokenizer tokenizer = *run_tokenizer(req, true);
  CorpusReader reader(corpus.path, corpus.format, req.max_input_bytes);
  const std::string name = display_name(corpus.path);
  std::string text;
  int64_t line = 0, sentences = 0;
  // Every line read and tokenized before the model runs.
  while (reader.next(text, line)) {
    sentence_ids(tokenizer, text, name + ":" + std::to_string(line), special);
    ++sentences;
  }
  if (sentences == 0) {
    throw_usage(name + ": no sentences, an empty corpus (" +
                (corpus.format == CorpusFormat::kJsonLines
                     ? "a JSON string or an object with a string \"text\" a line"
                     : "a sentence a line") +
                ")");
  }

  const ProgressFn progress = progress_task(req.progress, "sentences");
  if (progress) progress(0, sentences);
  reader.rewind();
  std::optional<SummaryMoments> moments;
  int64_t layers = 0, heads = 0, done = 0;
  std::string left_out;
  bool left_out_final = false;  // taken from a sentence of two tokens or more
  std::vector<int64_t> ids, lengths;
  auto run_batch = [&]() {
    CheckpointTokens t;
    t.ids = ids;
    ForwardRequest fr = forward_request(req, t);
    fr.progress = {};
    fr.lengths = lengths;
    fr.keep_weights = fr.keep_hidden = false;
    std::vector<std::vector<double>> values(lengths.size());
    fr.on_sentence_layer = [&](int64_t n, int64_t s, const Tensor<double>& w) {
      const HeadSummaries h = summarise_heads(w, stat);
      std::vector<double>& v = values[static_cast<size_t>(s)];
      v.insert(v.end(), h.values.begin(), h.values.end());
      heads = w.dim(1);
      layers = std::max(layers, n + 1);
      if (n == 0 && !left_out_final) {
        left_out = h.left_out;
        left_out_final = lengths[static_cast<size_t>(s)] > 1;
      }
    };
    model_attention(fr);
    if (!moments) moments.emplace(layers * heads);
    for (const std::vector<double>& v : values) moments->add(v);
    done += static_cast<int64_t>(lengths.size());
    if (progress) progress(done, sentences);
    ids.clear();
    lengths.clear();
  };
  while (reader.next(text, line)) {
    const std::vector<int64_t> s =
        sentence_ids(tokenizer, text, name + ":" + std::to_string(line), special);
    ids.insert(ids.end(), s.begin(), s.end());
    lengths.push_back(static_cast<int64_t>(s.size()));
    if (lengths.size() == kBatchSentences) run_batch();
  }
  if (!lengths.empty()) run_batch();
  if (done != sentences) {
    throw_input(name, "changed while it was read: " + std::to_string(sentences) +
                          " sentences, then " + std::to_string(done));
  }

  SummaryNumbers s;
  s.stat = stat;
  for (int64_t l = 0; l < layers; ++l) s.layers.push_back(l);
  for (int64_t h = 0; h < heads; ++h) s.heads.push_back(h);
  s.values = moments->mean();
  s.sd = moments->sd();
  s.counts = moments->counts();
  s.sentences = sentences;
  s.left_out = left_out;
  s.source = name + " through " + display_name(req.checkpoint.path);
  s.top = a.top;
  const std::string out = format_summary(s, req.output.format, req.output.precision);
  const RenderedHeatmap heatmap = render_run_figure(req, summary_figure(s, s.source));
  const bool output_file = !req.output_path.empty() && req.output_path != "-";
  const bool heatmap_file = !req.heatmap.path.empty() && req.heatmap.path != "-";
  std::vector<std::pair<std::string, std::string_view>> files;
  if (output_file) files.emplace_back(req.output_path, out);
  if (heatmap_file) files.emplace_back(req.heatmap.path, heatmap.file);
  write_files_atomic(files);
  if (heatmap_file && !heatmap.warning.empty() && !req.quiet) console.warn(heatmap.warning);
  if (!output_file) console.out(out);
  finish_run_heatmap(req, heatmap, console, heatmap_file);
  return 0;
}

}  // namespace attn::detail
