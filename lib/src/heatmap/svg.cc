// SVG files: the same scene as the PNG, with cells as rectangles (or, for
// very many cells, the cell block embedded as a pixel-exact PNG), masked
// cells filled with a hatch pattern, and real text in the PNG's font family
// at the PNG's sizes, so labels stay crisp at any zoom. Elided labels and
// cells carry <title> tooltips with the whole text and the value.
#include <algorithm>
#include <string>

#include "attn/escape.h"
#include "attn/heatmap.h"
#include "base/number_text.h"
#include "heatmap/color.h"
#include "heatmap/font.h"
#include "heatmap/panels.h"
#include "heatmap/raster.h"
#include "heatmap/scene.h"

namespace attn {

namespace heatmap {

namespace {

// Beyond this many cells a grid is embedded as an image, and so is every
// grid of a figure with more than kMaxFigureRectCells cells in all (a model
// view of 32 x 32 heads): rectangles would make a file of tens or hundreds
// of megabytes that viewers open slowly or not at all.
constexpr int64_t kMaxRectCells = kMaxTipCells;
constexpr int64_t kMaxFigureRectCells = 4 * kMaxTipCells;

std::string num(int v) { return std::to_string(v); }

void write_grid(std::string& out, const CellGrid& g, bool as_image) {
  const int w = g.cell_w - g.gap, h = g.cell_h - g.gap;
  if (!g.legend && (as_image || g.rows * g.cols > kMaxRectCells)) {
    Canvas c(static_cast<int>(g.cols) * g.cell_w, static_cast<int>(g.rows) * g.cell_h,
             Rgb{255, 255, 255}, g.x, g.y);
    draw_grid(c, g);
    out += "<image class=\"cells\" x=\"" + num(g.x) + "\" y=\"" + num(g.y) + "\" width=\"" +
           num(c.width) + "\" height=\"" + num(c.height) +
           "\" style=\"image-rendering:pixelated\" xlink:href=\"data:image/png;base64," +
           base64(encode_png(c)) + "\"/>\n";
    return;
  }
  out += "<g class=\"cells\">\n";
  for (int64_t r = 0; r < g.rows; ++r) {
    for (int64_t k = 0; k < g.cols; ++k) {
      const size_t i = static_cast<size_t>(r * g.cols + k);
      const bool masked = g.state[i] == kMasked;
      out += "<rect class=\"";
      out += g.legend ? "legend " : "";
      out += masked ? "cell masked" : g.state[i] == kMissing ? "cell missing" : "cell";
      out += "\" x=\"" + num(g.x + static_cast<int>(k) * g.cell_w) + "\" y=\"" +
             num(g.y + static_cast<int>(r) * g.cell_h) + "\" width=\"" + num(w) + "\" height=\"" +
             num(h) + "\" fill=\"" + (masked ? std::string("url(#hatch)") : hex(g.colors[i])) +
             "\"";
      if (i < g.tips.size()) {
        out += "><title>" + xml_text(g.tips[i]) + "</title></rect>\n";
      } else {
        out += "/>\n";
      }
    }
  }
  out += "</g>\n";
}

void write_text(std::string& out, const TextItem& t) {
  const char* anchor = t.anchor == Anchor::kMiddle ? "middle"
                       : t.anchor == Anchor::kEnd  ? "end"
                                                   : "start";
  out += "<text class=\"" + xml_attribute(t.role) + "\"";
  if (t.vertical) {
    out += " transform=\"translate(" + num(t.x + kCapHeight * t.scale) + " " + num(t.y) +
           ") rotate(-90)\"";
  } else {
    out += " x=\"" + num(t.x) + "\" y=\"" + num(t.y + kCapHeight * t.scale) + "\"";
  }
  out += " font-size=\"" + format_fixed(em_pixels(t.scale), 2) + "\"";
  if (t.anchor != Anchor::kStart) out += std::string(" text-anchor=\"") + anchor + "\"";
  if (t.bold) out += " font-weight=\"bold\"";
  // Titles and labels come from the input: xml_text keeps them character data.
  out += " fill=\"" + hex(t.color) + "\">";
  if (!t.tooltip.empty()) out += "<title>" + xml_text(t.tooltip) + "</title>";
  out += xml_text(t.text) + "</text>\n";
}

std::string write_svg(const Scene& s) {
  const FontScope font(s.font.get());
  std::string out;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out +=
      "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
      "width=\"" +
      num(s.width) + "\" height=\"" + num(s.height) + "\" viewBox=\"0 0 " + num(s.width) + " " +
      num(s.height) + "\" font-family=\"" + xml_attribute(svg_font_family()) + "\">\n";
  out += "<defs>\n";
  // The PNG's hatching: pixels with (x + y) mod 8 < 2, in scene coordinates.
  out +=
      "<pattern id=\"hatch\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\">"
      "<rect width=\"8\" height=\"8\" fill=\"" +
      hex(masked_fill_color()) + "\"/><path d=\"M0 0H2L0 2Z M8 0V2L2 8H0Z\" fill=\"" +
      hex(masked_hatch_color()) + "\"/></pattern>\n";
  for (size_t b = 0; b < s.bars.size(); ++b) {
    const Rgb* lut = colormap_lut(s.bars[b].colormap);
    out +=
        "<linearGradient id=\"bar" + std::to_string(b) + "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
    for (int k = 0; k <= 32; ++k) {
      const int i = std::min(k * 8, kLutSize - 1);
      out += "<stop offset=\"" + format_fixed(i / 255.0, 4) + "\" stop-color=\"" + hex(lut[i]) +
             "\"/>";
    }
    out += "</linearGradient>\n";
  }
  out += "</defs>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"" + hex(s.background) + "\"/>\n";
  auto rect = [&](const RectItem& r) {
    out += "<rect x=\"" + num(r.x) + "\" y=\"" + num(r.y) + "\" width=\"" + num(r.w) +
           "\" height=\"" + num(r.h) + "\" fill=\"" + hex(r.color) + "\"/>\n";
  };
  for (const RectItem& r : s.rects) rect(r);
  int64_t cells = 0;
  for (const CellGrid& g : s.grids) cells += g.legend ? 0 : g.rows * g.cols;
  for (const CellGrid& g : s.grids) write_grid(out, g, cells > kMaxFigureRectCells);
  for (const RectItem& r : s.overlays) rect(r);
  for (size_t b = 0; b < s.bars.size(); ++b) {
    const ColorbarItem& bar = s.bars[b];
    out += "<rect class=\"colorbar\" x=\"" + num(bar.x) + "\" y=\"" + num(bar.y) + "\" width=\"" +
           num(bar.w) + "\" height=\"" + num(bar.h) + "\" fill=\"url(#bar" + std::to_string(b) +
           ")\"/>\n";
  }
  for (const TextItem& t : s.texts) write_text(out, t);
  out += "</svg>\n";
  return out;
}

}  // namespace
}  // namespace heatmap

std::string render_svg(const HeatmapData& d, const HeatmapOptions& o) {
  return heatmap::write_svg(heatmap::layout_figure(d, o, true));
}

}  // namespace attn
