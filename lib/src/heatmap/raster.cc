#include "heatmap/raster.h"

#include <algorithm>

#include "heatmap/color.h"
#include "heatmap/font.h"
#include "heatmap/panels.h"

namespace attn::heatmap {

Canvas::Canvas(int w, int h, Rgb fill, int ox, int oy)
    : width(w), height(h), origin_x(ox), origin_y(oy) {
  rgb.resize(static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
  for (size_t i = 0; i < rgb.size(); i += 3) {
    rgb[i] = fill.r;
    rgb[i + 1] = fill.g;
    rgb[i + 2] = fill.b;
  }
}

void Canvas::fill_rect(int x, int y, int w, int h, Rgb c) {
  const int x0 = std::max(x - origin_x, 0), x1 = std::min(x + w - origin_x, width);
  const int y0 = std::max(y - origin_y, 0), y1 = std::min(y + h - origin_y, height);
  for (int py = y0; py < y1; ++py) {
    uint8_t* p =
        rgb.data() +
        (static_cast<size_t>(py) * static_cast<size_t>(width) + static_cast<size_t>(x0)) * 3;
    for (int px = x0; px < x1; ++px, p += 3) {
      p[0] = c.r;
      p[1] = c.g;
      p[2] = c.b;
    }
  }
}

void draw_grid(Canvas& c, const CellGrid& g) {
  const int w = g.cell_w - g.gap, h = g.cell_h - g.gap;
  const Rgb hatch = masked_hatch_color();
  for (int64_t r = 0; r < g.rows; ++r) {
    for (int64_t k = 0; k < g.cols; ++k) {
      const size_t i = static_cast<size_t>(r * g.cols + k);
      const int x = g.x + static_cast<int>(k) * g.cell_w, y = g.y + static_cast<int>(r) * g.cell_h;
      c.fill_rect(x, y, w, h, g.colors[i]);
      if (g.state[i] != kMasked) continue;
      for (int py = y; py < y + h; ++py) {
        for (int px = x; px < x + w; ++px) {
          if (hatched(px, py)) c.fill_rect(px, py, 1, 1, hatch);
        }
      }
    }
  }
}

void draw_bar(Canvas& c, const ColorbarItem& b) {
  const Rgb* lut = colormap_lut(b.colormap);
  for (int k = 0; k < b.h; ++k) {
    const double t = b.h > 1 ? 1.0 - static_cast<double>(k) / (b.h - 1) : 1.0;
    c.fill_rect(b.x, b.y + k, b.w, 1, lut[lut_index(t, 0, 1)]);
  }
}

void Canvas::blend(int x, int y, Rgb c, int alpha) {
  x -= origin_x;
  y -= origin_y;
  if (x < 0 || y < 0 || x >= width || y >= height || alpha <= 0) return;
  uint8_t* p = rgb.data() +
               (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 3;
  const int a = std::min(alpha, 255);
  p[0] = static_cast<uint8_t>((c.r * a + p[0] * (255 - a) + 127) / 255);
  p[1] = static_cast<uint8_t>((c.g * a + p[1] * (255 - a) + 127) / 255);
  p[2] = static_cast<uint8_t>((c.b * a + p[2] * (255 - a) + 127) / 255);
}

void draw_text(Canvas& c, const TextItem& t, GlyphCache& glyphs) {
  const GlyphCache::Line line = glyphs.place(t.text, t.scale, t.bold);
  const int shift = t.anchor == Anchor::kMiddle ? line.width / 2
                    : t.anchor == Anchor::kEnd  ? line.width
                                                : 0;
  const int baseline = kCapHeight * t.scale;
  // A face without a bold variant is made bold by striking twice, a pixel apart.
  const int passes = t.bold && synthetic_bold() ? 2 : 1;
  for (const GlyphCache::Placed& p : line.glyphs) {
    const GlyphImage& g = *p.image;
    for (int pass = 0; pass < passes; ++pass) {
      for (int yy = 0; yy < g.h; ++yy) {
        for (int xx = 0; xx < g.w; ++xx) {
          const int a = g.alpha[static_cast<size_t>(yy * g.w + xx)];
          if (!a) continue;
          // (hx, hy): from the text's left end and its capitals' top.
          const int hx = p.x + g.x0 + xx + pass - shift, hy = baseline + g.y0 + yy;
          if (!t.vertical) {
            c.blend(t.x + hx, t.y + hy, t.color, a);
          } else {  // reading upwards: along the text is -y, the glyph's down is +x
            c.blend(t.x + hy, t.y - hx, t.color, a);
          }
        }
      }
    }
  }
}

Canvas rasterize(const Scene& s) {
  const FontScope font(s.font.get());
  GlyphCache glyphs;
  Canvas c(s.width, s.height, s.background);
  for (const RectItem& r : s.rects) c.fill_rect(r.x, r.y, r.w, r.h, r.color);
  for (const CellGrid& g : s.grids) draw_grid(c, g);
  for (const RectItem& r : s.overlays) c.fill_rect(r.x, r.y, r.w, r.h, r.color);
  for (const ColorbarItem& b : s.bars) draw_bar(c, b);
  for (const TextItem& t : s.texts) draw_text(c, t, glyphs);
  return c;
}

}  // namespace attn::heatmap
