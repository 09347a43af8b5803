// Colormaps as 256-entry lookup tables, the colours of masked and missing
// cells, and the choice of black or white text on a coloured background.
#pragma once

#include "attn/heatmap.h"

namespace attn::heatmap {

constexpr int kLutSize = 256;

// The 256 colours of a colormap, from bottom (index 0) to top (255).
const Rgb* colormap_lut(Colormap c);

// Index into the table for a fraction of the range, 0 to 1 (clipped).
inline int lut_index_of(double t) {
  if (!(t > 0)) return 0;  // also catches NaN, which callers draw separately
  if (t >= 1) return kLutSize - 1;
  return static_cast<int>(t * (kLutSize - 1) + 0.5);
}
inline int lut_index(const ColorNorm& n, double v) { return lut_index_of(n.fraction(v)); }

// Index into the table for a value, given the colour range [lo, hi]; values
// outside the range take the end colours.
// Where v lies in [lo, hi], 0 to 1, computed on halves: v - lo and hi - lo
// overflow for ranges such as ±1.7e308, their halves never do.
inline double range_fraction(double v, double lo, double hi) {
  return (v / 2 - lo / 2) / (hi / 2 - lo / 2);
}

inline int lut_index(double v, double lo, double hi) {
  return lut_index_of(range_fraction(v, lo, hi));
}

// A NaN cell: a neutral gray, unhatched, unlike a masked cell.
Rgb missing_color();

// Black or white, whichever contrasts more with the background (WCAG).
Rgb text_color_on(Rgb background);

// "#rrggbb".
std::string hex(Rgb c);

}  // namespace attn::heatmap
