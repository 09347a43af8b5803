// The figure's layout: with the geometry chosen, every panel, label, value,
// the colorbar and the notes placed as scene items.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "attn/error.h"
#include "base/number_text.h"
#include "heatmap/axes.h"
#include "heatmap/color.h"
#include "heatmap/font.h"
#include "heatmap/geometry.h"
#include "heatmap/panels.h"
#include "heatmap/scene.h"

namespace attn::heatmap {

namespace {

struct Annotation {
  int scale = 0;  // 0: values are not written
  int decimals = 0;
};

// Values go into the cells when every one of them fits, at the label size
// or else at half of it (--annotate auto); always at one of the two
// (always); never (never).
// Across several panels (auto), the values are written at the label size
// or not at all: smaller than the tick labels, they are noise.
Annotation choose_annotation(const Panels& p, const HeatmapOptions& o, int inner) {
  if (o.annotate == Annotate::kNever) return {};
  if (p.factor != 1 && o.annotate != Annotate::kAlways) return {};
  const int decimals = value_decimals(p, o);
  int widest = 0;  // at scale 1
  for (const Panel& panel : p.panels) {
    for (size_t i = 0; i < panel.values.size(); ++i) {
      if (panel.state[i] != kValue) continue;
      const std::string t =
          panel.texts.empty() ? value_text(panel.values[i], decimals) : panel.texts[i];
      widest = std::max(widest, text_extent(t, 1));
    }
  }
  const bool many = p.panels.size() > 1 && o.annotate == Annotate::kAuto;
  for (int scale : {2, 1}) {
    if (scale == 1 && many) break;
    if (kCapHeight * scale + 6 <= inner && widest * scale + 4 * scale + 2 <= inner) {
      return {scale, decimals};
    }
  }
  if (o.annotate == Annotate::kAlways) return {1, decimals};
  return {};
}

TextItem text(int x, int y, std::string s, Anchor a, const char* role, Rgb color = kInk) {
  TextItem t;
  t.x = x;
  t.y = y;
  t.text = std::move(s);
  t.anchor = a;
  t.role = role;
  t.color = color;
  return t;
}

// The colour bar's labels inside the range (its ends are labelled too):
// round values, or decades on a log scale (every 2nd, 3rd, ... when there
// are many); a label too long to fit beside the bar is left out.
std::vector<std::pair<double, std::string>> inner_ticks(const Panels& p) {
  std::vector<std::pair<double, std::string>> out;
  if (p.scale == ColorScale::kLog) {
    const int e0 = static_cast<int>(std::ceil(std::log10(p.lo))),
              e1 = static_cast<int>(std::floor(std::log10(p.hi)));
    const int every = std::max(1, (e1 - e0 + 1 + 5) / 6);
    for (int e = e0; e <= e1; e += every) {
      const double v = std::pow(10.0, e);
      out.emplace_back(v, end_text(v));
    }
    return out;
  }
  const Ticks ticks = colorbar_ticks(p.lo, p.hi, 5);
  for (double v : ticks.values) {
    std::string label = tick_text(v, ticks.step);
    if (!label.empty()) out.emplace_back(v, std::move(label));
  }
  return out;
}

// The room the colour bar's labels take, at most kTickTextWidth.
int tick_width(const Panels& p) {
  int w = std::max(text_extent(end_text(p.lo), kScale), text_extent(end_text(p.hi), kScale));
  for (const auto& [v, label] : inner_ticks(p)) w = std::max(w, text_extent(label, kScale));
  return std::min(w, kTickTextWidth);
}

void add_colorbar(Scene& s, const Panels& p, const HeatmapData& d, int x, int y, int h,
                  int tick_x) {
  (void)d;
  s.bars.push_back({x, y, kBarWidth, h, p.colormap});
  const ColorNorm norm = p.norm();
  auto y_of = [&](double v) {
    const double t = p.scale == ColorScale::kLinear
                         ? (p.hi / 2 - v / 2) / (p.hi / 2 - p.lo / 2)  // halves: see range_fraction
                         : 1 - norm.fraction(v);
    return y + static_cast<int>(std::lround(t * (h - 1)));
  };
  auto tick = [&](double v, std::string label) {
    const int ty = y_of(v);
    s.rects.push_back({x + kBarWidth, ty, kTickLen, 1, kInk});
    s.texts.push_back(text(tick_x, ty - kTextH / 2, std::move(label), Anchor::kStart, "tick"));
  };
  tick(p.hi, end_text(p.hi));
  tick(p.lo, end_text(p.lo));
  for (auto& [v, label] : inner_ticks(p)) {
    const int ty = y_of(v);
    if (ty - y < kPitch + 8 || y + h - 1 - ty < kPitch + 8) continue;  // crowds an end label
    tick(v, std::move(label));
  }
}

// The colour bar's title, its lines upright from x rightwards, centred on mid.
void add_bar_title(Scene& s, const std::vector<std::string>& lines, int x, int mid) {
  for (size_t i = 0; i < lines.size(); ++i) {
    TextItem t =
        text(x + static_cast<int>(i) * kPitch, mid, lines[i], Anchor::kMiddle, "axis", kSoft);
    t.vertical = true;
    s.texts.push_back(t);
  }
}

// The room a panel's caption takes (bold, with two pixels to spare); 0
// for none, so a figure of one panel has no caption line.
int caption_width(const std::string& caption, int scale) {
  return caption.empty() ? 0 : text_extent(caption, scale, true) + 2;
}

// What each cell's tooltip says: its panel, query and key (with their
// labels) and value, in full (the shortest text that reads back the same).
std::vector<std::string> cell_tips(const HeatmapData& d, const Panel& panel) {
  auto name = [](const std::vector<std::string>& labels, int64_t i) {
    std::string s = std::to_string(i);
    if (static_cast<size_t>(i) < labels.size()) s += " '" + labels[static_cast<size_t>(i)] + "'";
    return s;
  };
  auto singular = [](std::string t) {  // "queries" → "query", "keys" → "key"
    if (t.size() > 3 && t.compare(t.size() - 3, 3, "ies") == 0)
      return t.substr(0, t.size() - 3) + "y";
    if (t.size() > 1 && t.back() == 's') t.pop_back();
    return t;
  };
  const std::string row_title = singular(d.row_title), col_title = singular(d.col_title);
  const std::string head = panel.caption.empty() ? "" : panel.caption + ": ";
  std::vector<std::string> tips;
  tips.reserve(panel.values.size());
  for (int64_t r = 0; r < d.rows; ++r) {
    const std::string row = head + row_title + " " + name(d.row_labels, r) + ", ";
    for (int64_t c = 0; c < d.cols; ++c) {
      const size_t i = static_cast<size_t>(r * d.cols + c);
      const std::string v = panel.state[i] == kMasked    ? "masked"
                            : panel.state[i] == kMissing ? "nan"
                                                         : format_shortest(panel.values[i]);
      tips.push_back(row + col_title + " " + name(d.col_labels, c) + ": " + v);
    }
  }
  return tips;
}

// The panels' arrangement: the plan's rows and columns (a row per batch
// entry) when the figure fits --max-size without downsampling; otherwise every number of columns
// is tried (the panels wrap in reading order, the means too) and the one
// with the largest cells that fits wins, the squarer on a tie; when none
// fits, again with short, small captions ("B1 H3"), narrower gaps and the
// column labels above the first row only (every panel has the same keys).
// With --fit every arrangement is tried, the short captions too (kept at
// the labels' size: a figure laid out for a page keeps its text legible),
// and of equal cells the one covering more of the target wins.
Geometry arrange(GeometryInput& cx, PanelPlan& plan) {
  Geometry best = choose_geometry(cx);
  const int n = static_cast<int>(plan.refs.size());
  bool found_fit = fits(best, cx);
  // Past a few thousand panels nothing fits (each keeps kMinGridSide px a side).
  if (n == 1 || n > 4096 || (!cx.fill && found_fit && best.factor == 1)) {
    return best;
  }
  const int rows0 = plan.grid_rows, cols0 = plan.grid_cols;
  int best_cols = cols0;
  // What the attempts change of cx, as the best arrangement had it.
  struct Style {
    int panel_gap, caption_scale, caption_w;
    bool shared_labels;
  };
  auto style_of = [](const GeometryInput& x) {
    return Style{x.panel_gap, x.caption_scale, x.caption_w, x.shared_labels};
  };
  Style best_style = style_of(cx);
  std::vector<std::string> best_captions;
  for (const PanelRef& r : plan.refs) best_captions.push_back(r.caption);
  auto squareness = [](const Geometry& x) {
    return std::fabs(std::log(static_cast<double>(x.width) / std::max(x.height, 1)));
  };
  auto area = [](const Geometry& x) { return static_cast<double>(x.width) * x.height; };
  for (int attempt = 0; attempt < 2 && (attempt == 0 || !found_fit || cx.fill); ++attempt) {
    if (attempt == 1) {
      cx.panel_gap = kTightPanelGap;
      cx.shared_labels = true;
      cx.caption_scale = cx.fill ? kScale : 1;
      cx.caption_w = 0;
      for (PanelRef& r : plan.refs) {
        r.caption = panel_caption(cx.d, r.batch, r.head, true);
        cx.caption_w = std::max(cx.caption_w, caption_width(r.caption, cx.caption_scale));
      }
    }
    for (int cols = n; cols >= 1; --cols) {
      plan.grid_cols = cols;
      plan.grid_rows = (n + cols - 1) / cols;
      // Of the column counts giving the same number of rows, the fewest.
      if (cols > 1 && (n + cols - 2) / (cols - 1) == plan.grid_rows) continue;
      const Geometry g = choose_geometry(cx);
      const bool tie = g.factor == best.factor && g.cell == best.cell;
      const bool better =
          fits(g, cx) &&
          (!found_fit || g.factor < best.factor ||
           (g.factor == best.factor && g.cell > best.cell) ||
           (tie && (cx.fill ? area(g) > area(best) : squareness(g) < squareness(best))));
      if (better) {
        best = g;
        best_cols = cols;
        best_style = style_of(cx);
        best_captions.clear();
        for (const PanelRef& r : plan.refs) best_captions.push_back(r.caption);
        found_fit = true;
      }
    }
  }
  if (!found_fit) {
    plan.grid_cols = cols0;
    plan.grid_rows = rows0;
    return choose_geometry(cx);
  }
  cx.panel_gap = best_style.panel_gap;
  cx.caption_scale = best_style.caption_scale;
  cx.caption_w = best_style.caption_w;
  cx.shared_labels = best_style.shared_labels;
  for (size_t i = 0; i < plan.refs.size(); ++i) plan.refs[i].caption = best_captions[i];
  plan.grid_cols = best_cols;
  plan.grid_rows = (n + best_cols - 1) / best_cols;
  return best;
}

// The limit the figure is held to, as the flags said it.
std::string target_text(const HeatmapOptions& o) {
  if (!o.fit) return "--max-size " + std::to_string(o.max_size);
  return "--fit " + o.fit->name + " (" + std::to_string(o.fit->width) + " × " +
         std::to_string(o.fit->height) + ")";
}

// The figure must fit --max-size: with --cell-size as given, and with
// more than one panel at all (a panel keeps at least kMinGridSide px a
// side, so panels beyond what --max-size holds would grow the image
// without bound: 1000 heads, 5988 x 5468 px; 262,144 heads, gigabytes).
// One panel may pass the limit by its labels and colorbar only, which are
// bounded.
void check_figure_size(const HeatmapData& d, const HeatmapOptions& o, const Geometry& g,
                       size_t panels) {
  const int max_w = o.fit ? o.fit->width : o.max_size, max_h = o.fit ? o.fit->height : o.max_size;
  const bool over = g.width > max_w || g.height > max_h;
  if (o.cell_size && over) {
    throw_usage("--cell-size " + std::to_string(*o.cell_size) + " makes the heatmap " +
                std::to_string(g.width) + " × " + std::to_string(g.height) + " pixels, more than " +
                target_text(o) + "; choose smaller cells or a larger " +
                (o.fit ? "target" : "--max-size"));
  }
  if ((panels > 1 || o.fit) && over) {
    throw_input(d.source, "the heatmap of " + std::to_string(panels) + " panel" +
                              (panels == 1 ? "" : "s") + " needs " + std::to_string(g.width) +
                              " × " + std::to_string(g.height) + " pixels, more than " +
                              target_text(o) + "; draw fewer panels with --head or --batch" +
                              (o.fit                          ? ", or fit a larger target"
                               : o.max_size < kLargestMaxSize ? ", or raise --max-size"
                                                              : ""));
  }
}

// A figure laid out for a column is exactly the column's width: what is
// narrower is centred on it.
void widen_to(Scene& s, int width) {
  const int dx = (width - s.width) / 2;
  if (dx <= 0) return;
  s.width = width;
  for (RectItem& r : s.rects) r.x += dx;
  for (RectItem& r : s.overlays) r.x += dx;
  for (CellGrid& g : s.grids) g.x += dx;
  for (ColorbarItem& b : s.bars) b.x += dx;
  for (TextItem& t : s.texts) t.x += dx;
}

// The title (bold) and subtitle lines; returns the top of the panel grid.
int add_titles(Scene& s, const Geometry& g) {
  int y = kMargin;
  for (size_t i = 0; i < g.title.size(); ++i, y += kPitch) {
    TextItem t = text(kMargin, y, g.title[i], Anchor::kStart, "title");
    t.bold = true;
    s.texts.push_back(t);
  }
  for (const std::string& line : g.subtitle) {
    s.texts.push_back(text(kMargin, y, line, Anchor::kStart, "title", kSoft));
    y += kPitch;
  }
  if (g.title_h) y += 8;
  return y;
}

// Where a panel sits: its grid row and column, the top of its slot, the
// corner of its matrix, and the top of the whole grid.
struct PanelSpot {
  int gi, gj, top, mat_x, mat_y, grid_top;
};

// A panel's caption, the column title under the last row of panels, its
// column labels (above every panel, or the first row only when shared),
// and beside the first column of panels the rows' title and row labels.
void add_panel_labels(Scene& s, const HeatmapData& d, const Geometry& g, const GeometryInput& cx,
                      const Panel& panel, const PanelSpot& at, int grid_rows, bool thin_rows,
                      bool thin_cols) {
  const int mat_x = at.mat_x, mat_y = at.mat_y;
  const bool col_labels = !g.shared_labels || at.gi == 0;
  if (!panel.caption.empty()) {
    TextItem t = text(mat_x, at.top, fit_text(panel.caption, g.slot_w - 2, g.caption_scale, true),
                      Anchor::kStart, "caption");
    t.bold = true;
    t.scale = g.caption_scale;
    s.texts.push_back(t);
  }
  if (at.gi == grid_rows - 1 && g.axis_h) {
    s.texts.push_back(text(mat_x + g.mat_w / 2, mat_y + g.mat_h + (kPitch - kTextH) / 2 + 2,
                           d.col_title, Anchor::kMiddle, "axis", kSoft));
  }
  for (int64_t i = 0; col_labels && i < d.cols; i += g.col_step) {
    const int cx_px = mat_x + static_cast<int>((static_cast<double>(i) + 0.5) * g.ppi);
    const std::string& label = cx.cols.text[static_cast<size_t>(i)];
    TextItem t =
        g.col_vertical
            ? text(cx_px - kTextH / 2, mat_y - kLabelGap, label, Anchor::kStart, "col-label")
            : text(cx_px, mat_y - kLabelGap - kTextH, label, Anchor::kMiddle, "col-label");
    t.vertical = g.col_vertical;
    t.tooltip = cx.cols.full[static_cast<size_t>(i)];
    s.texts.push_back(t);
    if (thin_cols) s.rects.push_back({cx_px, mat_y - 4, 1, 3, kInk});
  }
  if (at.gj == 0) {
    // The rows' title beside each row of panels, or once beside the whole
    // grid when a panel is shorter than the title.
    const bool per_row = text_extent(d.row_title, kScale) + 8 <= g.mat_h;
    if (per_row || at.gi == 0) {
      const int grid_mid =
          at.grid_top + (g.height - at.grid_top - g.notes_h - kMargin - g.axis_h) / 2;
      TextItem axis = text(kMargin, per_row ? mat_y + g.mat_h / 2 : grid_mid, d.row_title,
                           Anchor::kMiddle, "axis", kSoft);
      axis.vertical = true;
      s.texts.push_back(axis);
    }
    for (int64_t i = 0; i < d.rows; i += g.row_step) {
      const int cy = mat_y + static_cast<int>((static_cast<double>(i) + 0.5) * g.ppi);
      TextItem t = text(mat_x - kLabelGap, cy - kTextH / 2, cx.rows.text[static_cast<size_t>(i)],
                        Anchor::kEnd, "row-label");
      t.tooltip = cx.rows.full[static_cast<size_t>(i)];
      s.texts.push_back(t);
      if (thin_rows) s.rects.push_back({mat_x - 4, cy, 3, 1, kInk});
    }
  }
}

// A panel's cells: colours from the colormap (masked and missing cells
// their own), and hover texts in SVG and HTML when there are few enough.
CellGrid panel_grid(const HeatmapData& d, const Panels& p, const Panel& panel, const Rgb* lut,
                    int mat_x, int mat_y, int cell, int gap, bool tooltips) {
  CellGrid grid;
  grid.x = mat_x;
  grid.y = mat_y;
  grid.cell_w = grid.cell_h = cell;
  grid.gap = gap;
  grid.rows = p.shown_rows;
  grid.cols = p.shown_cols;
  grid.state = panel.state;
  grid.colors.resize(panel.values.size());
  const ColorNorm norm = p.norm();
  for (size_t i = 0; i < panel.values.size(); ++i) {
    grid.colors[i] = panel.state[i] == kValue    ? lut[lut_index(norm, panel.values[i])]
                     : panel.state[i] == kMasked ? masked_fill_color()
                                                 : missing_color();
  }
  if (tooltips && p.factor == 1 && grid.rows * grid.cols <= kMaxTipCells) {
    grid.tips = cell_tips(d, panel);
  }
  return grid;
}

// A line between the keys and the columns after them (a sink's share),
// drawn over the cells so that the extra column does not read as a key.
void add_key_separator(Scene& s, const HeatmapData& d, const CellGrid& grid, int64_t factor) {
  if (d.key_cols <= 0 || d.key_cols >= d.cols) return;
  const int x = grid.x + static_cast<int>(d.key_cols * grid.cell_w / factor);
  s.overlays.push_back({x - 1, grid.y, 2, static_cast<int>(grid.rows) * grid.cell_h, kInk});
}

// The numbers in the cells (not in masked ones), in a colour that reads
// on the cell's.
void add_values(Scene& s, const Panel& panel, const CellGrid& grid, const Annotation& ann,
                int inner) {
  for (int64_t r = 0; r < grid.rows; ++r) {
    for (int64_t c = 0; c < grid.cols; ++c) {
      const size_t i = static_cast<size_t>(r * grid.cols + c);
      if (panel.state[i] == kMasked) continue;
      TextItem t =
          text(grid.x + static_cast<int>(c) * grid.cell_w + inner / 2,
               grid.y + static_cast<int>(r) * grid.cell_h + (inner - kCapHeight * ann.scale) / 2,
               panel.texts.empty() ? value_text(panel.values[i], ann.decimals) : panel.texts[i],
               Anchor::kMiddle, "value", text_color_on(grid.colors[i]));
      if (panel.state[i] == kMissing) t.text = "nan";
      t.scale = ann.scale;
      s.texts.push_back(t);
    }
  }
}

// Under the figure from y = ny: the legend of masked and missing cells,
// the note on averaged blocks, and the colour range when it is the data's.
void add_notes(Scene& s, const Panels& p, const Geometry& g, int ny) {
  const int note_w = g.width - 2 * kMargin;
  if (p.any_masked || p.any_missing) {
    int x = kMargin;
    auto swatch = [&](uint8_t state, const char* label) {
      CellGrid sw;
      sw.x = x;
      sw.y = ny;
      sw.cell_w = sw.cell_h = kTextH;
      sw.rows = sw.cols = 1;
      sw.state = {state};
      sw.colors = {state == kMasked ? masked_fill_color() : missing_color()};
      sw.legend = true;
      s.grids.push_back(sw);
      s.texts.push_back(text(x + kTextH + 8, ny, label, Anchor::kStart, "note"));
      x += kTextH + 8 + text_extent(label, kScale) + 24;
    };
    if (p.any_masked) swatch(kMasked, "masked");
    if (p.any_missing) swatch(kMissing, "nan");
    ny += kPitch;
  }
  if (!p.block_note.empty()) {
    s.texts.push_back(
        text(kMargin, ny, fit_text(p.block_note, note_w, kScale), Anchor::kStart, "note"));
    ny += kPitch;
  }
  if (!p.range_note.empty()) {
    s.texts.push_back(
        text(kMargin, ny, fit_text(p.range_note, note_w, kScale), Anchor::kStart, "note"));
  }
}

// The model view: layers as rows and heads as columns (the mean of the
// heads last), each named once on the margins ("L3", "H5"), panels
// without captions a few pixels apart. The tokens label the first row and
// column of panels when every one of them fits (a cell as tall as a
// label), else the panels go unlabelled and the note under the grid says
// what a panel's rows and columns are. Cells are as large as --max-size
// allows, down to one pixel, then merged in blocks. With --fit the grid may
// also be turned, layers across and heads down (the mean last), when that
// gives larger panels: 24 layers x 14 heads fill a landscape slide so.
Scene layout_model_view(const HeatmapData& d, const HeatmapOptions& o, const PanelPlan& plan,
                        bool tooltips) {
  const int L = plan.grid_rows, C = plan.grid_cols;
  const Labels rows = make_labels(d.row_labels, d.rows), cols = make_labels(d.col_labels, d.cols);
  std::vector<std::string> layer_names, head_names;
  for (int i = 0; i < L; ++i) {
    const int64_t b = batch_id(d, plan.refs[static_cast<size_t>(i * C)].batch);
    layer_names.push_back(std::string(1, static_cast<char>(std::toupper(d.batch_name[0]))) +
                          std::to_string(b));
  }
  for (int j = 0; j < C; ++j) {
    const int64_t h = head_id(d, plan.refs[static_cast<size_t>(j)].head);
    head_names.push_back(h < 0 ? "mean" : "H" + std::to_string(h));
  }
  auto widest = [](const std::vector<std::string>& names) {
    int w = 0;
    for (const std::string& n : names) w = std::max(w, text_extent(n, kScale, true));
    return w;
  };
  const int layer_name_w = widest(layer_names), head_name_w = widest(head_names);
  const bool mean = C > 1;  // the last head column is the mean, set a gap apart

  // Everything but the panels, for a cell size, a block factor and an
  // orientation (`across`: layers left to right, heads top to bottom).
  struct Fit {
    int cell = 1, gap = 6;
    int64_t factor = 1, shown_rows = 0, shown_cols = 0;
    bool tokens = false, vertical = false, across = false;
    int left = 0, top = 0, panel_w = 0, panel_h = 0, width = 0, height = 0, title_h = 0;
    int grid_rows = 0, grid_cols = 0, side_name_w = 0;
    std::vector<std::string> title, subtitle;
  };
  const int max_w = o.fit ? o.fit->width : o.max_size;
  const int max_h = o.fit ? o.fit->height : o.max_size;
  int tick_w = kTickTextWidth;
  const std::string bar_title = scale_title(d, o);
  // What the panels are and in which order they run, under the grid.
  auto note_for = [&](bool across) {
    return "each panel: " + d.row_title + " (rows) × " + d.col_title + " (columns); " +
           (across ? d.batch_name + "s left to right, heads top to bottom"
                   : d.batch_name + "s top to bottom, heads left to right") +
           (d.head_ids.empty() ? "" : "; mean: of the heads drawn");
  };
  auto fit = [&](int cell, int64_t factor, bool tokens, bool across) {
    Fit f;
    f.cell = cell;
    f.factor = factor;
    f.across = across;
    f.grid_rows = across ? C : L;
    f.grid_cols = across ? L : C;
    f.side_name_w = across ? head_name_w : layer_name_w;
    f.gap = cell * (d.rows + factor - 1) / factor >= 48 ? 8 : 4;
    f.shown_rows = (d.rows + factor - 1) / factor;
    f.shown_cols = (d.cols + factor - 1) / factor;
    f.panel_w = static_cast<int>(f.shown_cols) * cell;
    f.panel_h = static_cast<int>(f.shown_rows) * cell;
    f.tokens = tokens;
    f.vertical = tokens && cols.named && cols.max_width + 6 > cell;
    const int token_band_left = tokens ? rows.max_width + kLabelGap : 0;
    const int token_band_top = tokens ? (f.vertical ? cols.max_width : kTextH) + kLabelGap : 0;
    // The side's title (vertical), its names, the tokens.
    f.left = kMargin + kTextH + 10 + f.side_name_w + 10 + token_band_left;
    const int grid_w = f.grid_cols * f.panel_w + (f.grid_cols - 1) * f.gap +
                       (mean && !across ? f.gap : 0);  // the mean apart
    const int grid_h =
        f.grid_rows * f.panel_h + (f.grid_rows - 1) * f.gap + (mean && across ? f.gap : 0);
    const int bar_lines =
        std::max<int>(1, static_cast<int>(wrap(bar_title, std::max(grid_h, 160), 3, false).size()));
    const int right = kBarGap + kBarWidth + kTickLen + 4 + tick_w + 10 + kTextH +
                      (bar_lines - 1) * kPitch + kMargin;
    const int content = f.left + grid_w + right;
    const int title_w = std::max(text_extent_upto(d.title, kScale, max_w, true),
                                 text_extent_upto(d.subtitle, kScale, max_w));
    f.width = std::max(content, std::min(title_w + 2 * kMargin, max_w));
    f.title = wrap(d.title, f.width - 2 * kMargin, 4, true);
    f.subtitle = wrap(d.subtitle, f.width - 2 * kMargin, 3, false);
    const size_t lines = f.title.size() + f.subtitle.size();
    f.title_h = lines ? static_cast<int>(lines) * kPitch + 8 : 0;
    // The top's title and names above the grid.
    f.top = kMargin + f.title_h + 2 * kPitch + token_band_top;
    // The note, then the legend, the block note and the range's (two lines at least).
    // The note wraps onto a second line where the figure is narrow (a column).
    const int panel_note_lines =
        static_cast<int>(wrap(note_for(across), f.width - 2 * kMargin, 2, false).size());
    const int note_lines = panel_note_lines + (d.masked ? 1 : 0) +
                           (factor * d.cell_block > 1 ? 1 : 0) + (range_from_data(d, o) ? 1 : 0);
    const int notes = std::max(note_lines, 2) * kPitch + 8;
    f.height = f.top + std::max(grid_h, 160) + notes + kMargin;
    return f;
  };
  auto fits = [&](const Fit& f) { return f.width <= max_w && f.height <= max_h; };
  auto better = [](const Fit& a, const Fit& b) {  // larger cells, then fewer merged
    return a.factor < b.factor || (a.factor == b.factor && a.cell > b.cell);
  };
  const int largest =
      o.fit
          ? static_cast<int>(std::clamp<int64_t>(
                std::min(max_w, max_h) / std::max<int64_t>(std::max(d.rows, d.cols), 1), 1,
                kMaxCell))
          : std::clamp<int>(static_cast<int>(480 / std::max<int64_t>(std::max(d.rows, d.cols), 1)),
                            1, kMaxCell);
  Fit chosen;
  bool found = false;
  for (bool across : {false, true}) {
    if (across && !o.fit) break;  // --max-size keeps layers down
    Fit one;
    bool found_one = false;
    // The largest cells with the tokens on the axes, else without them.
    for (bool tokens : {true, false}) {
      if (tokens && !rows.named) continue;
      for (int cell = o.cell_size.value_or(largest); cell >= 1 && !found_one; --cell) {
        if (tokens && cell < kTextH + 4) break;
        Fit f = fit(cell, 1, tokens, across);
        if (fits(f) || o.cell_size) {
          one = f;
          found_one = true;
        }
      }
    }
    if (!found_one) {  // merge blocks: a panel keeps at least 4 cells a side
      for (int64_t factor = 2;; ++factor) {
        one = fit(1, factor, false, across);
        if (fits(one) || std::max(one.shown_rows, one.shown_cols) <= 4) break;
      }
    }
    if (!found || (fits(one) && (!fits(chosen) || better(one, chosen)))) chosen = one;
    found = true;
  }
  if (chosen.width > max_w || chosen.height > max_h) {
    throw_input(d.source, "the model view of " + std::to_string(L) + " " + d.batch_name + "s × " +
                              std::to_string(C) + " panels needs " + std::to_string(chosen.width) +
                              " × " + std::to_string(chosen.height) + " pixels, more than " +
                              target_text(o) + "; pick " + d.batch_name +
                              "s with --layer, heads with --head" +
                              (o.fit                          ? ", or fit a larger target"
                               : o.max_size < kLargestMaxSize ? ", or raise --max-size"
                                                              : ""));
  }
  const Panels p = build_panels(d, o, plan, chosen.factor);
  tick_w = tick_width(p);
  const bool across = chosen.across;
  const int VR = chosen.grid_rows, VC = chosen.grid_cols;
  const std::vector<std::string>& top_names = across ? layer_names : head_names;
  const std::vector<std::string>& side_names = across ? head_names : layer_names;
  const int top_name_w = across ? layer_name_w : head_name_w;
  const std::string top_title = across ? d.batch_name + "s" : "heads";
  const std::string side_title = across ? "heads" : d.batch_name + "s";
  const std::string note = note_for(across);

  Scene s;
  s.width = chosen.width;
  s.height = chosen.height;
  s.font = o.font;
  Geometry g;
  g.title = chosen.title;
  g.subtitle = chosen.subtitle;
  g.title_h = chosen.title_h;
  const int title_bottom = add_titles(s, g);
  const int grid_top = chosen.top;
  const int grid_left = chosen.left;
  // The mean's column (or row, across) is set one gap further.
  auto panel_x = [&](int j) {
    return grid_left + j * (chosen.panel_w + chosen.gap) +
           (mean && !across && j == VC - 1 ? chosen.gap : 0);
  };
  auto panel_y = [&](int i) {
    return grid_top + i * (chosen.panel_h + chosen.gap) +
           (mean && across && i == VR - 1 ? chosen.gap : 0);
  };
  const int grid_right = panel_x(VC - 1) + chosen.panel_w;
  const int grid_bottom = panel_y(VR - 1) + chosen.panel_h;

  // Margins: the title over the names of the columns, and beside those of the rows.
  s.texts.push_back(
      text((grid_left + grid_right) / 2, title_bottom, top_title, Anchor::kMiddle, "axis", kSoft));
  const int names_y = title_bottom + kPitch;
  // Names where they fit: every one, else every 2nd, 5th, 10th, ... (and
  // the mean always, the names beside it left out where they would touch it).
  const int64_t top_step = nice_step(static_cast<double>(top_name_w + 8) /
                                     static_cast<double>(chosen.panel_w + chosen.gap));
  const int64_t side_step =
      nice_step(static_cast<double>(kTextH + 4) / static_cast<double>(chosen.panel_h + chosen.gap));
  for (int j = 0; j < VC; ++j) {
    const bool is_mean = mean && !across && j == VC - 1;
    const bool crowds_mean =
        mean && !across && j + 1 < VC && panel_x(VC - 1) - panel_x(j) < top_name_w + 8;
    if (!is_mean && (j % top_step != 0 || (top_step > 1 && crowds_mean))) continue;
    TextItem t = text(panel_x(j) + chosen.panel_w / 2, names_y,
                      fit_text(top_names[static_cast<size_t>(j)],
                               std::max(chosen.panel_w + chosen.gap, top_name_w), kScale, true),
                      Anchor::kMiddle, "caption");
    t.bold = true;
    s.texts.push_back(t);
  }
  TextItem side =
      text(kMargin, (grid_top + grid_bottom) / 2, side_title, Anchor::kMiddle, "axis", kSoft);
  side.vertical = true;
  s.texts.push_back(side);
  const int names_right = kMargin + kTextH + 10 + chosen.side_name_w;
  for (int i = 0; i < VR; ++i) {
    const bool is_mean = mean && across && i == VR - 1;
    const bool crowds_mean =
        mean && across && i + 1 < VR && panel_y(VR - 1) - panel_y(i) < kTextH + 4;
    if (!is_mean && (i % side_step != 0 || (side_step > 1 && crowds_mean))) continue;
    TextItem t = text(names_right, panel_y(i) + chosen.panel_h / 2 - kTextH / 2,
                      side_names[static_cast<size_t>(i)], Anchor::kEnd, "caption");
    t.bold = true;
    s.texts.push_back(t);
  }
  // The tokens, beside the first column and above the first row.
  if (chosen.tokens) {
    for (int64_t r = 0; r < d.rows; ++r) {
      const int cy = static_cast<int>(r) * chosen.cell + chosen.cell / 2;
      for (int i = 0; i < VR; ++i) {
        TextItem t = text(grid_left - kLabelGap, panel_y(i) + cy - kTextH / 2,
                          rows.text[static_cast<size_t>(r)], Anchor::kEnd, "row-label");
        t.tooltip = rows.full[static_cast<size_t>(r)];
        s.texts.push_back(t);
      }
    }
    for (int64_t c = 0; c < d.cols; ++c) {
      for (int j = 0; j < VC; ++j) {
        const int cx = panel_x(j) + static_cast<int>(c) * chosen.cell + chosen.cell / 2;
        TextItem t = chosen.vertical
                         ? text(cx - kTextH / 2, grid_top - kLabelGap,
                                cols.text[static_cast<size_t>(c)], Anchor::kStart, "col-label")
                         : text(cx, grid_top - kLabelGap - kTextH,
                                cols.text[static_cast<size_t>(c)], Anchor::kMiddle, "col-label");
        t.vertical = chosen.vertical;
        t.tooltip = cols.full[static_cast<size_t>(c)];
        s.texts.push_back(t);
      }
    }
  }
  const int gap = chosen.cell >= 12 ? 1 : 0;
  const Annotation ann = choose_annotation(p, o, chosen.cell - gap);
  const Rgb* lut = colormap_lut(p.colormap);
  for (size_t k = 0; k < p.panels.size(); ++k) {
    const int i = static_cast<int>(k) / C, j = static_cast<int>(k) % C;  // layer, head
    const int x = across ? panel_x(i) : panel_x(j), y = across ? panel_y(j) : panel_y(i);
    CellGrid grid = panel_grid(d, p, p.panels[k], lut, x, y, chosen.cell, gap, tooltips);
    add_key_separator(s, d, grid, p.factor);
    if (ann.scale) add_values(s, p.panels[k], grid, ann, chosen.cell - gap);
    s.grids.push_back(std::move(grid));
  }
  const int bar_x = grid_right + kBarGap;
  const int bar_h = std::max(grid_bottom - grid_top, 160);
  const int tick_x = bar_x + kBarWidth + kTickLen + 4;
  add_colorbar(s, p, d, bar_x, grid_top, bar_h, tick_x);
  add_bar_title(s, wrap(p.scale_name, bar_h, 3, false), tick_x + tick_w + 10, grid_top + bar_h / 2);
  int ny = std::max(grid_bottom, grid_top + bar_h) + 8 + (kPitch - kTextH) / 2;
  for (const std::string& line : wrap(note, s.width - 2 * kMargin, 2, false)) {
    s.texts.push_back(text(kMargin, ny, line, Anchor::kStart, "note", kSoft));
    ny += kPitch;
  }
  g.width = s.width;
  add_notes(s, p, g, ny);
  return s;
}

// The figure of the panels (or the model view), as large as it needs.
Scene layout_figure_in(const HeatmapData& given, const HeatmapOptions& o, bool tooltips) {
  const FontScope font(o.font.get());
  HeatmapData d = given;  // shares the numbers; the labels as shown
  d.row_labels = shown_tokens(given.row_labels, o.token_style);
  d.col_labels = shown_tokens(given.col_labels, o.token_style);
  PanelPlan plan = plan_panels(d, o);
  if (d.model_view && plan.grid_rows > 1) return layout_model_view(d, o, plan, tooltips);
  GeometryInput cx{d, plan, make_labels(d.row_labels, d.rows), make_labels(d.col_labels, d.cols)};
  for (const PanelRef& r : plan.refs)
    cx.caption_w = std::max(cx.caption_w, caption_width(r.caption, kScale));
  cx.notes = 1 + (d.masked ? 1 : 0) + (range_from_data(d, o) ? 1 : 0);  // at most
  cx.bar_title = scale_title(d, o);
  cx.max_size = o.fit ? o.fit->width : o.max_size;
  cx.max_h = o.fit ? o.fit->height : o.max_size;
  cx.fill = o.fit.has_value();
  cx.cell_size = o.cell_size;
  cx.labels_every = o.labels_every;
  const PanelPlan given_plan = plan;
  const int given_caption_w = cx.caption_w;
  Geometry g = arrange(cx, plan);
  Panels p = build_panels(d, o, plan, g.factor);
  // --fit: arranged again with the colour bar's labels as wide as they are
  // (the first pass allowed for the widest), which may free a column.
  if (o.fit && tick_width(p) < cx.tick_w) {
    plan = given_plan;
    cx.tick_w = tick_width(p);
    cx.panel_gap = kPanelGap;
    cx.shared_labels = false;
    cx.caption_scale = kScale;
    cx.caption_w = given_caption_w;
    const int64_t factor = g.factor;
    g = arrange(cx, plan);
    if (g.factor != factor) p = build_panels(d, o, plan, g.factor);
  }
  check_figure_size(d, o, g, plan.refs.size());

  // With the panels known, size the notes and tick labels as they are.
  cx.tick_w = tick_width(p);
  cx.notes = (p.block_note.empty() ? 0 : 1) + (p.any_masked || p.any_missing ? 1 : 0) +
             (p.range_note.empty() ? 0 : 1);
  g = geometry(cx, g.cell, g.factor);

  Scene s;
  s.width = g.width;
  s.height = g.height;
  s.font = o.font;
  const int y = add_titles(s, g);

  const int gap = g.cell >= 12 ? 1 : 0;
  const Annotation ann = choose_annotation(p, o, g.cell - gap);
  const Rgb* lut = colormap_lut(p.colormap);
  const bool thin_rows = g.row_step > 1 || g.factor > 1;
  const bool thin_cols = g.col_step > 1 || g.factor > 1;
  int first_mat_y = 0, last_mat_bottom = 0;
  for (size_t k = 0; k < p.panels.size(); ++k) {
    const Panel& panel = p.panels[k];
    const int gi = static_cast<int>(k) / plan.grid_cols, gj = static_cast<int>(k) % plan.grid_cols;
    const bool col_labels = !g.shared_labels || gi == 0;
    const int top = y + gi * (g.row_h + g.panel_gap) + (g.shared_labels && gi > 0 ? g.col_band : 0);
    const int mat_x = kMargin + g.left_w + gj * (g.slot_w + g.panel_gap);
    const int mat_y = top + g.caption_h + (col_labels ? g.col_band : 0);
    if (k == 0) first_mat_y = mat_y;
    last_mat_bottom = std::max(last_mat_bottom, mat_y + g.mat_h);
    add_panel_labels(s, d, g, cx, panel, PanelSpot{gi, gj, top, mat_x, mat_y, y}, plan.grid_rows,
                     thin_rows, thin_cols);
    CellGrid grid = panel_grid(d, p, panel, lut, mat_x, mat_y, g.cell, gap, tooltips);
    add_key_separator(s, d, grid, p.factor);
    if (ann.scale) add_values(s, panel, grid, ann, g.cell - gap);
    s.grids.push_back(std::move(grid));
  }

  const int bar_x = kMargin + g.left_w + g.grid_w + kBarGap;
  const int bar_h = std::max(last_mat_bottom - first_mat_y, 160);
  const int tick_x = bar_x + kBarWidth + kTickLen + 4;
  add_colorbar(s, p, d, bar_x, first_mat_y, bar_h, tick_x);
  // The colorbar's title (a --key name may be long) is centred on the bar,
  // wrapped to its height (geometry made room for the lines).
  add_bar_title(s, g.bar_title, tick_x + cx.tick_w + 10, first_mat_y + bar_h / 2);

  add_notes(s, p, g,
            std::max(last_mat_bottom + g.axis_h, first_mat_y + bar_h) + 8 + (kPitch - kTextH) / 2);
  return s;
}

}  // namespace

Scene layout_figure(const HeatmapData& given, const HeatmapOptions& o, bool tooltips) {
  Scene s = layout_figure_in(given, o, tooltips);
  if (o.fit && o.fit->exact_width) widen_to(s, o.fit->width);
  return s;
}

}  // namespace attn::heatmap
