// A figure as a list of drawing primitives in pixel coordinates: filled
// rectangles, grids of coloured cells, colorbars and text. The layout
// builds it once; the PNG rasteriser and the SVG writer both draw it, so the
// two files show the same figure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attn/heatmap.h"

namespace attn::heatmap {

struct RectItem {
  int x, y, w, h;
  Rgb color;
};

// rows x cols cells of cell_w x cell_h pixels; `gap` pixels of each cell's
// right and bottom edge are left to the background. State per CellState:
// masked cells are hatched, missing (NaN) cells flat gray.
struct CellGrid {
  int x = 0, y = 0;
  int cell_w = 1, cell_h = 1, gap = 0;
  int64_t rows = 0, cols = 0;
  std::vector<Rgb> colors;
  std::vector<uint8_t> state;
  bool legend = false;  // a swatch explaining a colour, not data
  // Per cell, what a tooltip says ("query 'it' · key 'sweet': 0.1250");
  // empty, or only for grids the SVG writes cell by cell (kMaxTipCells).
  std::vector<std::string> tips;
};

// Grids of more cells are embedded in the SVG as an image, without tooltips.
constexpr int64_t kMaxTipCells = 128 * 128;

// A vertical colour ramp, top colour at the top.
struct ColorbarItem {
  int x, y, w, h;
  Colormap colormap;
};

enum class Anchor { kStart, kMiddle, kEnd };

// Text whose capitals span [y, y + kCapHeight*scale) (horizontal), or, when
// vertical, read bottom to top with the capitals' top edge at x and the
// anchor measured along y (start = the bottom end).
struct TextItem {
  int x = 0, y = 0;
  std::string text;     // UTF-8
  std::string tooltip;  // the whole text when `text` is elided (the SVG's <title>)
  int scale = 2;
  Anchor anchor = Anchor::kStart;
  bool vertical = false;
  bool bold = false;
  Rgb color{34, 34, 34};
  std::string
      role;  // "title", "caption", "row-label", "col-label", "value", "tick", "axis", "note"
};

struct Scene {
  int width = 0, height = 0;
  std::shared_ptr<const Font> font;  // the text's; null: DejaVu Sans
  Rgb background{255, 255, 255};
  std::vector<RectItem> rects;  // drawn first
  std::vector<CellGrid> grids;
  std::vector<RectItem> overlays;  // drawn over the grids: the line before a sink column
  std::vector<ColorbarItem> bars;
  std::vector<TextItem> texts;  // drawn last
};

// Lays out the figure of `d`: picks cell sizes, downsampling, label
// thinning and rotation within o.max_size, and builds the scene. The cells'
// tooltips (CellGrid::tips) are built only when asked: the SVG shows them,
// the PNG has no use for them.
Scene layout_figure(const HeatmapData& d, const HeatmapOptions& o, bool tooltips = false);

}  // namespace attn::heatmap
