#include "heatmap/geometry.h"

#include <algorithm>
#include <cmath>

#include "heatmap/axes.h"

namespace attn::heatmap {

namespace {

// Greedy word wrap to `width` pixels in at most max_lines lines. Reads the
// text only as far as it can be shown: it stops once a line past max_lines
// has begun, and keeps of a word only the code points that can fit in a
// line (a longer word is cut by fit_text all the same), so a title of a
// megabyte costs what its first lines do.
}  // namespace

std::vector<std::string> wrap(const std::string& text, int width, int max_lines, bool bold) {
  std::vector<std::string> lines;
  if (text.empty()) return lines;
  // Every character is more than 1.5 units wide (an 'i' at 9 px is 2.7 px).
  const size_t word_cap = static_cast<size_t>(std::max(width, 0) * 2 / (3 * kScale) + 2);
  std::string line, word;
  size_t word_chars = 0;
  auto flush_word = [&]() {
    if (word.empty()) return;
    std::string candidate = line.empty() ? word : line + " " + word;
    if (line.empty() || text_extent(candidate, kScale, bold) <= width) {
      line = candidate;
    } else {
      lines.push_back(line);
      line = word;
    }
    word.clear();
    word_chars = 0;
  };
  bool cut_short = false;
  for (char c : text) {
    if (c == ' ' || c == '\n') {
      flush_word();
      if (static_cast<int>(lines.size()) > max_lines) {
        cut_short = true;  // the rest cannot be shown
        break;
      }
    } else {
      const bool continuation = (static_cast<unsigned char>(c) & 0xC0) == 0x80;
      if (!continuation) ++word_chars;
      // Whole code points only: the continuation bytes of a kept one stay.
      if (word_chars <= word_cap) word += c;
    }
  }
  if (!cut_short) {
    flush_word();
    if (!line.empty()) lines.push_back(line);
  }
  if (static_cast<int>(lines.size()) > max_lines) {
    lines.resize(static_cast<size_t>(max_lines));
    lines.back() = fit_text(lines.back() + " …", width, kScale, bold);
  }
  for (std::string& l : lines) l = fit_text(l, width, kScale, bold);
  return lines;
}

bool fits(const Geometry& g, const GeometryInput& in) {
  return g.width <= in.max_size && g.height <= in.max_h;
}

Labels make_labels(const std::vector<std::string>& names, int64_t n) {
  Labels l;
  l.named = static_cast<int64_t>(names.size()) == n;
  l.text.reserve(static_cast<size_t>(n));
  l.full.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    std::string s = l.named ? elide_middle(names[k], kMaxLabelWidth, kScale) : std::to_string(i);
    if (l.named && s != names[k]) l.full[k] = names[k];
    l.max_width = std::max(l.max_width, text_extent(s, kScale));
    l.text.push_back(std::move(s));
  }
  return l;
}

Geometry geometry(const GeometryInput& cx, int cell, int64_t factor) {
  const HeatmapData& d = cx.d;
  Geometry g;
  g.cell = cell;
  g.factor = factor;
  g.shown_rows = (d.rows + factor - 1) / factor;
  g.shown_cols = (d.cols + factor - 1) / factor;
  g.mat_w = static_cast<int>(g.shown_cols) * cell;
  g.mat_h = static_cast<int>(g.shown_rows) * cell;
  g.ppi = static_cast<double>(cell) / static_cast<double>(factor);
  // Every label when they fit; thinned ones get more air, so the eye reads
  // them as an axis rather than a wall of numbers.
  auto step = [&](double need) {
    const int64_t every = nice_step(need / g.ppi);
    return every == 1 ? every : nice_step(std::max(need, 2.0 * kTextH) / g.ppi);
  };
  g.row_step = step(kTextH + 4);
  const int64_t across = step(cx.cols.max_width + 10);
  const int64_t upright = step(kTextH + 4);
  g.col_vertical = cx.cols.named && across > 1 && across > upright;
  g.col_step = g.col_vertical ? upright : across;
  if (cx.labels_every && cx.fill) {  // the least multiple of N at which labels do not touch
    const int64_t n = *cx.labels_every;
    auto multiple = [&](double need) {
      const int64_t k = static_cast<int64_t>(std::ceil(need / (g.ppi * static_cast<double>(n))));
      return n * std::max<int64_t>(k, 1);
    };
    g.row_step = multiple(kTextH + 4);
    const int64_t across_n = multiple(cx.cols.max_width + 10), upright_n = multiple(kTextH + 4);
    g.col_vertical = cx.cols.named && across_n > upright_n;
    g.col_step = g.col_vertical ? upright_n : across_n;
  } else if (cx.labels_every) {  // as asked, even where labels then touch
    g.row_step = *cx.labels_every;
    g.col_vertical = cx.cols.named && static_cast<double>(cx.cols.max_width + 10) >
                                          g.ppi * static_cast<double>(*cx.labels_every);
    g.col_step = *cx.labels_every;
  }
  g.col_band = (g.col_vertical ? cx.cols.max_width : kTextH) + kLabelGap;
  g.slot_w = std::max(g.mat_w, cx.caption_w);
  g.left_w = kTextH + 10 + cx.rows.max_width + kLabelGap;
  g.panel_gap = cx.panel_gap;
  g.grid_w = cx.plan.grid_cols * g.slot_w + (cx.plan.grid_cols - 1) * g.panel_gap;
  g.caption_scale = cx.caption_scale;
  g.caption_h = cx.caption_w == 0            ? 0
                : cx.caption_scale == kScale ? kPitch
                                             : kLineHeight * cx.caption_scale + 4;
  // Shared column labels: only the first row of panels has them.
  g.shared_labels = cx.shared_labels;
  g.row_h = g.caption_h + (g.shared_labels ? 0 : g.col_band) + g.mat_h;
  const int grid_h = cx.plan.grid_rows * g.row_h + (cx.plan.grid_rows - 1) * g.panel_gap +
                     (g.shared_labels ? g.col_band : 0);
  // The colorbar is at least 160 px tall, even beside a small matrix; its
  // title is wrapped beside it, in up to three upright lines.
  g.bar_h = std::max(grid_h - g.caption_h - g.col_band, 160);
  g.bar_title = wrap(cx.bar_title, g.bar_h, 3, false);
  const int bar_lines = std::max<int>(1, static_cast<int>(g.bar_title.size()));
  g.right_w =
      kBarGap + kBarWidth + kTickLen + 4 + cx.tick_w + 10 + kTextH + (bar_lines - 1) * kPitch;
  const int content = g.left_w + g.grid_w + g.right_w;
  // Only widths up to max_size matter below.
  const int title_w = std::max(text_extent_upto(d.title, kScale, cx.max_size, true),
                               text_extent_upto(d.subtitle, kScale, cx.max_size));
  // A long title widens a narrow figure (up to 720 px) before it wraps.
  g.width = 2 * kMargin + std::max(content, std::min({title_w, 720, cx.max_size - 2 * kMargin}));
  const int text_w = g.width - 2 * kMargin;
  g.title = wrap(d.title, text_w, 4, true);
  g.subtitle = wrap(d.subtitle, text_w, 3, false);
  const size_t title_lines = g.title.size() + g.subtitle.size();
  g.title_h = title_lines ? static_cast<int>(title_lines) * kPitch + 8 : 0;
  g.axis_h = d.col_title.empty() ? 0 : kPitch;
  g.notes_h = cx.notes * kPitch + (cx.notes ? 8 : 0);
  g.height = 2 * kMargin + g.title_h +
             std::max(grid_h + g.axis_h, g.caption_h + g.col_band + g.bar_h) + g.notes_h;
  return g;
}

// A matrix keeps at least kMinSide pixels (or cells) on its longest side
// (a panel of a grid kMinGridSide) even
// if labels and colour bar then push the figure past max_size: shrinking
// a 4x4 matrix to 4 pixels would fit the limit and show nothing.
Geometry choose_geometry(const GeometryInput& cx) {
  const int kMinSide = cx.plan.refs.size() > 1 ? kMinGridSide : 96;
  const HeatmapData& d = cx.d;
  const int gc = cx.plan.grid_cols, gr = cx.plan.grid_rows;
  const int64_t longest = std::max(d.rows, d.cols);
  if (cx.cell_size) return geometry(cx, *cx.cell_size, 1);
  const double target = std::clamp(std::min(1500.0 / gc, 1000.0 / gr), 160.0, 480.0);
  // Up to 64 rows and columns, cells as tall as a label, so every label shows.
  const double wanted = std::max(std::floor(target / static_cast<double>(longest)),
                                 longest <= 64 ? kTextH + 4.0 : 1.0);
  // --fit: as large as the target allows; the loop below shrinks them.
  int cell = cx.fill ? static_cast<int>(std::clamp<int64_t>(
                           std::min(cx.max_size / gc, cx.max_h / gr) / longest, 1, kMaxFillCell))
                     : static_cast<int>(std::clamp<double>(wanted, 1, kMaxCell));
  const int min_cell = static_cast<int>(
      std::clamp<double>(std::ceil(static_cast<double>(kMinSide) / longest), 1, cell));
  for (; cell > min_cell; --cell) {
    Geometry g = geometry(cx, cell, 1);
    if (fits(g, cx)) return g;
  }
  Geometry g = geometry(cx, cell, 1);
  if (fits(g, cx) || cell > 1) return g;
  // Room left for the matrices once labels, colorbar and titles are placed.
  const int fixed_w = g.width - gc * g.mat_w;
  const int fixed_h = g.height - gr * g.mat_h;
  int64_t f = block_factor(d.rows, d.cols, std::max(kMinSide, (cx.max_h - fixed_h) / gr),
                           std::max(kMinSide, (cx.max_size - fixed_w) / gc));
  for (;; ++f) {
    g = geometry(cx, 1, f);
    if (fits(g, cx) || std::max(g.shown_rows, g.shown_cols) <= kMinSide) return g;
  }
}

}  // namespace attn::heatmap
