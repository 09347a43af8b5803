#include "heatmap/font.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

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

namespace {

// The pixel font's advance of the character ascii_text() draws for a byte
// (a code point's first byte: '?' for non-ASCII, ' ' for control codes).
int advance(unsigned char c) {
  const char drawn = c >= 0x80 ? '?' : c < 0x20 || c == 0x7F ? ' ' : static_cast<char>(c);
  return stb_easy_font_charinfo[drawn - 32].advance & 15;
}

// text_extent() of a text of `chars` characters whose advances sum to `adv`:
// both widths add up character by character, so a prefix is measured by
// extending the previous one.
int extent_of(int64_t adv, int64_t chars, int scale) {
  if (chars == 0) return 0;
  const int64_t w = std::max(adv - 1, chars * 6 - 1) * scale;
  return static_cast<int>(std::min<int64_t>(w, std::numeric_limits<int>::max()));
}

}  // namespace

int text_extent_upto(std::string_view utf8, int scale, int limit) {
  int64_t adv = 0, chars = 0;
  bool in_code_point = false;  // after a non-ASCII byte: continuation bytes belong to it
  for (size_t i = 0; i < utf8.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(utf8[i]);
    if (in_code_point && (c & 0xC0) == 0x80) continue;
    in_code_point = c >= 0x80;
    adv += advance(c);
    ++chars;
    if (extent_of(adv, chars, scale) > limit) return limit + 1;
  }
  const int e = extent_of(adv, chars, scale);
  return e > limit ? limit + 1 : e;
}

std::string fit_text(std::string_view utf8, int max_width, int scale) {
  // One pass over whole code points (a first byte and its continuation
  // bytes, as ascii_text() groups them), measuring each prefix from the
  // last: `cut` is the longest prefix that fits with "..". Once a prefix is
  // too wide on its own, nothing longer fits, so a label of a megabyte is
  // read only as far as max_width reaches.
  const int64_t dots_adv = 2 * advance('.');
  int64_t adv = 0, chars = 0;
  size_t cut = 0;
  bool cut_fits = false;
  size_t i = 0;
  while (i < utf8.size()) {
    if (extent_of(adv + dots_adv, chars + 2, scale) <= max_width) {
      cut = i;
      cut_fits = true;
    }
    const unsigned char c = static_cast<unsigned char>(utf8[i]);
    size_t next = i + 1;
    if (c >= 0x80) {
      while (next < utf8.size() && (static_cast<unsigned char>(utf8[next]) & 0xC0) == 0x80) ++next;
    }
    adv += advance(c);
    ++chars;
    i = next;
    if (extent_of(adv, chars, scale) > max_width) {
      return cut_fits ? std::string(utf8.substr(0, cut)) + ".." : std::string();
    }
  }
  return std::string(utf8);  // the whole text fits
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
