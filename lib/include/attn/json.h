// JSON reading: a strict RFC 8259 parser (UTF-8, optional leading BOM, nesting
// at most 64 deep) into a small DOM. Arrays whose elements are all numbers are
// stored packed as doubles, so large matrices parse fast and cheaply. Syntax
// errors say "source:line:column: what", with hints for the usual mistakes
// (NaN, comments, trailing commas, single quotes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::json {

enum class Type : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };

struct Member;

class Value {
 public:
  Value() = default;
  static Value null(size_t offset);
  static Value boolean(bool b, size_t offset);
  static Value number(double v, size_t offset);
  static Value string(std::string s, size_t offset);
  static Value array(size_t offset);
  static Value object(size_t offset);

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_bool() const { return type_ == Type::kBool; }
  bool is_number() const { return type_ == Type::kNumber; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }

  bool as_bool() const { return bool_; }
  double as_number() const { return number_; }
  const std::string& as_string() const { return string_; }

  // Arrays. A packed array holds only numbers, in numbers(); otherwise the
  // elements are in items(). size() works for both (and for objects).
  bool packed() const { return packed_; }
  size_t size() const;
  const std::vector<double>& numbers() const { return numbers_; }
  const std::vector<Value>& items() const { return items_; }
  // Element i of an array as a Value (a packed element is materialized).
  Value element(size_t i) const;

  // Objects keep their members in document order; keys are unique.
  const std::vector<Member>& members() const { return members_; }
  const Value* find(std::string_view key) const;

  // Byte offset of the value's first character in the source text.
  size_t offset() const { return offset_; }

  // Builders used by the parser (and by tests).
  void push_number(double v);
  void push(Value v);
  void add_member(std::string key, Value v);

 private:
  Type type_ = Type::kNull;
  bool packed_ = false;
  bool bool_ = false;
  double number_ = 0;
  size_t offset_ = 0;
  std::string string_;
  std::vector<double> numbers_;
  std::vector<Value> items_;
  std::vector<Member> members_;
};

struct Member {
  std::string key;
  Value value;
};

// A short description of a value for messages: `"abc"`, `true`, `null`,
// `an array`, `an object`, `12.5`.
std::string describe(const Value& v);

// Name of a type with its article: "a number", "an array", ...
std::string type_name(Type t);

constexpr int kMaxDepth = 64;

// Parses a whole document. `source` names the text in error messages (a path,
// or "<stdin>"). Throws attn::Error (kInput) "source:line:col: what".
Value parse(std::string_view text, std::string_view source);

// 1-based line and column (in characters) of a byte offset in text.
std::pair<int64_t, int64_t> line_column(std::string_view text, size_t offset);

}  // namespace attn::json
