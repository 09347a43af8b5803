#include "attn/json.h"

#include <cctype>
#include <cstring>
#include <iterator>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "attn/error.h"
#include "base/number_text.h"
#include "base/utf8.h"

namespace attn::json {

Value Value::null() { return Value(); }

Value Value::boolean(bool b) {
  Value v;
  v.type_ = Type::kBool;
  v.bool_ = b;
  return v;
}

Value Value::number(double x) {
  Value v;
  v.type_ = Type::kNumber;
  v.number_ = x;
  return v;
}

Value Value::string(std::string s) {
  Value v;
  v.type_ = Type::kString;
  v.string_ = std::move(s);
  return v;
}

Value Value::array() {
  Value v;
  v.type_ = Type::kArray;
  v.packed_ = true;
  v.dims_ = {0};
  return v;
}

Value Value::object() {
  Value v;
  v.type_ = Type::kObject;
  return v;
}

size_t Value::size() const {
  if (type_ == Type::kObject) return members_.size();
  return packed_ ? static_cast<size_t>(dims_[0]) : items_.size();
}

namespace {

int64_t product_from(const std::vector<int64_t>& dims, size_t first) {
  int64_t n = 1;
  for (size_t i = first; i < dims.size(); ++i) n *= dims[i];
  return n;
}

}  // namespace

Value Value::element(size_t i) const {
  if (!packed_) return items_[i];
  if (dims_.size() == 1) return Value::number(numbers_[i]);
  // Rebuild the slice's shape exactly (it may hold zero numbers).
  Value e = Value::array();
  e.dims_.assign(dims_.begin() + 1, dims_.end());
  const int64_t n = product_from(dims_, 1);
  auto first = numbers_.begin() + static_cast<std::ptrdiff_t>(i) * n;
  e.numbers_.assign(first, first + n);
  return e;
}

const Value* Value::find(std::string_view key) const {
  for (const Member& m : members_) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

void Value::push(Value v) {
  if (packed_) {
    const bool empty = dims_.size() == 1 && dims_[0] == 0;
    if (v.is_number() && dims_.size() == 1) {
      numbers_.push_back(v.number_);
      ++dims_[0];
      return;
    }
    if (v.packed_ && empty) {
      dims_.assign(1, 1);
      dims_.insert(dims_.end(), v.dims_.begin(), v.dims_.end());
      numbers_ = std::move(v.numbers_);
      return;
    }
    if (v.packed_ && dims_.size() == v.dims_.size() + 1 &&
        std::equal(v.dims_.begin(), v.dims_.end(), dims_.begin() + 1)) {
      numbers_.insert(numbers_.end(), v.numbers_.begin(), v.numbers_.end());
      ++dims_[0];
      return;
    }
    unpack();
  }
  items_.push_back(std::move(v));
}

void Value::unpack() {
  std::vector<Value> items;
  items.reserve(static_cast<size_t>(dims_[0]) + 1);
  for (size_t i = 0; i < static_cast<size_t>(dims_[0]); ++i) items.push_back(element(i));
  items_ = std::move(items);
  numbers_.clear();
  numbers_.shrink_to_fit();
  dims_.clear();
  packed_ = false;
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
    case Type::kString:
      return "\"" + message_text(v.as_string()) + "\"";
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

using Json = nlohmann::json;

// An input iterator over the text that tells the reader how far nlohmann's
// lexer has read: the SAX events carry no positions, and messages need them.
class Cursor {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  Cursor(const char* p, const char** read_up_to) : p_(p), read_up_to_(read_up_to) {}
  reference operator*() const { return *p_; }
  Cursor& operator++() {
    *read_up_to_ = ++p_;
    return *this;
  }
  Cursor operator++(int) {
    Cursor old = *this;
    ++*this;
    return old;
  }
  bool operator==(const Cursor& o) const { return p_ == o.p_; }
  bool operator!=(const Cursor& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  const char** read_up_to_;
};

bool is_number_char(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// Builds the document tree from nlohmann's SAX events, and turns its parse
// errors into attn's messages: nlohmann says whether the text is JSON; the
// wording (and the hints for NaN, comments, trailing commas, quotes) is ours,
// found by looking at the text around the place nlohmann stopped.
class Reader final : public nlohmann::json_sax<Json> {
 public:
  Reader(std::string_view text, std::string_view source, const Limits& limits,
         const MemberSink* sink)
      : text_(text), source_(source), limits_(limits), sink_(sink), read_up_to_(text.data()) {}

  Value run() {
    if (text_.size() >= 2 && (std::memcmp(text_.data(), "\xFF\xFE", 2) == 0 ||
                              std::memcmp(text_.data(), "\xFE\xFF", 2) == 0)) {
      fail(0,
           "the file is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8");
    }
    size_t start = text_.size() >= 3 && std::memcmp(text_.data(), "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (start < text_.size() && is_space(text_[start])) ++start;
    if (start == text_.size()) fail(start, "empty document; expected a JSON value");
    Cursor first(text_.data(), &read_up_to_);
    Cursor last(text_.data() + text_.size(), &read_up_to_);
    Json::sax_parse(first, last, this);
    // nlohmann takes a NUL byte for the end of the input: bytes after a
    // complete document would go unread.
    if (const size_t nul = text_.find('\0'); nul != std::string_view::npos) {
      fail(nul, "byte 0x00 after the end of the document; JSON text holds no NUL bytes");
    }
    return std::move(root_);
  }

  bool null() override { return add(Value::null()); }
  bool boolean(bool b) override { return add(Value::boolean(b)); }
  bool number_integer(number_integer_t v) override { return add_number(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return add_number(static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t&) override {
    if (limits_.integers_only) {
      const size_t at = number_begin();
      size_t end = at;
      while (end < text_.size() && is_number_char(text_[end])) ++end;
      fail(at, "expected an integer, got " + std::string(text_.substr(at, end - at)));
    }
    return add_number(v);
  }
  bool string(string_t& s) override {
    check_string(s);
    return add(Value::string(std::move(s)));
  }
  bool binary(binary_t&) override { return true; }  // not produced by the JSON lexer

  bool start_object(std::size_t) override {
    enter();
    const bool sinks = sink_ && at_sink_path();
    stack_.push_back(Frame{Value::object(), {}, {}});
    stack_.back().sinks = sinks;
    return true;
  }
  bool key(string_t& k) override {
    check_string(k);
    Frame& f = stack_.back();
    if (f.sinks) {
      f.key_at = opening_quote(consumed() - 1);  // the sink tells of a duplicate later
    } else if (!f.keys.insert(k).second) {
      fail(opening_quote(consumed() - 1), "duplicate key \"" + message_text(k) + "\"");
    }
    f.key = std::move(k);
    return true;
  }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override {
    enter();
    stack_.push_back(Frame{Value::array(), {}, {}});
    return true;
  }
  bool end_array() override { return leave(); }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    diagnose(position, ex);
  }

 private:
  struct Frame {
    Value value;
    std::string key;                       // the member being read, in an object
    std::unordered_set<std::string> keys;  // an object's keys so far
    bool sinks = false;                    // the object whose members go to the sink
    size_t key_at = 0;                     // there: where the member's key begins
  };

  // Whether an object starting now is the one at sink_->path.
  bool at_sink_path() const {
    if (stack_.size() != sink_->path.size()) return false;
    for (size_t i = 0; i < stack_.size(); ++i) {
      if (!stack_[i].value.is_object() || stack_[i].key != sink_->path[i]) return false;
    }
    return true;
  }

  static bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

  size_t consumed() const { return static_cast<size_t>(read_up_to_ - text_.data()); }

  [[noreturn]] void fail(size_t offset, const std::string& what) const {
    auto [line, col] = line_column(text_, offset);
    std::string place(source_);
    place += ':' + std::to_string(line) + ':' + std::to_string(col);
    throw_input(place, what);
  }

  void enter() {
    if (static_cast<int>(stack_.size()) >= limits_.max_depth) {
      fail(consumed() - 1, "nesting deeper than " + std::to_string(limits_.max_depth) + " levels");
    }
  }

  bool leave() {
    Value v = std::move(stack_.back().value);
    stack_.pop_back();
    return add(std::move(v));
  }

  void check_string(const std::string& s) const {
    if (s.size() > limits_.max_string_bytes) {
      fail(opening_quote(consumed() - 1), "a string of " + std::to_string(s.size()) +
                                              " bytes; strings are limited to " +
                                              std::to_string(limits_.max_string_bytes) + " bytes");
    }
  }

  bool add_number(double x) {
    if (++numbers_ > limits_.max_numbers) {
      fail(number_begin(), "more than " + std::to_string(limits_.max_numbers) +
                               " numbers in one document; use .npy or safetensors for big tensors");
    }
    // -0 reaches us as the integer 0: keep its sign, as the text has it.
    if (x == 0 && negative_zero()) x = -0.0;
    return add(Value::number(x));
  }

  // Where the number just read begins. The lexer has read one character
  // past the number, unless the text ends there.
  size_t number_begin() const {
    size_t end = consumed();
    if (end > 0 && !is_number_char(text_[end - 1])) --end;
    while (end > 0 && is_number_char(text_[end - 1])) --end;
    return end;
  }

  // Whether the integer just read was written with a minus sign.
  bool negative_zero() const {
    const size_t begin = number_begin();
    return begin < text_.size() && text_[begin] == '-';
  }

  bool add(Value v) {
    if (!stack_.empty() && stack_.back().sinks) {
      Frame& f = stack_.back();
      if (!sink_->take(f.key, v)) fail(f.key_at, "duplicate key \"" + message_text(f.key) + "\"");
      return true;
    }
    if (!v.is_number() && !v.is_array()) count_nodes(1);
    if (stack_.empty()) {
      root_ = std::move(v);
      return true;
    }
    Frame& f = stack_.back();
    if (f.value.is_object()) {
      f.value.add_member(std::move(f.key), std::move(v));
      return true;
    }
    // An array about to unpack turns each of its elements into a node.
    const size_t before = f.value.packed() ? 0 : f.value.size();
    f.value.push(std::move(v));
    count_nodes(f.value.packed() ? 0 : static_cast<int64_t>(f.value.size() - before));
    return true;
  }

  void count_nodes(int64_t n) {
    nodes_ += n;
    if (nodes_ > limits_.max_nodes) {
      fail(consumed() - 1, "more than " + std::to_string(limits_.max_nodes) +
                               " values outside arrays of numbers in one document");
    }
  }

  // The opening quote of the string whose closing quote is at `close`: the
  // nearest quote before it that no backslash escapes.
  size_t opening_quote(size_t close) const {
    size_t i = close;
    while (i > 0) {
      --i;
      if (text_[i] != '"') continue;
      size_t slashes = 0;
      while (i > slashes && text_[i - slashes - 1] == '\\') ++slashes;
      if (slashes % 2 == 0) return i;
    }
    return 0;
  }

  size_t previous_non_space(size_t i) const {
    while (i > 0 && is_space(text_[i - 1])) --i;
    return i == 0 ? std::string_view::npos : i - 1;
  }

  // A description of what stands at offset i, for "expected X, got Y".
  std::string token_at(size_t i) const {
    if (i >= text_.size()) return "end of input";
    unsigned char c = static_cast<unsigned char>(text_[i]);
    if (c >= 0x20 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
    if (c == '\n') return "end of line";
    if (c == '\t') return "a tab";
    if (c >= 0x80) {
      const auto* p = reinterpret_cast<const unsigned char*>(text_.data() + i);
      const size_t n = utf8_sequence_length(p, reinterpret_cast<const unsigned char*>(text_.end()));
      if (n > 1) return "'" + std::string(text_.substr(i, n)) + "'";
    }
    std::string s;
    append_hex_byte(s, "byte 0x", c);
    return s;
  }

  bool starts_with(size_t i, std::string_view word) const {
    return text_.substr(i, word.size()) == word;
  }

  // A value was expected at offset i and something else stands there.
  [[noreturn]] void bad_value(size_t i) const {
    for (std::string_view w : {"NaN", "nan", "-NaN", "-nan"}) {
      if (starts_with(i, w)) {
        fail(i, "'" + std::string(w) +
                    "' is not valid JSON; write the string \"nan\" where a non-finite value "
                    "is meant");
      }
    }
    for (std::string_view w : {"Infinity", "-Infinity", "inf", "-inf", "+Infinity"}) {
      if (starts_with(i, w)) {
        fail(i, "'" + std::string(w) +
                    "' is not valid JSON; write the string \"inf\" or \"-inf\" where an "
                    "infinite value is meant");
      }
    }
    const char c = i < text_.size() ? text_[i] : '\0';
    if (c == '\'') fail(i, "strings must be in double quotes, not single quotes");
    if (c == '+') fail(i, "invalid number: a leading '+' is not allowed");
    if (c == '.') fail(i, "invalid number: write a digit before '.' (0.5, not .5)");
    if (i < text_.size() && is_alpha(c)) {
      size_t j = i;
      while (j < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[j])) || text_[j] == '_')) {
        ++j;
      }
      fail(i, "expected a value, got '" + message_text(text_.substr(i, j - i)) +
                  "' (strings need double quotes; literals are true, false, null)");
    }
    fail(i, "expected a value, got " + token_at(i));
  }

  // Where the token nlohmann could not use begins, given the last character
  // it read (e) and its description of that token.
  size_t token_start(size_t e, const std::string& got) const {
    if (got.rfind("number literal", 0) == 0) {
      size_t t = e;
      while (t > 0 && is_number_char(text_[t - 1])) --t;
      return t;
    }
    if (got.rfind("string literal", 0) == 0) return opening_quote(e);
    for (std::string_view w : {"true", "false", "null"}) {
      if (got.rfind(std::string(w) + " literal", 0) == 0) return e + 1 - w.size();
    }
    return e;
  }

  // Start of the literal nlohmann gave up on at e: a partial true, false or
  // null it was reading (nan, tru), or the character at e.
  size_t literal_start(size_t e) const {
    size_t t = e;
    if (e < text_.size() && is_alpha(text_[e])) {
      while (t > 0 && is_alpha(text_[t - 1])) --t;
      return t;
    }
    while (t > 0 && is_alpha(text_[t - 1])) --t;
    const std::string_view run = text_.substr(t, e - t);
    for (std::string_view w : {"true", "false", "null"}) {
      if (!run.empty() && run.size() < w.size() && w.substr(0, run.size()) == run) return t;
    }
    return e;
  }

  [[noreturn]] void end_of_input(const std::string& context) const {
    const size_t end = text_.size();
    const size_t last = previous_non_space(end);
    const char before = last == std::string_view::npos ? '\0' : text_[last];
    const bool in_object = !stack_.empty() && stack_.back().value.is_object();
    if (context == "object separator") {
      fail(end, "expected ':' after the key \"" + message_text(stack_.back().key) +
                    "\", got end of input");
    }
    if (in_object) {
      if (before == ':') {
        fail(end, "unexpected end of input; expected a value for \"" +
                      message_text(stack_.back().key) + "\"");
      }
      if (before == '{')
        fail(end, "unexpected end of input inside an object; expected a key or '}'");
      if (before == ',') fail(end, "unexpected end of input inside an object; expected a key");
      fail(end, "unexpected end of input inside an object; expected ',' or '}'");
    }
    if (before == '[')
      fail(end, "unexpected end of input inside an array; expected a value or ']'");
    if (before == ',') fail(end, "unexpected end of input inside an array; expected a value");
    fail(end, "unexpected end of input inside an array; expected ',' or ']'");
  }

  // Something other than what the grammar allows stands at t.
  [[noreturn]] void unexpected(size_t t, const std::string& context, bool after_document) const {
    const char c = text_[t];
    if (c == ']' || c == '}') {
      const size_t prev = previous_non_space(t);
      if (prev != std::string_view::npos && text_[prev] == ',') {
        fail(prev, std::string("trailing comma before '") + c + "'");
      }
    }
    // nlohmann reads 01 as the numbers 0 and 1 side by side.
    const size_t zero = c == '-' ? t + 1 : t;
    if (zero + 1 < text_.size() && text_[zero] == '0' &&
        std::isdigit(static_cast<unsigned char>(text_[zero + 1]))) {
      fail(t, "invalid number: leading zeros are not allowed");
    }
    if (after_document) fail(t, "unexpected " + token_at(t) + " after the end of the document");
    if (context == "object key") {
      if (c == '\'') fail(t, "keys must be in double quotes, not single quotes");
      fail(t, "expected a key in double quotes, got " + token_at(t));
    }
    if (context == "object separator") {
      fail(t, "expected ':' after the key \"" + message_text(stack_.back().key) + "\", got " +
                  token_at(t));
    }
    if (context == "array")
      fail(t, "expected ',' or ']' after an array element, got " + token_at(t));
    if (context == "object")
      fail(t, "expected ',' or '}' after an object member, got " + token_at(t));
    bad_value(t);
  }

  [[noreturn]] void bad_string(size_t e, bool eof, const std::string& what) const {
    if (eof) {
      size_t slashes = 0;
      while (slashes < text_.size() && text_[text_.size() - 1 - slashes] == '\\') ++slashes;
      if (slashes % 2 == 1) fail(text_.size(), "unexpected end of input inside a string escape");
      fail(text_.size(), "unexpected end of input inside a string; missing '\"'");
    }
    if (what.find("U+000A") != std::string::npos) {
      fail(e, "end of line inside a string; missing '\"' or write \\n");
    }
    if (what.find("control character") != std::string::npos) {
      fail(e, "control character in a string; escape it (e.g. \\t, \\u0001)");
    }
    if (what.find("after backslash") != std::string::npos) {
      fail(e - 1, "invalid escape '\\" + message_text(text_.substr(e, 1)) + "' in a string");
    }
    if (what.find("4 hex digits") != std::string::npos) {
      fail(e, "invalid \\u escape: expected 4 hex digits");
    }
    if (what.find("must follow") != std::string::npos) {
      fail(e >= 5 ? e - 5 : 0, "invalid \\u escape: unpaired low surrogate");
    }
    if (what.find("must be followed by") != std::string::npos) {
      size_t i = e;
      while (i > 0 && !(text_[i] == '\\' && i + 2 < text_.size() && text_[i + 1] == 'u' &&
                        (text_[i + 2] == 'd' || text_[i + 2] == 'D'))) {
        --i;
      }
      fail(i, "invalid \\u escape: a high surrogate must be followed by a low one");
    }
    // Ill-formed UTF-8: point at the first byte of the broken sequence.
    size_t t = e;
    for (size_t back = 1; back <= 3 && back <= e; ++back) {
      const auto b = static_cast<unsigned char>(text_[e - back]);
      if (b >= 0xC0) {
        t = e - back;
        break;
      }
      if ((b & 0xC0) != 0x80) break;
    }
    fail(t, "invalid UTF-8 in a string");
  }

  [[noreturn]] void diagnose(size_t position, const nlohmann::detail::exception& ex) const {
    const bool eof = position > text_.size();
    const size_t e = eof ? text_.size() : (position == 0 ? 0 : position - 1);
    const std::string what = ex.what();
    if (ex.id == 406) {  // a number past the double range
      size_t t = e;
      while (t > 0 && is_number_char(text_[t - 1])) --t;
      fail(t, "number out of the double range: " + message_text(text_.substr(t, e + 1 - t)));
    }
    if (!eof && text_[e] == '/' && e + 1 < text_.size() &&
        (text_[e + 1] == '/' || text_[e + 1] == '*')) {
      fail(e, "comments are not allowed in JSON");
    }
    // "... while parsing <context> - <problem>; expected ..."
    std::string context;
    const size_t at = what.find("while parsing ");
    const size_t dash = what.find(" - ", at);
    if (at != std::string::npos && dash != std::string::npos) {
      context = what.substr(at + 14, dash - at - 14);
    }
    const std::string problem = dash == std::string::npos ? what : what.substr(dash + 3);
    const bool after_document = what.find("; expected end of input") != std::string::npos;
    if (problem.rfind("invalid string", 0) == 0) bad_string(e, eof, problem);
    if (problem.rfind("invalid number", 0) == 0) {
      if (problem.find("after '-'") != std::string::npos) {
        if (!eof && std::strchr("IiNn", text_[e]) != nullptr && e > 0) bad_value(e - 1);
        fail(e, "invalid number: expected a digit after '-'");
      }
      if (problem.find("after '.'") != std::string::npos) {
        fail(e, "invalid number: expected a digit after '.'");
      }
      fail(e, "invalid number: expected a digit in the exponent");
    }
    if (!eof && problem.rfind("unexpected end of input", 0) == 0) {
      // nlohmann takes a NUL byte for the end of the input.
      const size_t nul = text_.find('\0');
      const size_t at = nul == std::string_view::npos ? e : nul;
      if (context == "value") bad_value(at);
      unexpected(at, context, after_document);
    }
    if (problem.rfind("unexpected end of input", 0) == 0 || eof) end_of_input(context);
    if (problem.rfind("invalid literal", 0) == 0) {
      const size_t t = literal_start(e);
      if (t == e || context != "value") unexpected(t, context, after_document);
      bad_value(t);
    }
    if (problem.rfind("unexpected ", 0) == 0) {
      const std::string got = problem.substr(11);
      unexpected(token_start(e, got), context, after_document);
    }
    fail(e, "invalid JSON");
  }

  std::string_view text_;
  std::string_view source_;
  const Limits& limits_;
  const MemberSink* sink_;
  const char* read_up_to_;
  std::vector<Frame> stack_;
  Value root_;
  int64_t nodes_ = 0;
  int64_t numbers_ = 0;
};

}  // namespace

Value parse(std::string_view text, std::string_view source, const Limits& limits) {
  Reader reader(text, source, limits, nullptr);
  return reader.run();
}

Value parse(std::string_view text, std::string_view source, const Limits& limits,
            const MemberSink& sink) {
  Reader reader(text, source, limits, &sink);
  return reader.run();
}

}  // namespace attn::json
