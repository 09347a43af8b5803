// The memory check of `attn run`: which flags make the engine keep whole
// score matrices, and how large a heatmap image may get, for check_limits().
#include "attn/limits.h"
#include "commands/run_internal.h"

namespace attn::detail {

void check_run_limits(const RunRequest& req, const Problem& p, const ComputeRequest& creq) {
  LimitOptions o;
  o.max_elements = req.max_elements;
  o.trace = req.trace.enabled;
  o.similarity = req.trace.similarity;
  if (req.output.weights) {
    o.maps_flag = "--weights";
  } else if (!req.weights_out.empty()) {
    o.maps_flag = "--weights-out";
  } else if (!req.heatmap.path.empty() && req.heatmap.stage != HeatmapStage::kOutput) {
    o.maps_flag = "--heatmap";
  } else if (req.heatmap.show && req.heatmap.stage != HeatmapStage::kOutput) {
    o.maps_flag = "--show";
  } else if (creq.weights) {
    o.maps_flag = "--check";  // the expected block holds weights
  }
  if (!req.heatmap.path.empty()) o.raster_side = req.heatmap.options.max_size;
  check_limits(p, creq, o);
}

}  // namespace attn::detail
