// The heatmap flags of the program: their parsing into HeatmapOptions, and
// the heatmap part of a run's request.
#pragma once

#include <string>
#include <string_view>

#include "attn/heatmap.h"

namespace attn {

// Sets the option of `flag` ("--colormap", "--vmin", "--vmax", "--normalize",
// "--batch", "--head", "--max-size", "--reduce", "--cell-size",
// "--labels-every", "--annotate", "--precision", "--font", "--token-style",
// "--ignore-first" with "true", "--color-scale") from its text.
// Throws a usage error naming the flag (an input error for a --font file
// that is not a font).
void set_heatmap_flag(HeatmapOptions& o, std::string_view flag, const std::string& text);
HeatmapStage parse_heatmap_stage_flag(const std::string& text);  // --of

// The heatmap part of `attn run`: which stage to draw, where, and how.
struct HeatmapRequest {
  std::string path;   // --heatmap FILE (.png, .svg or .html); "" for none
  bool show = false;  // --show: draw a preview in the terminal
  HeatmapStage stage = HeatmapStage::kWeights;
  HeatmapOptions options;
  TerminalStyle terminal;

  bool wanted() const { return !path.empty() || show; }
};

}  // namespace attn
