// Tokens as people read them on a figure's axes: the markers tokenizers
// put for a space (byte-level BPE's Ġ, SentencePiece's ▁) removed or shown
// as a light ␣, byte-level characters turned back into the text they stand
// for (Ã© is é), byte-fallback pieces (<0x0A>) as their byte, newlines
// and tabs as ↵ and ⇥, and a token that occurs more than once told apart
// by its position (the₄). --token-style raw draws the labels as given.
#include <map>
#include <string>
#include <vector>

#include "attn/heatmap.h"
#include "base/utf8.h"

namespace attn {

namespace {

// GPT-2's byte-to-character table: the printable bytes stand for
// themselves, the others (controls, space, 127-160, 173) for U+0100 + n
// in byte order. Returns the byte, or -1 for a character outside it.
int byte_of(char32_t c) {
  auto printable = [](int b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
  };
  if (c < 0x100) return printable(static_cast<int>(c)) ? static_cast<int>(c) : -1;
  if (c > 0x143) return -1;
  int n = static_cast<int>(c) - 0x100;
  for (int b = 0; b < 256; ++b) {
    if (printable(b)) continue;
    if (n-- == 0) return b;
  }
  return -1;
}

std::u32string decode(const std::string& s) {
  std::u32string out;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const size_t n = utf8_sequence_length(p, end);
    if (n == 0) {  // not UTF-8: the byte as a character of its own
      out += static_cast<char32_t>(0xDC00 + *p++);
      continue;
    }
    out += decode_utf8_sequence(p, n);
    p += n;
  }
  return out;
}

void append(std::string& out, char32_t c) {
  if (c >= 0xDC00 && c < 0xDD00) {  // a stray byte
    static const char* hex = "0123456789ABCDEF";
    const unsigned b = static_cast<unsigned>(c - 0xDC00);
    out += "\\x";
    out += hex[b >> 4];
    out += hex[b & 15];
    return;
  }
  append_utf8(out, c);
}

// Bytes as text: whole UTF-8 characters as such, the rest as \xNN.
std::string bytes_text(const std::string& bytes) {
  std::string out;
  for (char32_t c : decode(bytes)) append(out, c);
  return out;
}

std::string visible(const std::string& text, TokenStyle style) {
  std::string out;
  const std::u32string u = decode(text);
  for (size_t i = 0; i < u.size(); ++i) {
    const char32_t c = u[i];
    if (c == U'\n') {
      out += "↵";
    } else if (c == U'\t') {
      out += "⇥";
    } else if (c == U'\r') {
      out += "␍";
    } else if (c == U' ' && (u.size() == 1 || (i == 0 && style == TokenStyle::kMarker))) {
      out += "␣";  // a token that is a space, or the marker asked for
    } else if (c == U' ' && i == 0) {
      // The space a word starts with: left out.
    } else if (c < 0x20 || c == 0x7F) {
      append(out, 0xDC00 + c);
    } else {
      append(out, c);
    }
  }
  return out;
}

std::string subscript(size_t n) {
  static const char* digits[] = {"₀", "₁", "₂", "₃", "₄", "₅", "₆", "₇", "₈", "₉"};
  const std::string s = std::to_string(n);
  std::string out;
  for (char ch : s) out += digits[ch - '0'];
  return out;
}

}  // namespace

std::vector<std::string> token_texts(const std::vector<std::string>& labels, TokenStyle style) {
  if (style == TokenStyle::kRaw || labels.empty()) return labels;
  // Byte-level BPE, when a label holds its stand-in for a space (Ġ) or a
  // newline (Ċ), no label holds SentencePiece's ▁, and every character of
  // every label is one of the 256 byte stand-ins: the set as a whole, so
  // that Polish or Turkish text (ł, İ are stand-ins too) is not misread.
  bool marker = false, all_bytes = true, metaspace = false;
  for (const std::string& l : labels) {
    for (char32_t c : decode(l)) {
      marker = marker || c == 0x120 || c == 0x10A;
      metaspace = metaspace || c == U'▁';
      all_bytes = all_bytes && byte_of(c) >= 0;
    }
  }
  const bool byte_level = marker && all_bytes && !metaspace;
  std::vector<std::string> out;
  out.reserve(labels.size());
  for (const std::string& l : labels) {
    std::string text;
    auto hex = [](char ch) {
      return ch >= '0' && ch <= '9'   ? ch - '0'
             : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
             : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                                      : -1;
    };
    if (l.size() == 6 && l.compare(0, 3, "<0x") == 0 && l[5] == '>' && hex(l[3]) >= 0 &&
        hex(l[4]) >= 0) {
      text = bytes_text(std::string(1, static_cast<char>(hex(l[3]) * 16 + hex(l[4]))));
    } else if (byte_level) {
      std::string bytes;
      bool all = true;
      for (char32_t c : decode(l)) {
        const int b = byte_of(c);
        if (b < 0) all = false;
        bytes += static_cast<char>(b);
      }
      text = all ? bytes_text(bytes) : l;
    } else {
      for (char32_t c : decode(l)) append(text, c == U'▁' ? U' ' : c);
    }
    out.push_back(visible(text, style));
  }
  return out;
}

std::vector<std::string> shown_tokens(const std::vector<std::string>& labels, TokenStyle style) {
  if (style == TokenStyle::kRaw || labels.empty()) return labels;
  std::vector<std::string> out = token_texts(labels, style);
  // Repeated tokens, told apart by their position.
  std::map<std::string, int> count;
  for (const std::string& s : out) ++count[s];
  for (size_t i = 0; i < out.size(); ++i) {
    if (count[out[i]] > 1) out[i] += subscript(i);
  }
  return out;
}

}  // namespace attn
