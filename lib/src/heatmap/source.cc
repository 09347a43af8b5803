// What a heatmap draws, from a computed result (weights, scores or output,
// named with the problem's labels and settings) or from a bare tensor, and
// the choice of file format by extension.
#include <algorithm>
#include <cstdlib>
#include <memory>

#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/heatmap.h"
#include "base/number_text.h"

namespace attn {

namespace {

// Batch, head, rows, cols of a tensor whose leading axes are named by
// has_batch / has_head (a rank below 4 drops the unnamed axes).
void set_dims(HeatmapData& d, const Shape& s, bool has_batch, bool has_head) {
  const size_t n = s.size();
  d.rows = n >= 2 ? s[n - 2] : 1;
  d.cols = n >= 1 ? s[n - 1] : 1;
  size_t lead = 0;
  d.batch = has_batch && n > 2 ? s[lead++] : 1;
  d.heads = has_head && n > 2 + lead ? s[lead] : 1;
  d.batch_axis = d.batch > 1;
  d.head_axis = d.heads > 1;
}

std::vector<std::string> with_indices(const std::vector<std::string>& labels, int64_t n) {
  if (!labels.empty()) return labels;
  std::vector<std::string> out;
  for (int64_t j = 0; j < n; ++j) out.push_back(std::to_string(j));
  return out;
}

// attn_bias plus ALiBi of every (batch, head), in the weights' layout.
void bias_values(const Problem& p, const Result& r, HeatmapData& d) {
  if (p.masks.bias.empty() && p.alibi.empty()) {
    throw_usage("--of bias: this run has no attn_bias and no alibi to draw");
  }
  const int64_t B = p.batch, H = p.heads, Lq = p.len_q, Lk = p.len_k;
  auto values = std::make_shared<std::vector<double>>(static_cast<size_t>(B * H * Lq * Lk), 0.0);
  const Tensor<double>& bias = p.masks.bias;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      double* out = values->data() + (b * H + h) * Lq * Lk;
      if (!bias.empty()) {
        const int64_t bb = bias.dim(0) == 1 ? 0 : b, bh = bias.dim(1) == 1 ? 0 : h;
        const double* src = bias.data() + (bb * bias.dim(1) + bh) * Lq * Lk;
        for (int64_t c = 0; c < Lq * Lk; ++c) out[c] = src[c];
      }
      if (!p.alibi.empty()) {
        const double m = p.alibi[static_cast<size_t>(h)];
        for (int64_t i = 0; i < Lq; ++i) {
          for (int64_t j = 0; j < Lk; ++j)
            out[i * Lk + j] -= m * static_cast<double>(std::llabs(i + p.masks.diagonal - j));
        }
      }
    }
  }
  d.values = values->data();
  d.owned_values = values;
  // The weights' flags mark the masked cells (window, causal, masks).
  if (r.masked && r.masked->size() == B * H * Lq * Lk) d.masked = r.masked->data();
  const bool batched = p.batched || p.four_d;
  Shape s = {Lq, Lk};
  if (p.four_d || H > 1) s.insert(s.begin(), H);
  if (batched) s.insert(s.begin(), B);
  set_dims(d, s, batched, p.four_d || H > 1);
  d.col_labels = p.key_labels;
  d.head_average = d.heads > 1;
  d.value_name = "bias";
}

// Weights with one more column, "sink": the share of each row the sink
// took, 1 - the row's sum (the reported weights are before dropout).
void add_sink_column(HeatmapData& d) {
  const int64_t panels = d.batch * d.heads, R = d.rows, C = d.cols;
  auto values = std::make_shared<std::vector<double>>(static_cast<size_t>(panels * R * (C + 1)));
  auto masked = std::make_shared<std::vector<uint8_t>>(values->size(), 0);
  for (int64_t k = 0; k < panels * R; ++k) {
    double sum = 0;
    for (int64_t j = 0; j < C; ++j) {
      const double w = d.values[k * C + j];
      (*values)[static_cast<size_t>(k * (C + 1) + j)] = w;
      sum += w;
      if (d.masked) (*masked)[static_cast<size_t>(k * (C + 1) + j)] = d.masked[k * C + j];
    }
    (*values)[static_cast<size_t>(k * (C + 1) + C)] = std::max(0.0, 1.0 - sum);
  }
  d.col_labels = with_indices(d.col_labels, C);
  d.col_labels.push_back("sink");
  d.cols = C + 1;
  d.key_cols = C;
  d.values = values->data();
  d.owned_values = values;
  d.masked = masked->data();
  d.owned_masked = masked;
}

}  // namespace

HeatmapData heatmap_from_result(const Problem& p, const Result& r, HeatmapStage stage) {
  HeatmapData d;
  d.value_name = std::string(name(stage));
  d.title = p.title.empty() ? p.source : p.title;
  d.source = p.source;
  d.subtitle = d.value_name + ": " + describe_run(p);
  d.row_labels = p.query_labels;
  if (stage == HeatmapStage::kOutput) {
    const Tensor<double>& t = r.output;
    d.values = t.data();
    // Output: [q][d], [batch][q][d], or [batch][heads][q][d_v] for 4D input.
    set_dims(d, t.shape(), p.batched || p.four_d, p.four_d);
    d.col_title = "features";
    return d;
  }
  if (stage == HeatmapStage::kBias) {
    bias_values(p, r, d);
    return d;
  }
  const std::optional<Tensor<double>>& t = stage == HeatmapStage::kWeights ? r.weights : r.scores;
  if (!t) throw_internal("heatmap: the result holds no " + d.value_name);
  d.values = t->data();
  if (r.masked && r.masked->size() == t->size()) d.masked = r.masked->data();
  // weights_shape(): rank 4 is [batch][heads]; rank 3 is [batch] for batched
  // input (heads averaged or one head), else [heads].
  const bool batched = p.batched || p.four_d;
  set_dims(d, t->shape(), batched, t->rank() == 4 || !batched);
  d.col_labels = p.key_labels;
  // The mean of the heads' weights is PyTorch's average_attn_weights; a
  // mean of scores (logits before the softmax) is not a map of anything.
  d.head_average = d.heads > 1 && stage == HeatmapStage::kWeights;
  // --average-heads: the run kept the mean over the heads (how a mean of
  // scores is asked for); the colour bar says so.
  if (p.heads > 1 && d.heads == 1) {
    d.value_name += " (mean of " + std::to_string(p.heads) + " heads)";
  }
  d.zero_based = stage == HeatmapStage::kWeights;
  if (stage == HeatmapStage::kWeights && !p.sinks.empty()) add_sink_column(d);
  return d;
}

HeatmapData heatmap_from_tensor(const Tensor<double>& t) {
  HeatmapData d;
  d.values = t.data();
  set_dims(d, t.shape(), t.rank() == 4, t.rank() >= 3);
  d.head_average = d.heads > 1;
  d.row_title = "rows";
  d.col_title = "columns";
  d.value_name = "value";
  return d;
}

std::string render_heatmap_file(const HeatmapData& d, const HeatmapOptions& o,
                                const std::string& path) {
  const std::string ext = extension(path);
  if (ext == "png") return render_png(d, o);
  if (ext == "svg") return render_svg(d, o);
  if (ext == "html") return render_html(d, o);
  throw_usage(path + ": a heatmap is written as .png, .svg or .html (chosen by the file name)");
}

}  // namespace attn
