#include "attn/escape.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "base/number_text.h"
#include "unicode_printable.inc"

namespace attn {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Calls f(code_point, bytes, valid) for each code point of s, in order. An
// ill-formed sequence is reported as U+FFFD with the bytes of U+FFFD and
// valid false, one
// per maximal subpart: a valid lead byte followed by the continuation
// bytes that could still have completed it, or else a single byte. The
// ranges are Table 3-7 of the Unicode Standard, which rules out overlong
// forms, surrogates and code points above U+10FFFF.
template <class F>
void for_each_code_point(std::string_view s, F&& f) {
  static constexpr std::string_view kReplacementBytes = "\xEF\xBF\xBD";
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      f(static_cast<char32_t>(c), s.substr(i, 1), true);
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    char32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
      if (c == 0xE0) lo = 0xA0;  // no overlong forms
      if (c == 0xED) hi = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
      if (c == 0xF0) lo = 0x90;  // no overlong forms
      if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
      f(kReplacement, kReplacementBytes, false);  // a continuation byte, C0, C1, F5..FF
      ++i;
      continue;
    }
    size_t k = 1;
    for (; k < len && i + k < s.size(); ++k) {
      const unsigned char b = static_cast<unsigned char>(s[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) break;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (k == len) {
      f(cp, s.substr(i, len), true);
    } else {
      f(kReplacement, kReplacementBytes, false);
    }
    i += k;
  }
}

bool is_c0_or_c1(char32_t c) { return c < 0x20 || (c >= 0x7F && c <= 0x9F); }

// Whether Python 3's str.isprintable() is True for c, so that repr() writes
// c as it is: the table lists the code points it is False for (general
// categories Cc, Cf, Cs, Co, Cn, Zl, Zp, and Zs but the space), which
// include the controls and the invisible characters that make source read
// differently from what it does (bidirectional controls, zero-width
// characters, line separators, tag characters, odd spaces).
bool is_printable(char32_t c) {
  using unicode_printable::kNonPrintable;
  using unicode_printable::Range;
  // The first range that starts after c: c is in the one before, if any.
  const Range* after = std::upper_bound(std::begin(kNonPrintable), std::end(kNonPrintable), c,
                                        [](char32_t v, const Range& r) { return v < r.first; });
  return after == std::begin(kNonPrintable) || c > (after - 1)->last;
}

void append_hex(std::string& out, uint32_t v, int digits) {
  static const char* hex = "0123456789abcdef";
  for (int d = digits - 1; d >= 0; --d) out += hex[(v >> (4 * d)) & 0xF];
}

bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }

// Whether attn's CSV reader would take a bare cell as a number (or a
// boolean of a mask) rather than as a name: a number or number word, or
// digits mixed only with signs, points and exponents ("1e", "e5").
bool reads_as_number(std::string_view s) {
  double v;
  if (parse_number_word(s, &v)) return true;
  if (s == "true" || s == "false") return true;
  bool digit = false;
  for (char c : s) {
    if (is_ascii_digit(c)) {
      digit = true;
    } else if (c != '+' && c != '-' && c != '.' && c != 'e' && c != 'E') {
      return false;
    }
  }
  return digit;
}

}  // namespace

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for_each_code_point(s, [&](char32_t, std::string_view bytes, bool) { out += bytes; });
  return out;
}

bool is_valid_utf8(std::string_view s) {
  bool valid = true;
  for_each_code_point(s, [&](char32_t, std::string_view, bool ok) { valid &= ok; });
  return valid;
}

std::string python_string_literal(std::string_view s) {
  std::string out = "'";
  for_each_code_point(s, [&](char32_t c, std::string_view bytes, bool) {
    switch (c) {
      case '\\':
        out += "\\\\";
        return;
      case '\'':
        out += "\\'";
        return;
      case '\n':
        out += "\\n";
        return;
      case '\r':
        out += "\\r";
        return;
      case '\t':
        out += "\\t";
        return;
      default:
        break;
    }
    // As repr() writes what str.isprintable() refuses. U+FFFD, which stands
    // for invalid bytes, is printable and stays as it is.
    if (is_printable(c)) {
      out += bytes;
    } else if (c < 0x100) {
      out += "\\x";
      append_hex(out, c, 2);
    } else if (c < 0x10000) {
      out += "\\u";
      append_hex(out, c, 4);
    } else {
      out += "\\U";
      append_hex(out, c, 8);
    }
  });
  out += '\'';
  return out;
}

std::string python_path_literal(std::string_view path) {
  if (is_valid_utf8(path)) return python_string_literal(path);
  std::string out = "b'";
  for (const char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += ch;
    } else if (c >= 0x20 && c < 0x7F) {
      out += ch;
    } else {
      out += "\\x";
      append_hex(out, c, 2);
    }
  }
  out += '\'';
  return out;
}

namespace {

// A code point above ASCII as LaTeX that pdflatex reads without inputenc
// and with the OT1 fonts: math symbols in \ensuremath (right in running
// text, in \text{...} and in math), accented Latin letters by their
// accent commands, anything else as its code point, \texttt{U+5B83}. Each
// is a command of its own, so the text reads back unambiguously (the
// escape fuzzer decodes it).
struct LatexSymbol {
  char32_t c;
  const char* latex;
};
constexpr LatexSymbol kLatexSymbols[] = {
    {0x00A0, "\\nobreakspace{}"},
    {0x00B2, "\\ensuremath{^{2}}"},
    {0x00B3, "\\ensuremath{^{3}}"},
    {0x00B7, "\\ensuremath{\\cdot}"},
    {0x00D7, "\\ensuremath{\\times}"},
    {0x00DF, "\\ss{}"},
    {0x00F7, "\\ensuremath{\\div}"},
    {0x0391, "\\ensuremath{\\mathrm{A}}"},
    {0x0393, "\\ensuremath{\\Gamma}"},
    {0x0394, "\\ensuremath{\\Delta}"},
    {0x0398, "\\ensuremath{\\Theta}"},
    {0x039B, "\\ensuremath{\\Lambda}"},
    {0x03A0, "\\ensuremath{\\Pi}"},
    {0x03A3, "\\ensuremath{\\Sigma}"},
    {0x03A6, "\\ensuremath{\\Phi}"},
    {0x03A8, "\\ensuremath{\\Psi}"},
    {0x03A9, "\\ensuremath{\\Omega}"},
    {0x03B1, "\\ensuremath{\\alpha}"},
    {0x03B2, "\\ensuremath{\\beta}"},
    {0x03B3, "\\ensuremath{\\gamma}"},
    {0x03B4, "\\ensuremath{\\delta}"},
    {0x03B5, "\\ensuremath{\\varepsilon}"},
    {0x03B6, "\\ensuremath{\\zeta}"},
    {0x03B7, "\\ensuremath{\\eta}"},
    {0x03B8, "\\ensuremath{\\theta}"},
    {0x03B9, "\\ensuremath{\\iota}"},
    {0x03BA, "\\ensuremath{\\kappa}"},
    {0x03BB, "\\ensuremath{\\lambda}"},
    {0x03BC, "\\ensuremath{\\mu}"},
    {0x03BD, "\\ensuremath{\\nu}"},
    {0x03BE, "\\ensuremath{\\xi}"},
    {0x03C0, "\\ensuremath{\\pi}"},
    {0x03C1, "\\ensuremath{\\rho}"},
    {0x03C3, "\\ensuremath{\\sigma}"},
    {0x03C4, "\\ensuremath{\\tau}"},
    {0x03C5, "\\ensuremath{\\upsilon}"},
    {0x03C6, "\\ensuremath{\\phi}"},
    {0x03C7, "\\ensuremath{\\chi}"},
    {0x03C8, "\\ensuremath{\\psi}"},
    {0x03C9, "\\ensuremath{\\omega}"},
    {0x1D40, "\\ensuremath{^{\\top}}"},
    {0x2013, "\\textendash{}"},
    {0x2014, "\\textemdash{}"},
    {0x2018, "\\textquoteleft{}"},
    {0x2019, "\\textquoteright{}"},
    {0x201C, "\\textquotedblleft{}"},
    {0x201D, "\\textquotedblright{}"},
    {0x2026, "\\ldots{}"},
    {0x2070, "\\ensuremath{^{0}}"},
    {0x2080, "\\ensuremath{_{0}}"},
    {0x2081, "\\ensuremath{_{1}}"},
    {0x2082, "\\ensuremath{_{2}}"},
    {0x2083, "\\ensuremath{_{3}}"},
    {0x2084, "\\ensuremath{_{4}}"},
    {0x2085, "\\ensuremath{_{5}}"},
    {0x2086, "\\ensuremath{_{6}}"},
    {0x2087, "\\ensuremath{_{7}}"},
    {0x2088, "\\ensuremath{_{8}}"},
    {0x2089, "\\ensuremath{_{9}}"},
    {0x2192, "\\ensuremath{\\to}"},
    {0x21B5, "\\ensuremath{\\hookleftarrow}"},
    {0x21E5, "\\ensuremath{\\rightarrow}"},
    {0x2211, "\\ensuremath{\\sum}"},
    {0x2212, "\\ensuremath{-}"},
    {0x221A, "\\ensuremath{\\surd}"},
    {0x221E, "\\ensuremath{\\infty}"},
    {0x2225, "\\ensuremath{\\parallel}"},
    {0x2248, "\\ensuremath{\\approx}"},
    {0x2260, "\\ensuremath{\\neq}"},
    {0x2264, "\\ensuremath{\\leq}"},
    {0x2265, "\\ensuremath{\\geq}"},
    {0x2016, "\\ensuremath{\\|}"},
    {0x2299, "\\ensuremath{\\odot}"},
    {0x22C5, "\\ensuremath{\\cdotp}"},
    {0x2423, "\\textvisiblespace{}"},
};

// Latin-1's accented letters: the accent command and the base letter.
bool latin1_accent(char32_t c, std::string& out) {
  static const char* const kAccents[] = {"\\`", "\\'", "\\^", "\\~", "\\\"", "\\r"};
  // U+00C0..U+00FF: the letter each is built on and its accent (an index
  // into kAccents), '-' for none (Æ, Ç, Ø, ß, ... are handled below).
  static const char kBase[] = "AAAAAA--EEEEIIII-NOOOOO--UUUUY--aaaaaa--eeeeiiii-nooooo--uuuuy-y";
  static const char kAccent[] = "012345--01240124-301234--01241--012345--01240124-301234--01241-4";
  if (c < 0xC0 || c > 0xFF) return false;
  const size_t i = c - 0xC0;
  if (kBase[i] == '-' || kAccent[i] == '-') {
    switch (c) {
      case 0xC6:
        out += "\\AE{}";
        return true;
      case 0xE6:
        out += "\\ae{}";
        return true;
      case 0xD8:
        out += "\\O{}";
        return true;
      case 0xF8:
        out += "\\o{}";
        return true;
      case 0xC7:
        out += "\\c{C}";
        return true;
      case 0xE7:
        out += "\\c{c}";
        return true;
      default:
        return false;
    }
  }
  out += kAccents[kAccent[i] - '0'];
  out += '{';
  out += kBase[i];
  out += '}';
  return true;
}

void append_latex_code_point(char32_t c, std::string& out) {
  if (latin1_accent(c, out)) return;
  for (const LatexSymbol& sym : kLatexSymbols) {
    if (sym.c == c) {
      out += sym.latex;
      return;
    }
  }
  static const char kHex[] = "0123456789ABCDEF";
  std::string hex;
  for (char32_t v = c; v > 0 || hex.size() < 4; v >>= 4) hex.insert(hex.begin(), kHex[v & 15]);
  out += "\\texttt{U+" + hex + "}";
}

}  // namespace

std::string latex_ascii(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for_each_code_point(s, [&](char32_t c, std::string_view bytes, bool) {
    if (c == kReplacement) {
      out += '?';
    } else if (c < 0x80) {
      out += bytes;
    } else {
      append_latex_code_point(c, out);
    }
  });
  return out;
}

std::string latex_text(std::string_view s) {
  std::string out;
  for_each_code_point(s, [&](char32_t c, std::string_view bytes, bool) {
    switch (c) {
      case '\\':
        out += "\\textbackslash{}";
        return;
      case '{':
      case '}':
      case '#':
      case '$':
      case '%':
      case '&':
      case '_':
        out += '\\';
        out += static_cast<char>(c);
        return;
      case '~':
        out += "\\textasciitilde{}";
        return;
      case '^':
        out += "\\textasciicircum{}";
        return;
      case '<':
        out += "\\textless{}";
        return;
      case '>':
        out += "\\textgreater{}";
        return;
      case '|':
        out += "\\textbar{}";
        return;
      case kReplacement:
        out += '?';
        return;
      default:
        break;
    }
    // A newline would end a % comment, and a blank line a \text{...}.
    if (is_c0_or_c1(c)) {
      out += ' ';
    } else if (c >= 0x80) {
      append_latex_code_point(c, out);
    } else {
      out += bytes;
    }
  });
  return out;
}

std::string markdown_text(std::string_view s) {
  const std::string t = sanitize_utf8(s);
  // "1. x" or "1) x" at the start would begin an ordered list: the byte
  // of the '.' or ')' to escape (npos when there is none).
  size_t list_dot = std::string::npos;
  const size_t digits = t.find_first_not_of("0123456789");
  if (digits != std::string::npos && digits > 0 && digits <= 9 &&
      (t[digits] == '.' || t[digits] == ')')) {
    const unsigned char next =
        digits + 1 < t.size() ? static_cast<unsigned char>(t[digits + 1]) : ' ';
    if (next <= ' ' || next == 0x7F) list_dot = digits;
  }
  std::string out;
  size_t at = 0;  // byte offset of the code point in t
  for_each_code_point(t, [&](char32_t c, std::string_view bytes, bool) {
    const size_t here = at;
    at += bytes.size();
    if (is_c0_or_c1(c)) {
      out += ' ';  // a newline would end the paragraph, the heading or the table row
      return;
    }
    switch (c) {
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '<':
      case '>':
      case '&':
      case '|':
      case '~':
      case '#':
      case '$':
        out += '\\';
        break;
      case '-':
      case '+':
        if (here == 0) out += '\\';  // "- x", "+ x", "---": a list or a rule
        break;
      default:
        if (here == list_dot) out += '\\';
        break;
    }
    out += bytes;
  });
  return out;
}

std::string markdown_code(std::string_view s) {
  std::string text;
  size_t run = 0, longest = 0;
  for_each_code_point(s, [&](char32_t c, std::string_view bytes, bool) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (is_c0_or_c1(c)) {
      text += ' ';
    } else {
      text += bytes;
    }
  });
  // A code span cannot be empty: nothing shows as one space.
  if (text.empty()) return "` `";
  const std::string fence(longest + 1, '`');
  // CommonMark strips one space from each end when both ends have one, and
  // a backtick at an end would join the fence.
  const bool all_spaces = text.find_first_not_of(' ') == std::string::npos;
  const bool pad = text.front() == '`' || text.back() == '`' ||
                   (!all_spaces && text.front() == ' ' && text.back() == ' ');
  return pad ? fence + " " + text + " " + fence : fence + text + fence;
}

namespace {

std::string xml_escaped(std::string_view s, bool attribute) {
  std::string out;
  for_each_code_point(s, [&](char32_t c, std::string_view bytes, bool) {
    switch (c) {
      case '&':
        out += "&amp;";
        return;
      case '<':
        out += "&lt;";
        return;
      case '>':
        out += "&gt;";
        return;
      case '"':
        out += "&quot;";
        return;
      case '\'':
        out += "&apos;";
        return;
      case '\t':
      case '\n':
      case '\r':
        if (attribute) {
          out += "&#";
          out += std::to_string(static_cast<int>(c));
          out += ';';
        } else {
          out += static_cast<char>(c);
        }
        return;
      default:
        break;
    }
    if (c < 0x20 || c == 0xFFFE || c == 0xFFFF) return;  // not allowed in XML 1.0
    out += bytes;
  });
  return out;
}

}  // namespace

std::string xml_text(std::string_view s) { return xml_escaped(s, false); }

std::string xml_attribute(std::string_view s) { return xml_escaped(s, true); }

std::string csv_field(std::string_view s, char delimiter) {
  std::string text;
  bool quote = s.empty() || reads_as_number(s);
  for_each_code_point(s, [&](char32_t c, std::string_view bytes, bool) {
    if (c == static_cast<unsigned char>(delimiter) || c == '"' || c == '\r' || c == '\n' ||
        c == '\t' || c == ' ' || c == '#' || c == ',' || c == ';') {
      quote = true;
    }
    if (c == '"') {
      text += "\"\"";
    } else if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7F) {
      text += "\xEF\xBF\xBD";
    } else {
      text += bytes;
    }
  });
  return quote ? "\"" + text + "\"" : text;
}

void append_json_string(std::string& out, std::string_view s) {
  // Valid text (nearly all) is escaped in place, without a copy.
  std::string clean;
  if (!is_valid_utf8(s)) {
    clean = sanitize_utf8(s);
    s = clean;
  }
  static const char* const kHex = "0123456789abcdef";
  out += '"';
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string script_json(std::string_view json_text) {
  std::string out;
  out.reserve(json_text.size());
  for (size_t i = 0; i < json_text.size(); ++i) {
    const char c = json_text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < json_text.size() && json_text[i + 1] == '\x80' &&
               (json_text[i + 2] == '\xA8' || json_text[i + 2] == '\xA9')) {
      out += json_text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string terminal_text(std::string_view s) {
  std::string out;
  for_each_code_point(s, [&](char32_t c, std::string_view bytes, bool) {
    if (is_c0_or_c1(c) && c != '\n' && c != '\t') {
      out += "\xEF\xBF\xBD";
    } else {
      out += bytes;
    }
  });
  return out;
}

std::string token_table_text(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c == ' ') {
      out += "␣";
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += '\\';
      out += c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
    } else {
      out += c;
    }
  }
  return terminal_text(out);
}

std::string base64(const std::string& data) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  for (size_t i = 0; i < data.size(); i += 3) {
    const uint32_t b0 = static_cast<unsigned char>(data[i]);
    const uint32_t b1 = i + 1 < data.size() ? static_cast<unsigned char>(data[i + 1]) : 0;
    const uint32_t b2 = i + 2 < data.size() ? static_cast<unsigned char>(data[i + 2]) : 0;
    const uint32_t n = (b0 << 16) | (b1 << 8) | b2;
    out += k[(n >> 18) & 63];
    out += k[(n >> 12) & 63];
    out += i + 1 < data.size() ? k[(n >> 6) & 63] : '=';
    out += i + 2 < data.size() ? k[n & 63] : '=';
  }
  return out;
}

}  // namespace attn
