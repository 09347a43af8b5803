#include "io/tokens.h"

#include "attn/error.h"
#include "attn/json.h"
#include "base/utf8.h"

namespace attn {

namespace {

// attn tokenize -f json: {"text": ..., "ids": [...], "tokens": [...]}, or
// an array of them (several texts), which is refused: one text labels a run.
std::vector<std::string> tokenize_json(const json::Value& v, const std::string& name) {
  const json::Value* list = v.find("tokens");
  if (!list || !list->is_array()) {
    throw_input(name, "expected a list of tokens or attn tokenize -f json's {\"tokens\": [...]}");
  }
  std::vector<std::string> tokens;
  for (size_t i = 0; i < list->size(); ++i) {
    const json::Value t = list->element(i);
    if (!t.is_string()) {
      throw_input(name + ": tokens[" + std::to_string(i) + "]",
                  "expected a token (a string), got " + json::describe(t));
    }
    tokens.push_back(t.as_string());
  }
  return tokens;
}

// attn tokenize's text table: a line a token, its id right-aligned in 7
// columns, two spaces, the token with a space shown as ␣ and \n, \r, \t
// written out. Empty when `text` is not that table.
std::vector<std::string> tokenize_table(const std::string& text) {
  std::vector<std::string> tokens;
  size_t line = 0;
  while (line < text.size()) {
    size_t nl = text.find('\n', line);
    if (nl == std::string::npos) nl = text.size();
    const std::string l = text.substr(line, nl - line);
    line = nl + 1;
    const size_t digits = l.find_first_not_of(' ');
    const size_t gap = l.find("  ", digits == std::string::npos ? 0 : digits);
    if (digits == std::string::npos || gap == std::string::npos || gap < 7 || gap == digits ||
        l.find_first_not_of("0123456789", digits) != gap) {
      return {};
    }
    std::string t;
    const std::string shown = l.substr(gap + 2);
    for (size_t i = 0; i < shown.size(); ++i) {
      if (shown.compare(i, 3, "␣") == 0) {
        t += ' ';
        i += 2;
      } else if (shown[i] == '\\' && i + 1 < shown.size() &&
                 (shown[i + 1] == 'n' || shown[i + 1] == 'r' || shown[i + 1] == 't')) {
        t += shown[i + 1] == 'n' ? '\n' : shown[i + 1] == 'r' ? '\r' : '\t';
        ++i;
      } else {
        t += shown[i];
      }
    }
    tokens.push_back(std::move(t));
  }
  return tokens;
}

}  // namespace

std::vector<std::string> read_tokens(const std::string& path, int64_t max_bytes) {
  const std::string name = display_name(path);
  std::string text = read_file(path, {}, max_bytes);
  size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  size_t first = text.find_first_not_of(" \t\r\n", start);
  std::vector<std::string> tokens;
  if (first != std::string::npos && text[first] == '{') {
    return tokenize_json(json::parse(text, name), name);
  }
  if (first != std::string::npos && text[first] == '[') {
    const json::Value v = json::parse(text, name);
    if (v.size() > 0 && v.element(0).is_object()) {
      throw_input(name, "holds the tokens of " + std::to_string(v.size()) +
                            " texts (attn tokenize of several); give the file of one text");
    }
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
  tokens = tokenize_table(text.substr(start));
  if (!tokens.empty()) return tokens;
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
