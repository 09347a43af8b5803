// Fuzz entry point for --font files (font_entry.cc), called by fuzz_font
// and by the replay of its corpus in tests/font_test.cc, so a reproducer
// behaves the same in both.
#pragma once

#include <string_view>

namespace attn::fuzz {

// The bytes of a --font file: loaded as load_font loads a file, then used
// as a figure uses a font: text measured, fitted, elided and placed glyph
// by glyph (bold too) at several scales, missing glyphs listed, the SVG
// family named. attn::Error (not a font) is swallowed; a glyph image that
// does not hold its own size throws std::logic_error.
void font_file(std::string_view data);

}  // namespace attn::fuzz
