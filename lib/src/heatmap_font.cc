#include "heatmap_font.h"

#include <algorithm>
#include <cmath>
#include <cstring>

// stb_easy_font defines static functions; not all of them are used here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_easy_font.h>
#pragma GCC diagnostic pop

namespace attn::heatmap {

std::string ascii_text(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(utf8[i]);
    if (c >= 0x80) {
      // One '?' per code point: skip the continuation bytes.
      while (i + 1 < utf8.size() && (static_cast<unsigned char>(utf8[i + 1]) & 0xC0) == 0x80) ++i;
      out += '?';
    } else if (c < 0x20 || c == 0x7F) {
      out += ' ';
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

int text_width(std::string_view utf8, int scale) {
  const std::string s = ascii_text(utf8);
  if (s.empty()) return 0;
  int w = 0;
  for (char c : s) w += stb_easy_font_charinfo[c - 32].advance & 15;
  return (w - 1) * scale;
}

int text_extent(std::string_view utf8, int scale) {
  const std::string s = ascii_text(utf8);
  if (s.empty()) return 0;
  const int mono = (static_cast<int>(s.size()) * 6 - 1) * scale;
  return std::max(text_width(s, scale), mono);
}

std::string fit_text(std::string_view utf8, int max_width, int scale) {
  if (text_extent(utf8, scale) <= max_width) return std::string(utf8);
  // Cut whole code points until the text and ".." fit.
  std::string s(utf8);
  while (!s.empty()) {
    size_t cut = s.size() - 1;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s.resize(cut);
    if (text_extent(s + "..", scale) <= max_width) return s + "..";
  }
  return "";
}

std::vector<GlyphQuad> text_quads(std::string_view utf8) {
  std::string s = ascii_text(utf8);
  // A quad takes 64 bytes and a glyph has at most a dozen quads; a short
  // buffer silently drops the last strokes.
  std::vector<char> buf(s.size() * 16 * 64 + 64);
  const int n =
      stb_easy_font_print(0, 0, s.data(), nullptr, buf.data(), static_cast<int>(buf.size()));
  std::vector<GlyphQuad> quads;
  quads.reserve(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q) {
    // Each quad is 4 vertices of 16 bytes (x, y, z floats, 4 colour bytes);
    // vertex 0 is the top-left corner, vertex 2 the bottom-right.
    float v0[2], v2[2];
    std::memcpy(v0, buf.data() + q * 64, sizeof v0);
    std::memcpy(v2, buf.data() + q * 64 + 32, sizeof v2);
    quads.push_back({static_cast<int>(std::lround(v0[0])), static_cast<int>(std::lround(v0[1])),
                     static_cast<int>(std::lround(v2[0])), static_cast<int>(std::lround(v2[1]))});
  }
  return quads;
}

}  // namespace attn::heatmap
