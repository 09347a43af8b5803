#include "io/tokens.h"

#include "attn/error.h"
#include "attn/json.h"
#include "base/utf8.h"

namespace attn {

std::vector<std::string> read_tokens(const std::string& path, int64_t max_bytes) {
  const std::string name = display_name(path);
  std::string text = read_file(path, {}, max_bytes);
  size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  size_t first = text.find_first_not_of(" \t\r\n", start);
  std::vector<std::string> tokens;
  if (first != std::string::npos && text[first] == '[') {
    const json::Value v = json::parse(text, name);
    for (size_t i = 0; i < v.size(); ++i) {
      const json::Value t = v.element(i);
      if (!t.is_string()) {
        throw_input(name + "[" + std::to_string(i) + "]",
                    "expected a token (a string), got " + json::describe(t));
      }
      tokens.push_back(t.as_string());
    }
    return tokens;
  }
  if (!text.empty() && text.back() == '\0') {
    throw_input(name, "holds a NUL byte; a token file is UTF-8 text or a JSON list");
  }
  const size_t bad = invalid_utf8_offset(text);
  if (bad != std::string::npos) {
    throw_input(name, "byte " + std::to_string(bad) + " is not UTF-8; tokens must be UTF-8 text");
  }
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (text.empty()) return tokens;
  for (size_t line = start;;) {
    const size_t nl = text.find('\n', line);
    std::string t = text.substr(line, nl == std::string::npos ? std::string::npos : nl - line);
    if (!t.empty() && t.back() == '\r') t.pop_back();
    tokens.push_back(std::move(t));
    if (nl == std::string::npos) break;
    line = nl + 1;
  }
  return tokens;
}

}  // namespace attn
