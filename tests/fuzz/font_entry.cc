#include "font_entry.h"

#include <memory>
#include <stdexcept>
#include <string>

#include "attn/error.h"
#include "attn/heatmap.h"
#include "heatmap/font.h"

namespace attn::fuzz {

void font_file(std::string_view data) {
  std::shared_ptr<const Font> font;
  try {
    font = load_font_bytes(std::string(data), "fuzz.ttf");
  } catch (const Error&) {
    return;
  }
  const heatmap::FontScope scope(font.get());
  // Letters with kerning pairs, a fallback to DejaVu (Ġ, ▁), Chinese no
  // font here has, a control character and a broken UTF-8 byte.
  const std::string texts[] = {"AVAWAT Ta To Yo fi ffl", "Ġthe ▁cat 它 x\x01y", "0.25 \xff"};
  (void)heatmap::svg_font_family();
  (void)heatmap::em_pixels(3);
  heatmap::GlyphCache cache;
  for (const std::string& t : texts) {
    (void)heatmap::missing_glyphs(t);
    for (int scale : {1, 3}) {
      for (bool bold : {false, true}) {
        const int width = heatmap::text_extent(t, scale, bold);
        (void)heatmap::text_extent_upto(t, scale, 40, bold);
        (void)heatmap::fit_text(t, 40, scale, bold);
        const heatmap::GlyphCache::Line line = cache.place(t, scale, bold);
        if (line.width != width) throw std::logic_error("place() and text_extent() disagree");
        for (const heatmap::GlyphCache::Placed& p : line.glyphs) {
          const heatmap::GlyphImage& g = *p.image;
          if (g.w < 0 || g.h < 0 ||
              g.alpha.size() != static_cast<size_t>(g.w) * static_cast<size_t>(g.h)) {
            throw std::logic_error("a glyph image is not w * h bytes");
          }
        }
      }
    }
    (void)heatmap::elide_middle(t, 30, 2);
  }
}

}  // namespace attn::fuzz
