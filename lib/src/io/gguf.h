// GGUF files, the format of llama.cpp, Ollama and LM Studio: "GGUF", a
// version (2 or 3), the counts of tensors and metadata keys, the metadata
// (typed values: integers, floats, bools, strings and arrays of them, arrays
// nested too), each tensor's name, shape, ggml type and offset, then the
// tensors' bytes in a data section aligned to general.alignment (32 by
// default). Everything little endian. The file is memory-mapped: opening a
// multi-GB model reads its header, and reading a tensor reads its pages.
//
// The header is parsed as hostile input (docs/errors.md): every count and
// length is checked against the bytes left before anything is allocated,
// strings, arrays and their nesting have limits (below), and each tensor's
// shape, type, offset and bytes are checked against the file and the other
// tensors before any is read. A failure is attn::Error (kInput) naming the
// file and the key or tensor; a file that cannot be opened is kFile.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "attn/binary_array.h"
#include "attn/file_io.h"
#include "attn/json_tensor.h"
#include "attn/tensor.h"

namespace attn {

// A string (a key, a value, a tensor's name) of at most 16 MiB; an array
// of at most 2^24 elements (a vocabulary is a few hundred thousand); arrays
// nested at most 8 deep.
constexpr uint64_t kGgufMaxStringBytes = uint64_t{1} << 24;
constexpr uint64_t kGgufMaxArrayElements = uint64_t{1} << 24;
constexpr int kGgufMaxArrayDepth = 8;

// One metadata value. The accessors of another type's value throw an input
// error naming the file and the key ("m.gguf: llama.block_count: expected
// an integer, got a string").
class GgufValue {
 public:
  enum class Type : uint32_t {
    kU8 = 0,
    kI8,
    kU16,
    kI16,
    kU32,
    kI32,
    kF32,
    kBool,
    kString,
    kArray,
    kU64,
    kI64,
    kF64
  };

  Type type() const { return type_; }
  bool is_integer() const;  // u8 to i64 (not bool)
  bool is_float() const;    // f32, f64
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  // An integer (a u64 past int64 is refused when the file is read).
  int64_t as_int() const;
  // An integer or a float, as a double.
  double as_number() const;
  bool as_bool() const;
  const std::string& as_string() const;
  // An array's elements: their type, how many, and one of them (for nested
  // arrays, or any element).
  Type element_type() const;
  size_t size() const;
  const GgufValue& at(size_t i) const;
  // An array of strings (a vocabulary), or of numbers (integers, floats or
  // bools, as doubles: scores, token types).
  const std::vector<std::string>& strings() const;
  const std::vector<double>& numbers() const;

  // "llama.block_count", "tokenizer.ggml.tokens[3]": where the value is,
  // as messages name it (with the file).
  std::string place() const;
  // "a u32", "a string", "an array of 3 f32", for messages.
  std::string describe() const;

 private:
  friend class GgufParser;
  struct Elements;  // an array's elements as values, made when first asked for

  [[noreturn]] void wrong(const char* expected) const;
  void need_array() const;

  Type type_ = Type::kU8;
  Type element_type_ = Type::kU8;  // arrays
  int64_t int_ = 0;                // integers and bools
  double number_ = 0;              // integers, floats and bools
  std::string string_;
  std::vector<std::string> strings_;    // an array of strings
  std::vector<double> numbers_;         // an array of numbers or bools
  std::vector<int64_t> ints_;           // an array of integers or bools, exactly
  std::vector<GgufValue> arrays_;       // an array of arrays
  std::shared_ptr<Elements> elements_;  // the elements of a flat array, for at()
  std::shared_ptr<const std::string> file_;
  std::string key_;
};

struct GgufTensor {
  std::string name;
  ElementType type = ElementType::kF32;
  // attn's order, outermost first: ggml's ne reversed ([out][in] for a
  // matmul weight); its last axis (ggml's rows) is whole blocks of `type`.
  Shape shape;
  uint64_t offset = 0;  // from the start of the data section
  uint64_t bytes = 0;
};

// Whether `path` names a GGUF file: a name ending in .gguf, or a regular
// file that starts with the magic "GGUF" (Ollama's blobs have no
// extension). Never opens anything but a regular file.
bool is_gguf_file(const std::string& path);

class GgufFile {
 public:
  // Maps `path` ("-" reads stdin whole, within max_stream_bytes) and parses
  // its header.
  static GgufFile open(const std::string& path, int64_t max_stream_bytes = kDefaultMaxInputBytes);
  // The same from bytes at hand (tests, fuzzing); `name` names them.
  static GgufFile parse(FileBytes bytes, const std::string& name);

  uint32_t version() const { return version_; }
  const std::string& name() const { return name_; }  // the path as opened, for messages
  uint64_t alignment() const { return alignment_; }
  // Where the data section starts in the file (0 when there are no tensors).
  uint64_t data_offset() const { return data_offset_; }

  // In file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* find(std::string_view key) const;
  // The value of `key`, or an input error naming the file and the key.
  const GgufValue& get(std::string_view key) const;

  // In file order.
  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* find_tensor(const std::string& name) const;
  // The tensor called `name`, or an input error naming it, the nearest
  // name and how many tensors there are.
  const GgufTensor& tensor(const std::string& name) const;

  // The tensor's cells (blocks) where they lie in the mapping.
  BinaryArray view(const GgufTensor& t) const;
  // Its cells as doubles, dequantized as ggml does and widened, each
  // checked as `kind` says; its bytes may be at most max_bytes and its
  // cells at most max_elements, both checked first.
  Tensor<double> read(const GgufTensor& t, CellKind kind, int64_t max_bytes = kDefaultMaxInputBytes,
                      int64_t max_elements = kDefaultMaxElements) const;

 private:
  friend class GgufParser;

  FileBytes bytes_;
  std::string name_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<GgufTensor> tensors_;
  std::unordered_map<std::string, size_t> keys_, tensor_names_;
};

// "u32", "str", "arr": GGUF's own names of its value types.
const char* gguf_type_name(GgufValue::Type t);

}  // namespace attn
