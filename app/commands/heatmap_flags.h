// The heatmap flags of the program: their parsing into HeatmapOptions, and
// the heatmap part of a run's request.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "attn/heatmap.h"

namespace attn {

// Sets the option of `flag` ("--colormap", "--vmin", "--vmax", "--normalize",
// "--batch", "--head", "--max-size", "--fit", "--reduce", "--cell-size",
// "--labels-every", "--annotate", "--precision", "--font", "--token-style",
// "--ignore-first" with "true", "--color-scale") from its text.
// Throws a usage error naming the flag (an input error for a --font file
// that is not a font).
void set_heatmap_flag(HeatmapOptions& o, std::string_view flag, const std::string& text);
HeatmapStage parse_heatmap_stage_flag(const std::string& text);  // --of

// What a run of every layer (--layer all) makes of the weights: the stack
// itself, its attention rollout, or the value-weighted norms (--of), which
// it writes and draws alike.
enum class StackOf { kWeights, kRollout, kValueNorm };

// --of's words: the stages of a figure, then rollout and value-norm.
const std::vector<std::string>& run_of_names();

// The heatmap part of `attn run`: which stage to draw, where, and how.
struct HeatmapRequest {
  std::string path;   // --heatmap FILE (.png, .svg or .html); "" for none
  bool show = false;  // --show: draw a preview in the terminal
  HeatmapStage stage = HeatmapStage::kWeights;
  StackOf stack_of = StackOf::kWeights;  // --of rollout, --of value-norm
  HeatmapOptions options;
  TerminalStyle terminal;

  bool wanted() const { return !path.empty() || show; }
};

// --of TEXT into the request: a stage to draw, or what --layer all computes.
void parse_run_of_flag(const std::string& text, HeatmapRequest& h);

}  // namespace attn
