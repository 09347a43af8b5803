// Names of the heatmap enumerations.
#include "attn/options.h"
#include "attn/heatmap.h"

#include <string>

#include "attn/error.h"

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

FigureFit column_fit() { return {700, 1000, true, "column"}; }
FigureFit slide_fit() { return {1920, 1080, false, "slide"}; }

FigureFit parse_figure_fit(const std::string& text) {
  if (text == "column") return column_fit();
  if (text == "slide") return slide_fit();
  const std::string expected = "expected column, slide or WIDTHxHEIGHT in pixels (1200x800)";
  const size_t x = text.find('x');
  auto side = [&](const std::string& s, const char* what) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
      throw_usage("--fit: " + expected + ", got '" + text + "'");
    }
    const long v = std::stol(s);
    if (v < kMinMaxSize || v > kLargestMaxSize) {
      throw_usage("--fit " + text + ": the " + what + " must be from " +
                  std::to_string(kMinMaxSize) + " to " + std::to_string(kLargestMaxSize) +
                  " pixels");
    }
    return static_cast<int>(v);
  };
  if (x == std::string::npos) throw_usage("--fit: " + expected + ", got '" + text + "'");
  const int w = side(text.substr(0, x), "width"), h = side(text.substr(x + 1), "height");
  return {w, h, false, std::to_string(w) + "x" + std::to_string(h)};
}

}  // namespace attn
