// The figure's text: a TrueType/OpenType font, measured and drawn
// antialiased. The default is DejaVu Sans (regular and bold), embedded in
// the binary at build time and drawn with stb_truetype, so no font file is
// read at run time; --font FILE gives another (one face, drawn bold by
// double striking), read with FreeType, which unlike stb_truetype is made
// to withstand hostile files. The SVG writer names the same family with
// the same sizes, so both files lay out alike.
//
// Text sizes are given as a scale: capitals are kCapHeight × scale pixels
// tall whatever the font, so layout can reason in whole pixels.
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attn/heatmap.h"

namespace attn {

// load_font() of bytes already read; name stands for the file in messages.
// The fuzzer and the tests give fonts this way.
std::shared_ptr<const Font> load_font_bytes(std::string bytes, const std::string& name);

}  // namespace attn

namespace attn::heatmap {

// Height of capitals and of a line (with descenders), per unit of scale.
constexpr int kCapHeight = 7;
constexpr int kLineHeight = 10;

// The typeface text is measured with while it is alive on this thread (the
// layout of one figure with --font); the built-in one otherwise.
class FontScope {
 public:
  explicit FontScope(const Font* font);
  ~FontScope();
  FontScope(const FontScope&) = delete;
  FontScope& operator=(const FontScope&) = delete;

 private:
  const Font* saved_;
};
const Font& current_font();

// The font-size (the em in pixels) of text at a scale, and the family name
// the SVG asks for, of the current font.
double em_pixels(int scale);
std::string svg_font_family();

// Width in pixels of the drawn text at a scale: the room it needs.
int text_extent(std::string_view utf8, int scale, bool bold = false);

// text_extent(), or limit + 1 when it is wider than limit: reads only as far
// as the limit reaches (a megabyte of title is measured by its start).
int text_extent_upto(std::string_view utf8, int scale, int limit, bool bold = false);

// The text cut to an extent of at most max_width pixels, ending in "…" when
// cut, or "" when not even that fits.
std::string fit_text(std::string_view utf8, int max_width, int scale, bool bold = false);

// The text with its middle replaced by "…" so that it fits max_width
// ("internat…alization"): labels keep both ends, where tokens differ.
std::string elide_middle(std::string_view utf8, int max_width, int scale);

// The code points of the text the current font has no glyph for (drawn as
// boxes), in order of first appearance; control characters are not counted.
std::vector<uint32_t> missing_glyphs(std::string_view utf8);

// An 8-bit coverage image of one glyph placed on the text's pixel grid.
struct GlyphImage {
  int x0 = 0, y0 = 0;  // offset from (pen's whole pixel, baseline)
  int w = 0, h = 0;
  std::vector<uint8_t> alpha;  // w * h
};

// Renders glyphs once per (face, glyph, scale, quarter-pixel offset) for the
// text of one figure.
class GlyphCache {
 public:
  GlyphCache();
  ~GlyphCache();
  GlyphCache(const GlyphCache&) = delete;
  GlyphCache& operator=(const GlyphCache&) = delete;

  // The glyphs of the text laid out from its left end (x in pixels from
  // that end; the baseline is kCapHeight * scale below the capitals' top),
  // and the text's width, text_extent()'s. Missing glyphs come as outlined
  // boxes.
  struct Placed {
    int x;
    const GlyphImage* image;
  };
  struct Line {
    std::vector<Placed> glyphs;
    int width = 0;
  };
  Line place(std::string_view utf8, int scale, bool bold);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether the font draws bold by striking twice (a --font face).
bool synthetic_bold();

}  // namespace attn::heatmap
