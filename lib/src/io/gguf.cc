#include "io/gguf.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>

#include "attn/error.h"
#include "base/names.h"
#include "base/path.h"
#include "io/cells.h"
#include "io/element_types.h"

namespace attn {

namespace {

using Type = GgufValue::Type;

constexpr uint32_t kLastType = static_cast<uint32_t>(Type::kF64);

// Bytes of a value of a fixed-size type; 0 for strings and arrays.
uint64_t fixed_size(Type t) {
  switch (t) {
    case Type::kU8:
    case Type::kI8:
    case Type::kBool:
      return 1;
    case Type::kU16:
    case Type::kI16:
      return 2;
    case Type::kU32:
    case Type::kI32:
    case Type::kF32:
      return 4;
    case Type::kU64:
    case Type::kI64:
    case Type::kF64:
      return 8;
    case Type::kString:
    case Type::kArray:
      break;
  }
  return 0;
}

bool integer_type(Type t) {
  return t == Type::kU8 || t == Type::kI8 || t == Type::kU16 || t == Type::kI16 ||
         t == Type::kU32 || t == Type::kI32 || t == Type::kU64 || t == Type::kI64;
}

bool float_type(Type t) { return t == Type::kF32 || t == Type::kF64; }

std::string quoted(std::string_view s) { return "\"" + message_text(s) + "\""; }

// "a u32", "an i8", "an f32", "a bool": as the names are read aloud.
std::string with_article(const char* name) {
  return std::string(name[0] == 'i' || name[0] == 'f' ? "an " : "a ") + name;
}

// The types attn reads, for the message that refuses another.
std::string readable_types() {
  return "F32, F16, BF16, F64, I8, I16, I32, I64, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, "
         "Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS";
}

}  // namespace

const char* gguf_type_name(Type t) {
  static const char* const names[] = {"u8",   "i8",  "u16", "i16", "u32", "i32", "f32",
                                      "bool", "str", "arr", "u64", "i64", "f64"};
  const auto i = static_cast<uint32_t>(t);
  return i <= kLastType ? names[i] : "?";
}

// --- values -----------------------------------------------------------------

struct GgufValue::Elements {
  std::once_flag once;
  std::vector<GgufValue> values;
};

bool GgufValue::is_integer() const { return integer_type(type_); }
bool GgufValue::is_float() const { return float_type(type_); }

std::string GgufValue::place() const { return (file_ ? *file_ + ": " : std::string()) + key_; }

std::string GgufValue::describe() const {
  if (type_ == Type::kString) return "a string";
  if (type_ != Type::kArray) return with_article(gguf_type_name(type_));
  return "an array of " + std::to_string(size()) + " " +
         (element_type_ == Type::kString  ? std::string("strings")
          : element_type_ == Type::kArray ? std::string("arrays")
                                          : std::string(gguf_type_name(element_type_)));
}

void GgufValue::wrong(const char* expected) const {
  throw_input(place(), std::string("expected ") + expected + ", got " + describe());
}

void GgufValue::need_array() const {
  if (type_ != Type::kArray) wrong("an array");
}

int64_t GgufValue::as_int() const {
  if (!is_integer()) wrong("an integer");
  return int_;
}

double GgufValue::as_number() const {
  if (!is_integer() && !is_float()) wrong("a number");
  return number_;
}

bool GgufValue::as_bool() const {
  if (type_ != Type::kBool) wrong("a bool");
  return int_ != 0;
}

const std::string& GgufValue::as_string() const {
  if (type_ != Type::kString) wrong("a string");
  return string_;
}

GgufValue::Type GgufValue::element_type() const {
  need_array();
  return element_type_;
}

size_t GgufValue::size() const {
  need_array();
  switch (element_type_) {
    case Type::kString:
      return strings_.size();
    case Type::kArray:
      return arrays_.size();
    default:
      return numbers_.size();
  }
}

const GgufValue& GgufValue::at(size_t i) const {
  const size_t n = size();
  if (i >= n) {
    throw_input(place(),
                "no element " + std::to_string(i) + ": the array has " + std::to_string(n));
  }
  if (element_type_ == Type::kArray) return arrays_[i];
  // A flat array keeps its elements as strings or numbers; values of them
  // are made once, when first asked for (a vocabulary is read through
  // strings(), never element by element).
  std::call_once(elements_->once, [&] {
    elements_->values.resize(n);
    for (size_t k = 0; k < n; ++k) {
      GgufValue& v = elements_->values[k];
      v.type_ = element_type_;
      v.file_ = file_;
      v.key_ = key_ + "[" + std::to_string(k) + "]";
      if (element_type_ == Type::kString) {
        v.string_ = strings_[k];
      } else {
        v.number_ = numbers_[k];
        if (!ints_.empty()) v.int_ = ints_[k];
      }
    }
  });
  return elements_->values[i];
}

const std::vector<std::string>& GgufValue::strings() const {
  if (type_ != Type::kArray || element_type_ != Type::kString) wrong("an array of strings");
  return strings_;
}

const std::vector<double>& GgufValue::numbers() const {
  if (type_ != Type::kArray || element_type_ == Type::kString || element_type_ == Type::kArray) {
    wrong("an array of numbers");
  }
  return numbers_;
}

// --- the parser ---------------------------------------------------------------

// Reads the header front to back. Every read first checks that its bytes
// are there, and every count or length is checked against the bytes left
// before anything is sized by it: a hostile header can make attn allocate
// no more than a few times the file's own size, and never read past it.
class GgufParser {
 public:
  explicit GgufParser(GgufFile& f) : f_(f), file_(std::make_shared<const std::string>(f.name_)) {
    const std::string_view all = f.bytes_.view();
    p_ = reinterpret_cast<const unsigned char*>(all.data());
    size_ = all.size();
  }

  void parse() {
    header();
    for (uint64_t i = 0; i < n_kv_; ++i) key_value(i);
    alignment();
    for (uint64_t i = 0; i < n_tensors_; ++i) tensor_info(i);
    tensor_data();
  }

 private:
  uint64_t left() const { return size_ - pos_; }

  // "m.gguf: KEY" for messages; the file alone for the header's fields.
  std::string where(const std::string& place) const {
    return place.empty() ? f_.name_ : at(f_.name_, place);
  }

  // Throws unless n more bytes are there; `place` and `what` name them.
  void need(uint64_t n, const std::string& place, const std::string& what) const {
    if (n <= left()) return;
    throw_input(where(place), "truncated: " + what + " needs " + std::to_string(n) +
                                  " bytes at byte " + std::to_string(pos_) +
                                  ", but the file ends at byte " + std::to_string(size_));
  }

  uint64_t le(int bytes, const std::string& place, const std::string& what) {
    need(static_cast<uint64_t>(bytes), place, what);
    const uint64_t v = detail::load_le(p_ + pos_, static_cast<size_t>(bytes));
    pos_ += static_cast<uint64_t>(bytes);
    return v;
  }
  uint32_t u32(const std::string& place, const std::string& what) {
    return static_cast<uint32_t>(le(4, place, what));
  }
  uint64_t u64(const std::string& place, const std::string& what) { return le(8, place, what); }

  std::string string(const std::string& place, const std::string& what) {
    const uint64_t n = u64(place, "the length of " + what);
    if (n > kGgufMaxStringBytes) {
      throw_input(where(place), what + " is " + std::to_string(n) +
                                    " bytes long, more than attn's limit of " +
                                    std::to_string(kGgufMaxStringBytes));
    }
    need(n, place, what);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), static_cast<size_t>(n));
    pos_ += n;
    return s;
  }

  void header() {
    if (size_ < 4 || std::string_view(reinterpret_cast<const char*>(p_), 4) != "GGUF") {
      throw_input(f_.name_, "not a GGUF file: it does not start with \"GGUF\"");
    }
    pos_ = 4;
    const uint32_t version = u32("", "the version");
    // A big-endian file's version 3 reads as 0x03000000 here: ggml's own
    // test, the low 16 bits all zero.
    if ((version & 0xFFFF) == 0 && version != 0) {
      throw_input(f_.name_, "a big-endian GGUF file (its version reads as " +
                                std::to_string(version) + "); attn reads little-endian files only");
    }
    if (version == 1) {
      throw_input(f_.name_,
                  "GGUF version 1, which attn does not read (versions 2 and 3 only); convert the "
                  "model again with a current llama.cpp");
    }
    if (version != 2 && version != 3) {
      throw_input(f_.name_, "GGUF version " + std::to_string(version) +
                                ", which attn does not read (versions 2 and 3 only)");
    }
    f_.version_ = version;
    n_tensors_ = u64("", "the count of tensors");
    n_kv_ = u64("", "the count of metadata keys");
    // The least each takes: a key is a length, a type and a value of one
    // byte (an empty name is refused with its own message); a tensor's
    // info a name's length and one byte, a dimension count, one
    // dimension, a type and an offset.
    constexpr uint64_t kLeastKey = 8 + 4 + 1, kLeastTensor = 8 + 1 + 4 + 8 + 4 + 8;
    if (n_kv_ > left() / kLeastKey) {
      throw_input(f_.name_, "the header counts " + std::to_string(n_kv_) +
                                " metadata keys, more than the " + std::to_string(left()) +
                                " bytes after it can hold");
    }
    if (n_tensors_ > (left() - n_kv_ * kLeastKey) / kLeastTensor) {
      throw_input(f_.name_, "the header counts " + std::to_string(n_tensors_) +
                                " tensors, more than the " + std::to_string(left()) +
                                " bytes after it can hold");
    }
  }

  Type value_type(const std::string& place) {
    const uint32_t t = u32(place, "the value's type");
    if (t > kLastType) {
      throw_input(where(place), "unknown value type " + std::to_string(t) +
                                    " (GGUF's types are 0 to " + std::to_string(kLastType) + ")");
    }
    return static_cast<Type>(t);
  }

  // One number of a fixed-size type into v (its int_ and number_).
  void scalar(Type t, const std::string& place, int64_t& as_int, double& as_number) {
    const uint64_t bits =
        le(static_cast<int>(fixed_size(t)), place, std::string("a ") + gguf_type_name(t));
    switch (t) {
      case Type::kU8:
      case Type::kU16:
      case Type::kU32:
        as_int = static_cast<int64_t>(bits);
        break;
      case Type::kU64:
        if (bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          throw_input(where(place),
                      "the u64 " + std::to_string(bits) + " is larger than attn reads (2^63 - 1)");
        }
        as_int = static_cast<int64_t>(bits);
        break;
      case Type::kI8:
        as_int = static_cast<int8_t>(bits);
        break;
      case Type::kI16:
        as_int = static_cast<int16_t>(bits);
        break;
      case Type::kI32:
        as_int = static_cast<int32_t>(bits);
        break;
      case Type::kI64:
        as_int = static_cast<int64_t>(bits);
        break;
      case Type::kBool:
        if (bits > 1) {
          throw_input(where(place),
                      "a bool holds the byte " + std::to_string(bits) + "; bools are 0 or 1");
        }
        as_int = static_cast<int64_t>(bits);
        break;
      case Type::kF32: {
        const auto b = static_cast<uint32_t>(bits);
        float x = 0;
        std::memcpy(&x, &b, sizeof x);
        as_number = x;
        return;
      }
      case Type::kF64: {
        double x = 0;
        std::memcpy(&x, &bits, sizeof x);
        as_number = x;
        return;
      }
      case Type::kString:
      case Type::kArray:
        throw_internal("GgufParser::scalar of a string or an array");
    }
    as_number = static_cast<double>(as_int);
  }

  GgufValue value(Type t, const std::string& key, int depth) {
    GgufValue v;
    v.type_ = t;
    v.file_ = file_;
    v.key_ = key;
    if (t == Type::kString) {
      v.string_ = string(key, "a string");
    } else if (t == Type::kArray) {
      array(v, depth);
    } else {
      scalar(t, key, v.int_, v.number_);
    }
    return v;
  }

  void array(GgufValue& v, int depth) {
    const std::string& key = v.key_;
    if (depth >= kGgufMaxArrayDepth) {
      throw_input(where(key), "arrays nested more than " + std::to_string(kGgufMaxArrayDepth) +
                                  " deep, attn's limit");
    }
    v.element_type_ = value_type(key);
    const uint64_t n = u64(key, "the array's length");
    if (n > kGgufMaxArrayElements) {
      throw_input(where(key), "an array of " + std::to_string(n) +
                                  " elements, more than attn's limit of " +
                                  std::to_string(kGgufMaxArrayElements));
    }
    // The least an element takes: its bytes, a string's length, an
    // array's type and length.
    const uint64_t least = v.element_type_ == Type::kString  ? 8
                           : v.element_type_ == Type::kArray ? 12
                                                             : fixed_size(v.element_type_);
    if (n > left() / least) {
      throw_input(where(key), "truncated: an array of " + std::to_string(n) + " " +
                                  gguf_type_name(v.element_type_) + " needs at least " +
                                  std::to_string(n * least) + " bytes at byte " +
                                  std::to_string(pos_) + ", but the file ends at byte " +
                                  std::to_string(size_));
    }
    const auto count = static_cast<size_t>(n);
    if (v.element_type_ == Type::kString) {
      v.strings_.reserve(count);
      for (size_t i = 0; i < count; ++i) {
        v.strings_.push_back(string(key + "[" + std::to_string(i) + "]", "a string"));
      }
    } else if (v.element_type_ == Type::kArray) {
      v.arrays_.reserve(count);
      for (size_t i = 0; i < count; ++i) {
        const std::string place = key + "[" + std::to_string(i) + "]";
        GgufValue e;
        e.type_ = Type::kArray;
        e.file_ = file_;
        e.key_ = place;
        array(e, depth + 1);
        v.arrays_.push_back(std::move(e));
      }
    } else {
      v.numbers_.resize(count);
      if (integer_type(v.element_type_) || v.element_type_ == Type::kBool) v.ints_.resize(count);
      for (size_t i = 0; i < count; ++i) {
        int64_t as_int = 0;
        scalar(v.element_type_, key + "[" + std::to_string(i) + "]", as_int, v.numbers_[i]);
        if (!v.ints_.empty()) v.ints_[i] = as_int;
      }
      v.elements_ = std::make_shared<GgufValue::Elements>();
    }
    if (v.element_type_ == Type::kString) v.elements_ = std::make_shared<GgufValue::Elements>();
  }

  void key_value(uint64_t i) {
    const std::string place = "key " + std::to_string(i);
    std::string key = string(place, "the key's name");
    if (key.empty()) throw_input(f_.name_, place + " has an empty name");
    if (f_.keys_.count(key)) throw_input(f_.name_, "key " + quoted(key) + " appears twice");
    const std::string shown = message_text(key);
    const Type t = value_type(shown);
    GgufValue v = value(t, shown, 0);
    f_.keys_.emplace(key, f_.metadata_.size());
    f_.metadata_.emplace_back(std::move(key), std::move(v));
  }

  void alignment() {
    const GgufValue* a = f_.find("general.alignment");
    if (!a) return;
    if (a->type() != Type::kU32) {
      throw_input(at(f_.name_, "general.alignment"), "must be a u32, got " + a->describe());
    }
    const auto n = static_cast<uint64_t>(a->as_int());
    if (n == 0 || (n & (n - 1)) != 0) {
      throw_input(at(f_.name_, "general.alignment"), std::to_string(n) + " is not a power of two");
    }
    f_.alignment_ = n;
  }

  void tensor_info(uint64_t i) {
    const std::string index = "tensor " + std::to_string(i);
    GgufTensor t;
    t.name = string(index, "the tensor's name");
    if (t.name.empty()) throw_input(f_.name_, index + " has an empty name");
    const std::string place = "tensor " + quoted(t.name);
    if (f_.tensor_names_.count(t.name)) throw_input(f_.name_, place + " appears twice");
    const std::string here = where(place);

    const uint32_t dims = u32(place, "the count of dimensions");
    if (dims == 0 || dims > 4) {
      throw_input(here, std::to_string(dims) + " dimensions; GGUF tensors have 1 to 4");
    }
    std::vector<uint64_t> ne(dims);
    uint64_t cells = 1;
    for (uint32_t d = 0; d < dims; ++d) {
      ne[d] = u64(place, "a dimension");
      if (ne[d] == 0) {
        throw_input(here, "dimension " + std::to_string(d) + " is 0; every one must be at least 1");
      }
      if (ne[d] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
          __builtin_mul_overflow(cells, ne[d], &cells) ||
          cells > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        throw_input(here, "its dimensions hold more than 2^63 - 1 cells");
      }
    }
    for (uint32_t d = dims; d-- > 0;) t.shape.push_back(static_cast<int64_t>(ne[d]));

    const uint32_t type = u32(place, "the ggml type");
    const ElementTraits* e = element_traits_of_ggml(type);
    if (!e) {
      const char* known = ggml_type_name(type);
      throw_input(here, known ? std::string(known) + " (type " + std::to_string(type) +
                                    ") is not one attn reads; attn reads " + readable_types()
                              : "type " + std::to_string(type) + " is not a ggml type");
    }
    t.type = e->type;
    const auto block = static_cast<uint64_t>(e->block_cells);
    if (ne[0] % block != 0) {
      throw_input(here, "rows of " + std::to_string(ne[0]) + " cells are not whole blocks of " +
                            e->name + " (" + std::to_string(block) + " cells each)");
    }
    if (__builtin_mul_overflow(cells / block, static_cast<uint64_t>(e->block_bytes), &t.bytes)) {
      throw_input(here, "its " + std::to_string(cells) + " cells need more than 2^64 bytes");
    }
    t.offset = u64(place, "the offset");
    if (t.offset % f_.alignment_ != 0) {
      throw_input(here, "offset " + std::to_string(t.offset) +
                            " is not a multiple of the alignment " + std::to_string(f_.alignment_));
    }
    f_.tensor_names_.emplace(t.name, f_.tensors_.size());
    f_.tensors_.push_back(std::move(t));
  }

  // The data section starts at the first multiple of the alignment after
  // the header; each tensor's bytes must lie in it, apart from the others'.
  void tensor_data() {
    if (f_.tensors_.empty()) return;
    const uint64_t a = f_.alignment_;
    const uint64_t start = pos_ % a == 0 ? pos_ : pos_ + (a - pos_ % a);
    const uint64_t data = start <= size_ ? size_ - start : 0;
    f_.data_offset_ = start;
    std::vector<const GgufTensor*> by_offset;
    for (const GgufTensor& t : f_.tensors_) {
      if (t.offset > data || t.bytes > data - t.offset) {
        throw_input(at(f_.name_, "tensor " + quoted(t.name)),
                    "its " + std::to_string(t.bytes) + " bytes at offset " +
                        std::to_string(t.offset) + " of the data reach past the end of the file " +
                        "(the data section holds " + std::to_string(data) + " bytes)");
      }
      by_offset.push_back(&t);
    }
    std::sort(by_offset.begin(), by_offset.end(), [](const GgufTensor* x, const GgufTensor* y) {
      return x->offset != y->offset ? x->offset < y->offset : x->bytes < y->bytes;
    });
    for (size_t k = 1; k < by_offset.size(); ++k) {
      const GgufTensor& prev = *by_offset[k - 1];
      const GgufTensor& t = *by_offset[k];
      if (t.offset < prev.offset + prev.bytes) {
        throw_input(at(f_.name_, "tensor " + quoted(t.name)),
                    "bytes " + std::to_string(t.offset) + " to " +
                        std::to_string(t.offset + t.bytes) + " of the data overlap tensor " +
                        quoted(prev.name) + " (bytes " + std::to_string(prev.offset) + " to " +
                        std::to_string(prev.offset + prev.bytes) + ")");
      }
    }
  }

  GgufFile& f_;
  std::shared_ptr<const std::string> file_;
  const unsigned char* p_ = nullptr;
  uint64_t size_ = 0, pos_ = 0;
  uint64_t n_tensors_ = 0, n_kv_ = 0;
};

// --- the file -----------------------------------------------------------------

GgufFile GgufFile::open(const std::string& path, int64_t max_stream_bytes) {
  return parse(map_file(path, {}, max_stream_bytes), display_name(path));
}

GgufFile GgufFile::parse(FileBytes bytes, const std::string& name) {
  GgufFile f;
  f.bytes_ = std::move(bytes);
  f.name_ = name;
  GgufParser(f).parse();
  f.bytes_.check_intact(name);  // a file cut short while the header was read
  return f;
}

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = keys_.find(std::string(key));
  return it == keys_.end() ? nullptr : &metadata_[it->second].second;
}

const GgufValue& GgufFile::get(std::string_view key) const {
  if (const GgufValue* v = find(key)) return *v;
  throw_input(name_, "no metadata key " + quoted(key));
}

const GgufTensor* GgufFile::find_tensor(const std::string& name) const {
  const auto it = tensor_names_.find(name);
  return it == tensor_names_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensor& GgufFile::tensor(const std::string& name) const {
  if (const GgufTensor* t = find_tensor(name)) return *t;
  std::vector<std::string> names;
  for (const GgufTensor& t : tensors_) names.push_back(t.name);
  const std::string near = closest_name(name, names);
  throw_input(name_, "no tensor " + quoted(name) + " (the file holds " +
                         std::to_string(tensors_.size()) +
                         (tensors_.size() == 1 ? " tensor)" : " tensors)") +
                         (near.empty() ? "" : "; did you mean " + quoted(near) + "?"));
}

BinaryArray GgufFile::view(const GgufTensor& t) const {
  BinaryArray a;
  a.type = t.type;
  a.shape = t.shape;
  a.data = reinterpret_cast<const unsigned char*>(bytes_.view().data()) + data_offset_ + t.offset;
  a.keep = bytes_;
  return a;
}

Tensor<double> GgufFile::read(const GgufTensor& t, CellKind kind, int64_t max_bytes,
                              int64_t max_elements) const {
  const std::string place = name_ + ":" + message_text(t.name);
  detail::check_input_bytes(place, t.bytes, max_bytes);
  return view(t).to_tensor(place, kind, max_elements);
}

bool is_gguf_file(const std::string& path) {
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".gguf") == 0) return true;
  if (!path::is_regular_file(path)) return false;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char magic[4] = {};
  const bool yes = std::fread(magic, 1, 4, f) == 4 && std::memcmp(magic, "GGUF", 4) == 0;
  std::fclose(f);
  return yes;
}

}  // namespace attn
