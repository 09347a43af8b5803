// What a heatmap draws, from a computed result (weights, scores or output,
// named with the problem's labels and settings) or from a bare tensor, and
// the choice of file format by extension.
#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/heatmap.h"
#include "attn/number_text.h"

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

}  // namespace

HeatmapData heatmap_from_result(const Problem& p, const Result& r, HeatmapStage stage) {
  HeatmapData d;
  d.value_name = std::string(name(stage));
  d.title = p.title.empty() ? p.source : p.title;
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
  const std::optional<Tensor<double>>& t = stage == HeatmapStage::kWeights ? r.weights : r.scores;
  if (!t) throw_internal("heatmap: the result holds no " + d.value_name);
  d.values = t->data();
  if (r.masked && r.masked->size() == t->size()) d.masked = r.masked->data();
  // weights_shape(): rank 4 is [batch][heads]; rank 3 is [batch] for batched
  // input (heads averaged or one head), else [heads].
  const bool batched = p.batched || p.four_d;
  set_dims(d, t->shape(), batched, t->rank() == 4 || !batched);
  d.col_labels = p.key_labels;
  d.head_average = d.heads > 1;
  d.zero_based = stage == HeatmapStage::kWeights;
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
  throw_usage(path + ": a heatmap is written as .png or .svg (chosen by the file name)");
}

}  // namespace attn
