// Drawing a scene into RGB pixels: cells (masked ones hatched), colorbars
// and antialiased text, in integer arithmetic over the glyphs' coverage,
// so every pixel is determined by the scene alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heatmap/font.h"
#include "heatmap/scene.h"

namespace attn::heatmap {

struct Canvas {
  int width = 0, height = 0;
  int origin_x = 0, origin_y = 0;  // scene coordinates of pixel (0, 0)
  std::vector<uint8_t> rgb;        // width * height * 3

  Canvas(int w, int h, Rgb fill, int ox = 0, int oy = 0);
  void fill_rect(int x, int y, int w, int h, Rgb c);  // scene coordinates, clipped
  void blend(int x, int y, Rgb c, int alpha);         // alpha 0-255 over the pixel
};

// Masked cells: the fill with diagonal hatching, placed by scene position
// so neighbouring masked cells join into one hatched region.
inline bool hatched(int x, int y) { return ((x + y) & 7) < 2; }

void draw_grid(Canvas& c, const CellGrid& g);
void draw_bar(Canvas& c, const ColorbarItem& b);
void draw_text(Canvas& c, const TextItem& t, GlyphCache& glyphs);

// The whole scene.
Canvas rasterize(const Scene& s);

// A canvas as PNG file bytes (stb_image_write).
std::string encode_png(const Canvas& c);

}  // namespace attn::heatmap
