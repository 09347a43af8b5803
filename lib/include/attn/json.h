// JSON reading: nlohmann_json's strict RFC 8259 SAX parser (UTF-8, optional
// leading BOM) feeding a small document tree. Arrays of numbers, and arrays
// of such arrays with one shape, are stored packed: one flat buffer of
// doubles and a shape, so a matrix costs its numbers and nothing per row.
// Everything else (objects, strings, mixed or ragged arrays) is a tree node.
// Reading is bounded while it runs: nesting depth, tree nodes, numbers and
// string length each have a limit checked before the memory is taken.
// Syntax errors say "source:line:column: what", with hints for the usual
// mistakes (NaN, comments, trailing commas, single quotes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
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
  static Value null();
  static Value boolean(bool b);
  static Value number(double v);
  static Value string(std::string s);
  static Value array();  // an empty packed array
  static Value object();

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

  // Arrays. A packed array holds only numbers, row-major in numbers(), with
  // its shape in dims() (rank 1 for a list of numbers, rank 2 for a list of
  // equal-length lists of numbers, ...). Otherwise the elements are in
  // items(). size() is the length of the outermost axis (members for objects).
  bool packed() const { return packed_; }
  size_t size() const;
  const std::vector<double>& numbers() const { return numbers_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  const std::vector<Value>& items() const { return items_; }
  // Element i of an array as a Value (a packed element is copied out).
  Value element(size_t i) const;

  // Objects keep their members in document order; keys are unique.
  const std::vector<Member>& members() const { return members_; }
  const Value* find(std::string_view key) const;

  // Builders used by the reader (and by tests). push() keeps an array packed
  // while its elements allow it and unpacks it into items() when not.
  void push(Value v);
  void add_member(std::string key, Value v);

 private:
  void unpack();

  Type type_ = Type::kNull;
  bool packed_ = false;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<int64_t> dims_;
  std::vector<double> numbers_;
  std::vector<Value> items_;
  std::vector<Member> members_;
};

struct Member {
  std::string key;
  Value value;
};

// A short description of a value for messages: `"abc"`, `true`, `null`,
// `an array`, `an object`, `12.5`. Strings are shortened by message_text().
std::string describe(const Value& v);

// Name of a type with its article: "a number", "an array", ...
std::string type_name(Type t);

// The longest string or key a document may hold, in bytes. attn writes no
// longer string into a result (titles and labels are checked against it),
// so every result it writes can be read back, as JSON or as an .npz.
constexpr size_t kMaxStringBytes = size_t{1} << 20;

// What one document may hold. The defaults suit every input attn reads;
// tensor sizes are checked again, against --max-elements, when a problem is
// built from the document.
struct Limits {
  int max_depth = 64;
  int64_t max_nodes = int64_t{1} << 20;       // objects, strings and unpacked array elements
  int64_t max_numbers = int64_t{1} << 28;     // numbers in packed arrays, over the document
  size_t max_string_bytes = kMaxStringBytes;  // one string or key
  bool integers_only = false;  // a number with a fraction or exponent is an error (safetensors)
};
constexpr int kMaxDepth = 64;

// Parses a whole document. `source` names the text in error messages (a path,
// or "<stdin>"). Throws attn::Error (kInput) "source:line:col: what".
Value parse(std::string_view text, std::string_view source, const Limits& limits = Limits());

// The members of one object, handed over as the parser meets them instead
// of kept in the tree: for an object of millions of members (a tokenizer's
// vocabulary) that its reader stores its own way, counting and checking
// each as it comes, so that a document with too many is refused before it
// is read whole.
struct MemberSink {
  std::vector<std::string> path;  // the object's keys from the root: {"model", "vocab"}
  // Takes one member; false when it has that key already (a duplicate key,
  // reported as the parser reports one). May throw attn::Error to stop.
  std::function<bool(const std::string& key, const Value& value)> take;
};

// As parse, with the members of the object at sink.path given to
// sink.take; that object is empty in the tree.
Value parse(std::string_view text, std::string_view source, const Limits& limits,
            const MemberSink& sink);

// 1-based line and column (in characters) of a byte offset in text.
std::pair<int64_t, int64_t> line_column(std::string_view text, size_t offset);

}  // namespace attn::json
