#include "attn/json.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "attn/error.h"
#include "attn/number_text.h"

namespace attn::json {

Value Value::null(size_t offset) {
  Value v;
  v.offset_ = offset;
  return v;
}

Value Value::boolean(bool b, size_t offset) {
  Value v;
  v.type_ = Type::kBool;
  v.bool_ = b;
  v.offset_ = offset;
  return v;
}

Value Value::number(double x, size_t offset) {
  Value v;
  v.type_ = Type::kNumber;
  v.number_ = x;
  v.offset_ = offset;
  return v;
}

Value Value::string(std::string s, size_t offset) {
  Value v;
  v.type_ = Type::kString;
  v.string_ = std::move(s);
  v.offset_ = offset;
  return v;
}

Value Value::array(size_t offset) {
  Value v;
  v.type_ = Type::kArray;
  v.packed_ = true;
  v.offset_ = offset;
  return v;
}

Value Value::object(size_t offset) {
  Value v;
  v.type_ = Type::kObject;
  v.offset_ = offset;
  return v;
}

size_t Value::size() const {
  if (type_ == Type::kObject) return members_.size();
  return packed_ ? numbers_.size() : items_.size();
}

Value Value::element(size_t i) const {
  if (packed_) return Value::number(numbers_[i], offset_);
  return items_[i];
}

const Value* Value::find(std::string_view key) const {
  for (const Member& m : members_) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

void Value::push_number(double x) {
  if (packed_) {
    numbers_.push_back(x);
  } else {
    items_.push_back(Value::number(x, offset_));
  }
}

void Value::push(Value v) {
  if (packed_ && v.is_number()) {
    numbers_.push_back(v.number_);
    return;
  }
  if (packed_) {
    // The first non-number: unpack what came before.
    items_.reserve(numbers_.size() + 1);
    for (double x : numbers_) items_.push_back(Value::number(x, offset_));
    numbers_.clear();
    numbers_.shrink_to_fit();
    packed_ = false;
  }
  items_.push_back(std::move(v));
}

void Value::add_member(std::string key, Value v) {
  members_.push_back(Member{std::move(key), std::move(v)});
}

std::string type_name(Type t) {
  switch (t) {
    case Type::kNull:
      return "null";
    case Type::kBool:
      return "a boolean";
    case Type::kNumber:
      return "a number";
    case Type::kString:
      return "a string";
    case Type::kArray:
      return "an array";
    case Type::kObject:
      return "an object";
  }
  return "a value";
}

std::string describe(const Value& v) {
  switch (v.type()) {
    case Type::kNull:
      return "null";
    case Type::kBool:
      return v.as_bool() ? "true" : "false";
    case Type::kNumber:
      return format_shortest(v.as_number());
    case Type::kString: {
      std::string s = v.as_string();
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return "\"" + s + "\"";
    }
    case Type::kArray:
      return "an array";
    case Type::kObject:
      return "an object";
  }
  return "a value";
}

std::pair<int64_t, int64_t> line_column(std::string_view text, size_t offset) {
  if (offset > text.size()) offset = text.size();
  int64_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  // Skip a UTF-8 byte order mark at the very start: editors do not count it.
  if (line_start == 0 && text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0 &&
      offset >= 3) {
    line_start = 3;
  }
  int64_t column = 1;
  for (size_t i = line_start; i < offset; ++i) {
    // Count characters, not bytes: skip UTF-8 continuation bytes.
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++column;
  }
  return {line, column};
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid.
size_t utf8_length(const unsigned char* p, const unsigned char* end) {
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (static_cast<size_t>(end - p) < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  // Reject overlong forms, surrogates and values past U+10FFFF.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)) return 0;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  if (cp > 0x10FFFF) return 0;
  return n;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view source)
      : text_(text), source_(source), p_(text.data()), end_(text.data() + text.size()) {}

  Value parse_document() {
    if (text_.size() >= 2 && (std::memcmp(p_, "\xFF\xFE", 2) == 0 || std::memcmp(p_, "\xFE\xFF", 2) == 0)) {
      fail(p_, "the file is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8");
    }
    if (text_.size() >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) p_ += 3;
    skip_ws();
    if (p_ == end_) fail(p_, "empty document; expected a JSON value");
    Value v = parse_value();
    skip_ws();
    if (p_ != end_) fail(p_, "unexpected " + token_at(p_) + " after the end of the document");
    return v;
  }

 private:
  [[noreturn]] void fail(const char* at_ptr, const std::string& what) const {
    auto [line, col] = line_column(text_, static_cast<size_t>(at_ptr - text_.data()));
    std::string place(source_);
    place += ':' + std::to_string(line) + ':' + std::to_string(col);
    throw_input(place, what);
  }

  // A description of what stands at p, for "expected X, got Y" messages.
  std::string token_at(const char* p) const {
    if (p >= end_) return "end of input";
    unsigned char c = static_cast<unsigned char>(*p);
    if (c >= 0x20 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
    if (c == '\n') return "end of line";
    if (c == '\t') return "a tab";
    if (c >= 0x80) {
      size_t n = utf8_length(reinterpret_cast<const unsigned char*>(p),
                             reinterpret_cast<const unsigned char*>(end_));
      if (n > 1) return "'" + std::string(p, n) + "'";
    }
    static const char* hex = "0123456789abcdef";
    std::string s = "byte 0x";
    s += hex[c >> 4];
    s += hex[c & 15];
    return s;
  }

  void skip_ws() {
    while (p_ != end_) {
      char c = *p_;
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
        ++p_;
      } else if (c == '/' && p_ + 1 != end_ && (p_[1] == '/' || p_[1] == '*')) {
        fail(p_, "comments are not allowed in JSON");
      } else {
        return;
      }
    }
  }

  bool starts_with(const char* p, std::string_view word) const {
    return static_cast<size_t>(end_ - p) >= word.size() &&
           std::memcmp(p, word.data(), word.size()) == 0;
  }

  Value parse_value() {
    const size_t offset = static_cast<size_t>(p_ - text_.data());
    switch (*p_) {
      case '{':
        return parse_object();
      case '[':
        return parse_array();
      case '"':
        return Value::string(parse_string(), offset);
      case 't':
        if (starts_with(p_, "true")) {
          p_ += 4;
          return Value::boolean(true, offset);
        }
        break;
      case 'f':
        if (starts_with(p_, "false")) {
          p_ += 5;
          return Value::boolean(false, offset);
        }
        break;
      case 'n':
        if (starts_with(p_, "null")) {
          p_ += 4;
          return Value::null(offset);
        }
        break;
      default:
        if (*p_ == '-' || is_digit(*p_)) return Value::number(parse_number(), offset);
        break;
    }
    bad_value();
  }

  [[noreturn]] void bad_value() const {
    for (std::string_view w : {"NaN", "nan", "-NaN", "-nan"}) {
      if (starts_with(p_, w)) {
        fail(p_, "'" + std::string(w) +
                     "' is not valid JSON; write the string \"nan\" where a non-finite value "
                     "is meant");
      }
    }
    for (std::string_view w : {"Infinity", "-Infinity", "inf", "-inf", "+Infinity"}) {
      if (starts_with(p_, w)) {
        fail(p_, "'" + std::string(w) +
                     "' is not valid JSON; write the string \"inf\" or \"-inf\" where an "
                     "infinite value is meant");
      }
    }
    if (*p_ == '\'') fail(p_, "strings must be in double quotes, not single quotes");
    if (*p_ == '+') fail(p_, "invalid number: a leading '+' is not allowed");
    if (*p_ == '.') fail(p_, "invalid number: write a digit before '.' (0.5, not .5)");
    if (*p_ == ']' || *p_ == '}') fail(p_, "expected a value, got " + token_at(p_));
    if (std::isalpha(static_cast<unsigned char>(*p_))) {
      const char* q = p_;
      while (q != end_ && (std::isalnum(static_cast<unsigned char>(*q)) || *q == '_')) ++q;
      fail(p_, "expected a value, got '" + std::string(p_, static_cast<size_t>(q - p_)) +
                   "' (strings need double quotes; literals are true, false, null)");
    }
    fail(p_, "expected a value, got " + token_at(p_));
  }

  void enter(const char* at_ptr) {
    if (++depth_ > kMaxDepth) {
      fail(at_ptr, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    }
  }

  Value parse_array() {
    Value arr = Value::array(static_cast<size_t>(p_ - text_.data()));
    enter(p_);
    ++p_;  // '['
    skip_ws();
    if (p_ == end_) fail(p_, "unexpected end of input inside an array; expected a value or ']'");
    if (*p_ == ']') {
      ++p_;
      --depth_;
      return arr;
    }
    for (;;) {
      if (p_ == end_) fail(p_, "unexpected end of input inside an array; expected a value");
      if (*p_ == '-' || is_digit(*p_)) {
        arr.push_number(parse_number());
      } else {
        arr.push(parse_value());
      }
      skip_ws();
      if (p_ == end_) fail(p_, "unexpected end of input inside an array; expected ',' or ']'");
      if (*p_ == ',') {
        const char* comma = p_;
        ++p_;
        skip_ws();
        if (p_ != end_ && *p_ == ']') fail(comma, "trailing comma before ']'");
        continue;
      }
      if (*p_ == ']') {
        ++p_;
        break;
      }
      fail(p_, "expected ',' or ']' after an array element, got " + token_at(p_));
    }
    --depth_;
    return arr;
  }

  Value parse_object() {
    Value obj = Value::object(static_cast<size_t>(p_ - text_.data()));
    enter(p_);
    ++p_;  // '{'
    skip_ws();
    if (p_ == end_) fail(p_, "unexpected end of input inside an object; expected a key or '}'");
    if (*p_ == '}') {
      ++p_;
      --depth_;
      return obj;
    }
    for (;;) {
      if (p_ == end_) fail(p_, "unexpected end of input inside an object; expected a key");
      if (*p_ != '"') {
        if (*p_ == '\'') fail(p_, "keys must be in double quotes, not single quotes");
        fail(p_, "expected a key in double quotes, got " + token_at(p_));
      }
      const char* key_at = p_;
      std::string key = parse_string();
      for (const Member& m : obj.members()) {
        if (m.key == key) fail(key_at, "duplicate key \"" + key + "\"");
      }
      skip_ws();
      if (p_ == end_ || *p_ != ':') {
        fail(p_, "expected ':' after the key \"" + key + "\", got " + token_at(p_));
      }
      ++p_;
      skip_ws();
      if (p_ == end_) fail(p_, "unexpected end of input; expected a value for \"" + key + "\"");
      obj.add_member(std::move(key), parse_value());
      skip_ws();
      if (p_ == end_) fail(p_, "unexpected end of input inside an object; expected ',' or '}'");
      if (*p_ == ',') {
        const char* comma = p_;
        ++p_;
        skip_ws();
        if (p_ != end_ && *p_ == '}') fail(comma, "trailing comma before '}'");
        continue;
      }
      if (*p_ == '}') {
        ++p_;
        break;
      }
      fail(p_, "expected ',' or '}' after an object member, got " + token_at(p_));
    }
    --depth_;
    return obj;
  }

  // Validates the JSON number grammar, then converts with from_chars (which
  // in libstdc++ 12 is the fast, correctly rounded Eisel-Lemire algorithm).
  double parse_number() {
    const char* start = p_;
    const char* p = p_;
    if (*p == '-') {
      ++p;
      if (p == end_ || !is_digit(*p)) {
        if (p != end_ && (*p == 'I' || *p == 'i' || *p == 'N' || *p == 'n')) bad_value();
        fail(p, "invalid number: expected a digit after '-'");
      }
    }
    if (*p == '0') {
      ++p;
      if (p != end_ && is_digit(*p)) fail(start, "invalid number: leading zeros are not allowed");
    } else {
      while (p != end_ && is_digit(*p)) ++p;
    }
    if (p != end_ && *p == '.') {
      ++p;
      if (p == end_ || !is_digit(*p)) fail(p, "invalid number: expected a digit after '.'");
      while (p != end_ && is_digit(*p)) ++p;
    }
    if (p != end_ && (*p == 'e' || *p == 'E')) {
      ++p;
      if (p != end_ && (*p == '+' || *p == '-')) ++p;
      if (p == end_ || !is_digit(*p)) fail(p, "invalid number: expected a digit in the exponent");
      while (p != end_ && is_digit(*p)) ++p;
    }
    p_ = p;
    return parse_double_text(start, p);
  }

  std::string parse_string() {
    ++p_;  // opening quote
    std::string out;
    for (;;) {
      // Fast path: copy a run of plain ASCII characters.
      const char* run = p_;
      while (p_ != end_) {
        unsigned char c = static_cast<unsigned char>(*p_);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++p_;
      }
      out.append(run, static_cast<size_t>(p_ - run));
      if (p_ == end_) fail(p_, "unexpected end of input inside a string; missing '\"'");
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return out;
      }
      if (c == '\\') {
        parse_escape(out);
        continue;
      }
      if (c < 0x20) {
        if (c == '\n') fail(p_, "end of line inside a string; missing '\"' or write \\n");
        fail(p_, "control character in a string; escape it (e.g. \\t, \\u0001)");
      }
      size_t n = utf8_length(reinterpret_cast<const unsigned char*>(p_),
                             reinterpret_cast<const unsigned char*>(end_));
      if (n == 0) fail(p_, "invalid UTF-8 in a string");
      out.append(p_, n);
      p_ += n;
    }
  }

  uint32_t parse_hex4(const char* p) {
    if (end_ - p < 4) fail(p, "invalid \\u escape: expected 4 hex digits");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = p[i];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        fail(p + i, "invalid \\u escape: expected 4 hex digits");
      }
    }
    return v;
  }

  void parse_escape(std::string& out) {
    const char* esc = p_;
    ++p_;
    if (p_ == end_) fail(p_, "unexpected end of input inside a string escape");
    char c = *p_++;
    switch (c) {
      case '"':
        out += '"';
        return;
      case '\\':
        out += '\\';
        return;
      case '/':
        out += '/';
        return;
      case 'b':
        out += '\b';
        return;
      case 'f':
        out += '\f';
        return;
      case 'n':
        out += '\n';
        return;
      case 'r':
        out += '\r';
        return;
      case 't':
        out += '\t';
        return;
      case 'u': {
        uint32_t cp = parse_hex4(p_);
        p_ += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u') {
            fail(esc, "invalid \\u escape: a high surrogate must be followed by a low one");
          }
          uint32_t lo = parse_hex4(p_ + 2);
          if (lo < 0xDC00 || lo > 0xDFFF) {
            fail(esc, "invalid \\u escape: a high surrogate must be followed by a low one");
          }
          p_ += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          fail(esc, "invalid \\u escape: unpaired low surrogate");
        }
        append_utf8(out, cp);
        return;
      }
      default:
        fail(esc, "invalid escape '\\" + std::string(1, c) + "' in a string");
    }
  }

  std::string_view text_;
  std::string_view source_;
  const char* p_;
  const char* end_;
  int depth_ = 0;
};

}  // namespace

Value parse(std::string_view text, std::string_view source) {
  Parser parser(text, source);
  return parser.parse_document();
}

}  // namespace attn::json
