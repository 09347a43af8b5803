// The matrices a figure shows: which batch/head panels (and head means) are
// drawn and how they are arranged, then each panel's values after the
// optional row/column normalisation and block downsampling, and the colour
// range and colormap they are drawn with. Shared by the PNG/SVG figure and
// the terminal preview.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/heatmap.h"

namespace attn::heatmap {

enum CellState : uint8_t { kValue = 0, kMasked = 1, kMissing = 2 };

struct PanelRef {
  int64_t batch = 0;
  int64_t head = 0;  // -1: the mean over the heads
  std::string caption;
};

struct PanelPlan {
  std::vector<PanelRef> refs;  // in reading order
  int grid_rows = 1, grid_cols = 1;
};

// A panel's caption: "batch 1, head 3", "batch 1, mean of heads"; or, short,
// "B1 H3", "B1 mean" (the batch axis's initial: "L3 H5" for layers).
std::string panel_caption(const HeatmapData& d, int64_t batch, int64_t head, bool short_form);
// A panel's batch entry (layer) and head as the source numbers them
// (HeatmapData::batch_ids, head_ids); -1, the mean, stays -1.
int64_t batch_id(const HeatmapData& d, int64_t b);
int64_t head_id(const HeatmapData& d, int64_t h);

// The panels to draw. Throws a usage error for --batch/--head out of range.
PanelPlan plan_panels(const HeatmapData& d, const HeatmapOptions& o);

struct Panel {
  std::string caption;
  std::vector<double> values;      // shown_rows x shown_cols
  std::vector<uint8_t> state;      // CellState per value
  std::vector<std::string> texts;  // written instead of the values (HeatmapData::cell_text)
};

struct Panels {
  int64_t rows = 0, cols = 0;  // of the source matrices
  int64_t factor = 1;          // side of the blocks merged into one shown cell
  int64_t shown_rows = 0, shown_cols = 0;
  int grid_rows = 1, grid_cols = 1;
  std::vector<Panel> panels;
  double lo = 0, hi = 1;  // colour range
  ColorScale scale = ColorScale::kLinear;
  double gamma = 1;
  ColorNorm norm() const { return ColorNorm{lo, hi, scale, gamma}; }
  Colormap colormap = Colormap::kViridis;
  bool any_masked = false, any_missing = false;
  std::string scale_name;  // names the colorbar: "weights", "weights / row max"
  std::string block_note;  // "8192x8192 as 1639x1639: mean of 5x5 blocks", or ""
  // "colours span the data's range, 0.61 to 0.8", when the colour range is
  // the data's own (not 0 to 1, not --vmin/--vmax), or "".
  std::string range_note;
};

// What the colour bar's title says: the values' name and how the colours
// were chosen ("weights; top at the 99th percentile", "weights / row max").
std::string scale_title(const HeatmapData& d, const HeatmapOptions& o);
// Whether the colour range is stretched over the data's own (Panels::range_note).
bool range_from_data(const HeatmapData& d, const HeatmapOptions& o);

// Builds the panels of `plan`, merging factor x factor blocks into one cell.
Panels build_panels(const HeatmapData& d, const HeatmapOptions& o, const PanelPlan& plan,
                    int64_t factor);

// The digits after the point the values are written with: --precision's,
// else 0 for whole numbers and large values, 2 (3 when exact) below 10.
int value_decimals(const Panels& p, const HeatmapOptions& o);

// The smallest block side that brings rows x cols within max_rows x max_cols.
int64_t block_factor(int64_t rows, int64_t cols, int64_t max_rows, int64_t max_cols);

}  // namespace attn::heatmap
