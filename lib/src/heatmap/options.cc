// Names of the heatmap enumerations.
#include "attn/options.h"
#include "attn/heatmap.h"

namespace attn {

namespace {

const std::vector<std::string> kNormalizeNames = {"none", "row", "col"};
const std::vector<std::string> kReduceNames = {"mean", "max"};
const std::vector<std::string> kStageNames = {"weights", "scores", "output", "bias"};
const std::vector<std::string> kAnnotateNames = {"auto", "always", "never"};
const std::vector<std::string> kTokenStyleNames = {"readable", "marker", "raw"};

}  // namespace

const std::vector<std::string>& colormap_names() {
  static const std::vector<std::string> names = {"viridis", "magma",     "gray",    "blues",
                                                 "rdbu",    "viridis_r", "magma_r", "gray_r",
                                                 "blues_r", "rdbu_r"};
  return names;
}

const std::vector<std::string>& normalize_names() { return kNormalizeNames; }
const std::vector<std::string>& reduce_names() { return kReduceNames; }
const std::vector<std::string>& heatmap_stage_names() { return kStageNames; }
const std::vector<std::string>& annotate_names() { return kAnnotateNames; }
const std::vector<std::string>& token_style_names() { return kTokenStyleNames; }

std::string_view name(Colormap c) { return colormap_names()[static_cast<size_t>(c)]; }
bool diverging(Colormap c) { return c == Colormap::kRdBu || c == Colormap::kRdBuR; }
std::string_view name(Normalize n) { return kNormalizeNames[static_cast<size_t>(n)]; }
std::string_view name(Reduce r) { return kReduceNames[static_cast<size_t>(r)]; }
std::string_view name(HeatmapStage s) { return kStageNames[static_cast<size_t>(s)]; }
std::string_view name(Annotate a) { return kAnnotateNames[static_cast<size_t>(a)]; }

}  // namespace attn
