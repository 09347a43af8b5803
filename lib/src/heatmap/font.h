// The figure's text in pixels: stb_easy_font's ASCII glyphs (built from
// axis-aligned quads, so integer scales stay crisp), measured and turned
// into rectangles. No font file is read at run time; the SVG writer uses
// real text whose metrics match (a monospace font at 10 px per scale unit).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attn::heatmap {

// Height of capitals and of a line (with descenders), per unit of scale.
constexpr int kCapHeight = 7;
constexpr int kLineHeight = 10;

// The text with every non-ASCII character (a UTF-8 sequence) replaced by '?'
// and control characters by spaces: what the pixel font can draw.
std::string ascii_text(std::string_view utf8);

// Width in pixels of the drawn text at a scale (without trailing spacing).
int text_width(std::string_view utf8, int scale);

// The room the text needs in either file: the pixel font's width or a
// monospace font's (6 units a character, as the SVG's text at 10 px per
// unit of scale), whichever is wider. Layout measures with this.
int text_extent(std::string_view utf8, int scale);

// text_extent(), or limit + 1 when it is wider than limit: reads only as far
// as the limit reaches (a megabyte of title is measured by its start).
int text_extent_upto(std::string_view utf8, int scale, int limit);

// The text cut to an extent of at most max_width pixels, ending in ".."
// when cut.
std::string fit_text(std::string_view utf8, int max_width, int scale);

// A filled rectangle of a glyph, in font units from the text's top-left
// corner (x right, y down; capitals span y 0..7).
struct GlyphQuad {
  int x0, y0, x1, y1;
};
std::vector<GlyphQuad> text_quads(std::string_view utf8);

}  // namespace attn::heatmap
