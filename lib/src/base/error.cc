#include "attn/error.h"

#include "base/utf8.h"

namespace attn {

std::string Error::without_nul(std::string message) {
  for (size_t at = message.find('\0'); at != std::string::npos; at = message.find('\0', at)) {
    message.replace(at, 1, "\\u0000");
  }
  return message;
}

std::string at(std::string_view place, std::string_view what) {
  if (place.empty()) return std::string(what);
  std::string s(place);
  s += ": ";
  s += what;
  return s;
}

void throw_input(std::string_view place, std::string_view what) {
  throw Error(ErrorKind::kInput, at(place, what));
}

void throw_usage(std::string_view what) { throw Error(ErrorKind::kUsage, std::string(what)); }

void throw_file(std::string_view path, std::string_view what) {
  throw Error(ErrorKind::kFile, at(path, what));
}

void throw_internal(std::string_view what) {
  throw Error(ErrorKind::kInternal, "internal error: " + std::string(what));
}

std::string message_text(std::string_view s) {
  constexpr size_t kMaxChars = 60;
  std::string out;
  size_t chars = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    if (chars == kMaxChars) {
      out += "...";
      break;
    }
    const unsigned char c = *p;
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      append_hex_byte(out, "\\u00", c);
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      const size_t n = utf8_sequence_length(p, end);
      if (n == 0) {
        append_hex_byte(out, "\\x", c);
      } else {
        out.append(reinterpret_cast<const char*>(p), n);
        p += n;
        ++chars;
        continue;
      }
    }
    ++p;
    ++chars;
  }
  return out;
}

}  // namespace attn
