// UTF-8 validation: every text attn reads (CSV, labels and titles from flags)
// must be UTF-8, so that every text it writes is. JSON strings are checked by
// the JSON parser itself.
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attn {

// Length of the valid UTF-8 sequence that starts at p (1 to 4 bytes), or 0
// when it is not one (a stray continuation byte, an overlong form, a
// surrogate, a value past U+10FFFF, or a sequence cut by end).
size_t utf8_sequence_length(const unsigned char* p, const unsigned char* end);

// The code point of the valid sequence of n bytes at p (n as
// utf8_sequence_length gave it).
char32_t decode_utf8_sequence(const unsigned char* p, size_t n);

// Appends code point c (at most U+10FFFF, not a surrogate) as UTF-8.
void append_utf8(std::string& out, char32_t c);

// Byte offset of the first byte that is not part of valid UTF-8, or npos.
size_t invalid_utf8_offset(std::string_view text);

// Appends prefix and the byte as two lowercase hex digits ("\\x" and 0x1b
// give "\\x1b"): how messages show a byte that is not printable text.
void append_hex_byte(std::string& out, const char* prefix, unsigned char c);

}  // namespace attn
