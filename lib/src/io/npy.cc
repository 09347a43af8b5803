#include "attn/npy.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "attn/error.h"
#include "attn/json.h"
#include "attn/json_tensor.h"
#include "base/number_text.h"
#include "base/utf8.h"
#include "io/cells.h"

namespace attn {

namespace {

// "\x93NUMPY", major, minor, then the header length: 2 bytes (1.0) or 4
// bytes (2.0, 3.0), little endian.
constexpr std::string_view kMagic("\x93NUMPY", 6);

// NumPy pads the preamble + header to a multiple of 64 bytes so the data
// can be memory-mapped aligned; we write the same layout.
constexpr size_t kAlign = 64;

void store_le(char* p, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// The shape as Python prints a tuple, as users see it in NumPy: "(3, 4)", "(5,)", "()".
std::string tuple_string(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ',';
  return s + ")";
}

struct Header {
  std::string descr;
  bool structured = false;  // descr was a list of fields
  bool fortran_order = false;
  Shape shape;
};

// The header is the repr of a Python dict, which NumPy reads with a
// literal evaluator. We accept exactly that dict, written with any
// spacing, either quote style and keys in any order; nothing else.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  Header parse() {
    Header h;
    bool seen[3] = {false, false, false};
    skip_space();
    expect('{', "expected '{' at the start of the header dict");
    skip_space();
    while (!at('}')) {
      const size_t key_pos = pos_;
      const std::string key = string_literal("expected a quoted key or '}'");
      skip_space();
      expect(':', "expected ':' after the key '" + key + "'");
      skip_space();
      int slot = -1;
      if (key == "descr") {
        slot = 0;
        if (at('[')) {
          h.structured = true;
          skip_list();
        } else {
          h.descr = string_literal("expected a quoted dtype after 'descr'");
        }
      } else if (key == "fortran_order") {
        slot = 1;
        h.fortran_order = boolean();
      } else if (key == "shape") {
        slot = 2;
        h.shape = shape();
      } else {
        pos_ = key_pos;
        fail("unexpected key '" + key + "' (a .npy header has 'descr', 'fortran_order', 'shape')");
      }
      if (seen[slot]) {
        pos_ = key_pos;
        fail("duplicate key '" + key + "'");
      }
      seen[slot] = true;
      skip_space();
      if (at(',')) {
        ++pos_;
        skip_space();
      } else if (!at('}')) {
        fail("expected ',' or '}'");
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the header dict");
    const char* keys[3] = {"descr", "fortran_order", "shape"};
    for (int i = 0; i < 3; ++i) {
      if (!seen[i]) throw_input(name_, std::string("the .npy header has no '") + keys[i] + "' key");
    }
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw_input(name_, "malformed .npy header at column " + std::to_string(pos_ + 1) + ": " + what);
  }

  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  void expect(char c, const std::string& what) {
    if (!at(c)) fail(what);
    ++pos_;
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  std::string string_literal(const std::string& what) {
    if (!at('\'') && !at('"')) fail(what);
    const char quote = text_[pos_++];
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') fail("escapes in strings are not supported");
      if (text_[pos_] == '\n') break;
      ++pos_;
    }
    if (!at(quote)) fail("unterminated string");
    return std::string(text_.substr(start, pos_++ - start));
  }

  bool boolean() {
    for (const char* word : {"True", "False"}) {
      const size_t n = std::strlen(word);
      if (text_.substr(pos_, n) == word) {
        pos_ += n;
        return word[0] == 'T';
      }
    }
    fail("expected True or False after 'fortran_order'");
  }

  // A structured dtype's field list; only skipped, it is refused later.
  void skip_list() {
    int depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\'' || c == '"') {
        string_literal("");
        continue;
      }
      ++pos_;
      if (c == '[' || c == '(') ++depth;
      if ((c == ']' || c == ')') && --depth == 0) return;
    }
    fail("unterminated list after 'descr'");
  }

  Shape shape() {
    Shape s;
    expect('(', "expected a tuple such as (3, 4) after 'shape'");
    skip_space();
    bool trailing_comma = false;
    while (!at(')')) {
      s.push_back(dimension());
      skip_space();
      trailing_comma = at(',');
      if (trailing_comma) {
        ++pos_;
        skip_space();
      } else if (!at(')')) {
        fail("expected ',' or ')' in the shape");
      }
    }
    // Python's (5) is the number 5, not a tuple; NumPy refuses it too.
    if (s.size() == 1 && !trailing_comma) fail("a one-dimensional shape is written (5,), not (5)");
    ++pos_;
    return s;
  }

  int64_t dimension() {
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') {
      fail("expected a non-negative integer in the shape");
    }
    int64_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int digit = text_[pos_] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) fail("dimension too large");
      v = v * 10 + digit;
      ++pos_;
    }
    if (at('L') || at('l')) ++pos_;  // Python 2 long literals, as in old files
    return v;
  }

  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
};

// Maps a descr to an element type, or refuses it with what to do instead.
ElementType cell_type(const Header& h, const std::string& name) {
  if (h.structured) {
    throw_input(name,
                "structured arrays (record dtypes) are not supported; save each field as its "
                "own array");
  }
  const std::string& d = h.descr;
  size_t i = 0;
  char order = '=';
  if (!d.empty() && std::string_view("<>|=").find(d[0]) != std::string_view::npos) order = d[i++];
  const char kind = i < d.size() ? d[i++] : '\0';
  const std::string digits = d.substr(i);
  size_t size = 0;
  if (!digits.empty() && digits.size() <= 2 &&
      digits.find_first_not_of("0123456789") == std::string::npos) {
    size = static_cast<size_t>(std::stoi(digits));
  }
  if (kind == 'O') {
    throw_input(name,
                "object arrays (pickled data) cannot be read; save a numeric array, e.g. "
                "arr.astype(np.float64)");
  }
  if (kind == 'c') {
    throw_input(name, "complex arrays ('" + d + "') are not supported; save arr.real");
  }
  if (kind == 'U' || kind == 'S' || kind == 'a') {
    throw_input(name,
                "string arrays ('" + d + "') are not supported; attn reads numbers and booleans");
  }
  const bool ok =
      (kind == 'b' && size == 1) ||
      ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
      (kind == 'f' && (size == 2 || size == 4 || size == 8));
  if (!ok) {
    throw_input(name, "unsupported dtype '" + d +
                          "'; attn reads bool, int8-64, uint8-64, float16, float32 and float64 "
                          "arrays");
  }
  // NumPy writes '<' (or '|' for single bytes); '=' and no mark mean the
  // writer's native order, which we take as little endian like every
  // platform NumPy files in practice come from.
  if (order == '>' && size > 1) {
    throw_input(name, "big-endian data ('" + d + "') is not supported; use arr.astype('<" +
                          d.substr(1) + "')");
  }
  switch (kind) {
    case 'b':
      return ElementType::kBool;
    case 'i':
      return size == 1   ? ElementType::kI8
             : size == 2 ? ElementType::kI16
             : size == 4 ? ElementType::kI32
                         : ElementType::kI64;
    case 'u':
      return size == 1   ? ElementType::kU8
             : size == 2 ? ElementType::kU16
             : size == 4 ? ElementType::kU32
                         : ElementType::kU64;
    default:
      return size == 2 ? ElementType::kF16 : size == 4 ? ElementType::kF32 : ElementType::kF64;
  }
}

// Checks a .npy file's preamble, header and size and says where its cells are.
struct Layout {
  ElementType type;
  Shape shape;
  size_t offset;  // of the first cell
  std::string descr;
  bool fortran = false;  // column-major cells (np.save of a transposed view)
};

// The preamble and header of a .npy file, checked; where the data starts.
struct Preamble {
  Header header;
  size_t offset;
};

Preamble read_preamble(std::string_view bytes, const std::string& name) {
  if (bytes.empty()) throw_input(name, "empty file; expected a NumPy array saved with np.save");
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    throw_input(name, "not a .npy file (it does not start with the NumPy magic \\x93NUMPY)");
  }
  if (bytes.size() < 10) throw_input(name, "truncated .npy header");
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  const int major = u[6], minor = u[7];
  if (minor != 0 || major < 1 || major > 3) {
    throw_input(name, "unsupported .npy format version " + std::to_string(major) + "." +
                          std::to_string(minor) + " (attn reads 1.0, 2.0 and 3.0)");
  }
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t preamble = 8 + len_bytes;
  if (bytes.size() < preamble) throw_input(name, "truncated .npy header");
  const uint64_t header_len = detail::load_le(u + 8, len_bytes);
  if (header_len > bytes.size() - preamble) {
    throw_input(name, "truncated: the .npy header declares " + std::to_string(header_len) +
                          " bytes but only " + std::to_string(bytes.size() - preamble) +
                          " follow the preamble");
  }
  // Versions 1.0 and 2.0 have a latin-1 header, 3.0 UTF-8; the keys and
  // values we accept are ASCII in both.
  return Preamble{HeaderParser(bytes.substr(preamble, header_len), name).parse(),
                  preamble + static_cast<size_t>(header_len)};
}

Layout npy_layout(std::string_view bytes, const std::string& name, int max_rank) {
  const Preamble pre = read_preamble(bytes, name);
  const Header& h = pre.header;
  const ElementType t = cell_type(h, name);
  if (h.shape.empty() || static_cast<int>(h.shape.size()) > max_rank) {
    throw_input(name, "array of rank " + std::to_string(h.shape.size()) + " (shape " +
                          tuple_string(h.shape) + "); attn reads arrays of rank 1 to " +
                          std::to_string(max_rank));
  }
  // Size checks before any allocation: the header is untrusted.
  const uint64_t limit = std::numeric_limits<uint64_t>::max() / 16;
  uint64_t count = 1;
  bool too_big = false;
  // The non-zero axes must multiply within bounds even when another axis
  // is 0 (an array of no bytes): later code multiplies them too.
  bool zero = false;
  for (int64_t d : h.shape) {
    const auto ud = static_cast<uint64_t>(d);
    if (ud == 0) {
      zero = true;
      continue;
    }
    if (!too_big && count > limit / ud) too_big = true;
    if (!too_big) count *= ud;
  }
  if (too_big) {
    throw_input(name, "the header declares shape " + tuple_string(h.shape) + " of '" + h.descr +
                          "', more data than any file can hold");
  }
  if (zero) count = 0;
  const uint64_t data_bytes = count * static_cast<uint64_t>(element_size(t));
  const uint64_t available = bytes.size() - pre.offset;
  if (data_bytes > available) {
    throw_input(name, "truncated: the header declares shape " + tuple_string(h.shape) + " of '" +
                          h.descr + "' = " + std::to_string(data_bytes) +
                          " bytes of data but only " + std::to_string(available) +
                          " follow the header");
  }
  if (data_bytes < available) {
    throw_input(name, std::to_string(available - data_bytes) + " bytes follow the array of shape " +
                          tuple_string(h.shape) +
                          "; attn reads one array per .npy file (was np.save called twice on one "
                          "file?)");
  }

  return Layout{t, h.shape, pre.offset, h.descr, h.fortran_order && h.shape.size() > 1};
}

}  // namespace

NpyArray parse_npy(std::string_view bytes, const std::string& name, CellKind kind,
                   int64_t max_elements) {
  const Layout l = npy_layout(bytes, name, 4);
  BinaryArray a;
  a.type = l.type;
  a.shape = l.shape;
  a.data = reinterpret_cast<const unsigned char*>(bytes.data()) + l.offset;
  if (!l.fortran) return NpyArray{a.to_tensor(name, kind, max_elements), l.descr};
  // Column-major cells (np.save of k.T): they are the C-ordered array of
  // the reversed shape, whose axes are then reversed back.
  a.shape = Shape(l.shape.rbegin(), l.shape.rend());
  const Tensor<double> c = a.to_tensor(name, kind, max_elements);
  const int64_t rank = static_cast<int64_t>(l.shape.size());
  Tensor<double> out(l.shape);
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  for (int64_t flat = 0; flat < out.size(); ++flat) {
    // idx: the C index of `flat` in out; the cell sits at the reversed index
    // of c (Fortran order: the first axis varies fastest).
    int64_t src = 0;
    for (int64_t axis = rank - 1; axis >= 0; --axis) {
      src = src * l.shape[static_cast<size_t>(axis)] + idx[static_cast<size_t>(axis)];
    }
    out[flat] = c[src];
    for (int64_t axis = rank - 1; axis >= 0; --axis) {
      if (++idx[static_cast<size_t>(axis)] < l.shape[static_cast<size_t>(axis)]) break;
      idx[static_cast<size_t>(axis)] = 0;
    }
  }
  return NpyArray{std::move(out), l.descr};
}

BinaryArray view_npy(FileBytes bytes, const std::string& name, int max_rank) {
  const Layout l = npy_layout(bytes.view(), name, max_rank);
  if (l.fortran) {
    throw_input(name,
                "a Fortran-ordered array (column-major, as np.save writes a transposed view); "
                "attn heatmap and attn diff read .npy files in C order: save "
                "np.ascontiguousarray(a)");
  }
  BinaryArray a;
  a.type = l.type;
  a.shape = l.shape;
  a.data = reinterpret_cast<const unsigned char*>(bytes.view().data()) + l.offset;
  a.keep = std::move(bytes);
  a.check_bools(name);
  return a;
}

namespace {

// The preamble and padded header of a .npy file (version 1.0, or 2.0 when
// the header is too long for 1.0) of `descr` and `shape`.
std::string npy_header(const std::string& descr, const Shape& shape) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + tuple_string(shape) + ", }";
  // Version 1.0 stores the header length in 2 bytes; longer headers need 2.0.
  size_t preamble = 10;
  if (header.size() + 1 + kAlign > 0xffff) preamble = 12;
  const size_t unpadded = preamble + header.size() + 1;
  header.append((kAlign - unpadded % kAlign) % kAlign, ' ');
  header += '\n';
  std::string out(preamble, '\0');
  std::memcpy(&out[0], kMagic.data(), kMagic.size());
  out[6] = static_cast<char>(preamble == 10 ? 1 : 2);
  store_le(&out[8], header.size(), preamble - 8);
  return out + header;
}

// The code points of valid UTF-8 text.
std::vector<uint32_t> code_points(const std::string& s) {
  std::vector<uint32_t> out;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const size_t n = utf8_sequence_length(p, end);
    if (n == 0) throw_input("text", "not UTF-8");  // labels and titles were checked on input
    out.push_back(decode_utf8_sequence(p, n));
    p += n;
  }
  return out;
}

}  // namespace

std::string format_npy_header(const Shape& shape, DType dtype) {
  return npy_header(dtype == DType::kF32 ? "<f4" : "<f8", shape);
}

void append_npy_cells(std::string& out, const Tensor<double>& t, DType dtype) {
  const bool f32 = dtype == DType::kF32;
  const size_t item = f32 ? 4 : 8;
  out.reserve(out.size() + item * static_cast<size_t>(t.size()));
  // Appended a block at a time: resizing first would write every byte
  // twice (a model's stack of weights is tens of MB).
  char block[8192];
  const auto per_block = static_cast<int64_t>(sizeof block / item);
  for (int64_t i0 = 0; i0 < t.size(); i0 += per_block) {
    const int64_t i1 = std::min(t.size(), i0 + per_block);
    char* p = block;
    for (int64_t i = i0; i < i1; ++i, p += item) {
      if (f32) {
        const float f = static_cast<float>(t[i]);
        uint32_t bits = 0;
        std::memcpy(&bits, &f, sizeof f);
        store_le(p, bits, 4);
      } else {
        uint64_t bits = 0;
        std::memcpy(&bits, &t[i], sizeof bits);
        store_le(p, bits, 8);
      }
    }
    out.append(block, static_cast<size_t>(p - block));
  }
}

std::string format_npy(const Tensor<double>& t, DType dtype) {
  std::string out = format_npy_header(t.shape(), dtype);
  out.reserve(out.size() + (dtype == DType::kF32 ? 4 : 8) * static_cast<size_t>(t.size()));
  append_npy_cells(out, t, dtype);
  return out;
}

std::string format_npy_bool(const uint8_t* cells, const Shape& shape) {
  std::string out = npy_header("|b1", shape);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  for (int64_t i = 0; i < n; ++i) out += static_cast<char>(cells[i] ? 1 : 0);
  return out;
}

std::string format_npy_int64(const std::vector<int64_t>& values) {
  std::string out = npy_header("<i8", Shape{static_cast<int64_t>(values.size())});
  for (int64_t v : values) {
    const size_t at = out.size();
    out.resize(at + 8);
    store_le(&out[at], static_cast<uint64_t>(v), 8);
  }
  return out;
}

std::string format_npy_strings(const std::vector<std::string>& strings, bool scalar) {
  std::vector<std::vector<uint32_t>> points;
  size_t width = 1;  // NumPy's narrowest string dtype is '<U1'
  for (const std::string& s : strings) {
    points.push_back(code_points(s));
    width = std::max(width, points.back().size());
  }
  const Shape shape = scalar ? Shape{} : Shape{static_cast<int64_t>(strings.size())};
  std::string out = npy_header("<U" + std::to_string(width), shape);
  for (const std::vector<uint32_t>& s : points) {
    const size_t at = out.size();
    out.resize(at + 4 * width, '\0');  // NumPy pads with NUL code points
    for (size_t i = 0; i < s.size(); ++i) store_le(&out[at + 4 * i], s[i], 4);
  }
  return out;
}

std::vector<std::string> parse_npy_strings(std::string_view bytes, const std::string& name) {
  const Preamble pre = read_preamble(bytes, name);
  const Header& h = pre.header;
  const std::string& d = h.descr;
  const bool little = !d.empty() && (d[0] == '<' || d[0] == '|' || d[0] == '=');
  const size_t kind_at = !d.empty() && std::string_view("<>|=").find(d[0]) != std::string::npos;
  const std::string digits = d.substr(std::min(d.size(), kind_at + 1));
  if (h.structured || d.size() <= kind_at || d[kind_at] != 'U' || !little || digits.empty() ||
      digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) {
    throw_input(name, "expected a string array ('<U…'), got '" + d + "'");
  }
  if (h.fortran_order || h.shape.size() > 1) {
    throw_input(name, "expected a string or a list of strings, got shape " + tuple_string(h.shape));
  }
  const uint64_t width = std::stoull(digits);
  // The strings attn writes are at most json::kMaxStringBytes bytes, so of
  // at most that many code points: the same limit as a JSON result's.
  if (width > json::kMaxStringBytes) {
    throw_input(name, "strings of up to " + digits + " characters ('" + d +
                          "'); attn reads strings of up to " +
                          std::to_string(json::kMaxStringBytes));
  }
  const uint64_t count = h.shape.empty() ? 1 : static_cast<uint64_t>(h.shape[0]);
  const uint64_t available = bytes.size() - pre.offset;
  if (width == 0 || count > available / 4 / width || count * 4 * width != available) {
    throw_input(name, "the header declares shape " + tuple_string(h.shape) + " of '" + d +
                          "' but " + std::to_string(available) + " bytes of data follow it");
  }
  std::vector<std::string> out;
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data()) + pre.offset;
  for (uint64_t i = 0; i < count; ++i) {
    std::string s;
    size_t len = static_cast<size_t>(width);
    const unsigned char* cell = u + 4 * width * i;
    while (len > 0 && detail::load_le(cell + 4 * (len - 1), 4) == 0) --len;  // NUL padding
    for (size_t j = 0; j < len; ++j) {
      const uint64_t c = detail::load_le(cell + 4 * j, 4);
      if (c == 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
        throw_input(name + "[" + std::to_string(i) + "]",
                    "invalid code point " + std::to_string(c) + " in a string");
      }
      append_utf8(s, static_cast<char32_t>(c));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace attn
