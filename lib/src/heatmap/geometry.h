// The figure's geometry: the sizes of its parts (text, gaps, colour bar),
// label measurement and thinning, and the choice of cell size and block
// factor that fits the figure within max_size.
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attn/heatmap.h"
#include "heatmap/axes.h"
#include "heatmap/font.h"
#include "heatmap/panels.h"

namespace attn::heatmap {

// Sizes in pixels, and the two text colours.
constexpr int kMargin = 20;
constexpr int kScale = 2;                    // labels, captions, titles
constexpr int kTextH = kCapHeight * kScale;  // 14 px capitals
constexpr int kPitch = 24;                   // one line of text
constexpr int kLabelGap = 6;                 // labels to matrix
constexpr int kPanelGap = 28;  // between panels; kTightPanelGap to fit a small --max-size
constexpr int kTightPanelGap = 12;
constexpr int kMaxLabelWidth = 16 * 6 * kScale;  // about 16 characters
constexpr int kBarGap = 24, kBarWidth = 22, kTickLen = 4;
constexpr int kTickTextWidth = kTickChars * 6 * kScale - kScale;  // room for 8 characters
constexpr int kMaxCell = 96;
constexpr int kMinGridSide = 32;  // the smallest panel of a grid, pixels (or cells) a side
constexpr Rgb kInk{34, 34, 34};
constexpr Rgb kSoft{100, 100, 100};

// Row or column labels as drawn: the given names (elided in the middle to
// kMaxLabelWidth) or indices.
struct Labels {
  std::vector<std::string> text;  // one per index
  std::vector<std::string> full;  // the whole name where text is elided, else ""
  int max_width = 0;
  bool named = false;
};
Labels make_labels(const std::vector<std::string>& names, int64_t n);

// What the geometry depends on besides the cell size and block factor.
struct GeometryInput {
  const HeatmapData& d;
  const PanelPlan& plan;
  Labels rows, cols;
  int caption_w = 0;
  int tick_w = kTickTextWidth;
  int notes = 0;                             // lines of notes below the figure
  int max_size = 2048;                       // the widest the figure may be
  int max_h = 2048;                          // the tallest
  bool fill = false;                         // --fit: cells as large as the target allows
  std::optional<int> cell_size = {};         // --cell-size
  std::optional<int64_t> labels_every = {};  // --labels-every
  int panel_gap = kPanelGap;
  bool shared_labels = false;  // column labels above the first row of panels only
  int caption_scale = kScale;  // of the panels' captions (caption_w is measured at it)
  std::string bar_title = {};  // the colour bar's (scale_title), wrapped beside the bar
};

// Everything that depends on the cell size and the block factor.
struct Geometry {
  int cell = 1;
  int64_t factor = 1;
  int panel_gap = kPanelGap;
  bool shared_labels = false;
  int caption_scale = kScale;
  int64_t shown_rows = 0, shown_cols = 0;
  int mat_w = 0, mat_h = 0;
  double ppi = 1;                      // pixels per source row/column
  int64_t row_step = 1, col_step = 1;  // label every row_step-th row, ...
  bool col_vertical = false;           // column labels read upwards
  int col_band = 0;
  int slot_w = 0, left_w = 0, right_w = 0, grid_w = 0;
  int title_h = 0, axis_h = 0, caption_h = 0, row_h = 0, notes_h = 0;
  int width = 0, height = 0;
  std::vector<std::string> title, subtitle;  // wrapped lines
  std::vector<std::string> bar_title;        // upright lines beside the colour bar, at most 3
  int bar_h = 0;                             // the colour bar's height
};

Geometry geometry(const GeometryInput& in, int cell, int64_t factor);

// Greedy word wrap of `text` to `width` pixels (kScale) in at most
// max_lines lines, the last ending in "…" when cut.
std::vector<std::string> wrap(const std::string& text, int width, int max_lines, bool bold);

// The largest cells up to a comfortable panel size (at least a label's
// height up to 64 rows) that fit in.max_size, or, when 1-pixel cells do
// not fit, the smallest block factor that does; in.cell_size when given.
// With in.fill (--fit), the cells grow until the grid fills the target
// (up to kMaxFillCell), and --labels-every N is the least step: it is
// raised to a multiple of N at which the labels do not overlap.
Geometry choose_geometry(const GeometryInput& in);

// The largest cell --fit draws (a single small matrix on a slide).
constexpr int kMaxFillCell = 160;

// Whether the figure fits in.max_size x in.max_h.
bool fits(const Geometry& g, const GeometryInput& in);

}  // namespace attn::heatmap
