#include "attn/safetensors.h"

#include <algorithm>
#include <cmath>

#include "attn/error.h"
#include "attn/json.h"
#include "attn/options.h"
#include "base/names.h"
#include "io/cells.h"

namespace attn {

namespace {

// The format's own library refuses headers over 100 MB; so do we, before
// the JSON is parsed.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// Exact non-negative integers a JSON number can hold (doubles are exact to 2^53).
bool whole(double x) { return x >= 0 && x <= 9007199254740992.0 && x == std::floor(x); }

std::string quoted(std::string_view s) { return "\"" + message_text(s) + "\""; }

}  // namespace

SafetensorsFile SafetensorsFile::open(const std::string& path, int64_t max_stream_bytes) {
  return from_bytes(map_file(path, {}, max_stream_bytes), display_name(path));
}

SafetensorsFile SafetensorsFile::from_bytes(std::string bytes, const std::string& name) {
  return from_bytes(FileBytes::from_string(std::move(bytes)), name);
}

SafetensorsFile SafetensorsFile::from_bytes(FileBytes bytes, const std::string& name) {
  SafetensorsFile f;
  f.bytes_ = std::move(bytes);
  f.name_ = name;
  f.parse_header();
  return f;
}

void SafetensorsFile::parse_header() {
  const std::string_view all = bytes_.view();
  if (all.size() < 8) {
    throw_input(name_, "not a safetensors file: " + std::to_string(all.size()) +
                           " bytes, shorter than the 8-byte header length");
  }
  const uint64_t n = detail::load_le(reinterpret_cast<const unsigned char*>(all.data()), 8);
  if (n > kMaxHeaderBytes) {
    // Not echoed: the number is the file's first 8 bytes, which may be
    // anything (a link to another file's text).
    throw_input(name_,
                "the header length (the first 8 bytes) is more than the 100000000 bytes a "
                "safetensors header may have (is this a safetensors file?)");
  }
  if (n > all.size() - 8) {
    throw_input(name_, "truncated: the header length is " + std::to_string(n) +
                           " bytes but the file has " + std::to_string(all.size() - 8) +
                           " bytes after the length");
  }
  const std::string_view text = all.substr(8, n);
  if (text.empty() || text[0] != '{') {
    throw_input(name_, "the header does not start with '{' (is this a safetensors file?)");
  }
  data_ = all.substr(8 + n);
  const std::string where = name_ + " (header)";
  // As the format's own reader (serde into integers): every number in the
  // header is an integer as written, 16 and not 16.0 or 1.6e1.
  json::Limits limits;
  limits.integers_only = true;
  const json::Value root = json::parse(text, where, limits);
  if (!root.is_object()) throw_input(where, "the header must be a JSON object");

  for (const json::Member& m : root.members()) {
    const std::string place = name_ + ": " + quoted(m.key);
    if (m.key == "__metadata__") {
      if (!m.value.is_object()) throw_input(place, "must be an object of strings");
      for (const json::Member& k : m.value.members()) {
        if (!k.value.is_string()) {
          throw_input(place + "." + message_text(k.key),
                      "metadata values must be strings, got " + json::describe(k.value));
        }
        metadata_[k.key] = k.value.as_string();
      }
      continue;
    }
    if (!m.value.is_object()) {
      throw_input(place, "expected {\"dtype\", \"shape\", \"data_offsets\"}, got " +
                             json::describe(m.value));
    }
    SafetensorsEntry e;
    e.name = m.key;
    const json::Value* dtype = m.value.find("dtype");
    const json::Value* shape = m.value.find("shape");
    const json::Value* offsets = m.value.find("data_offsets");
    if (!dtype || !shape || !offsets) {
      throw_input(place, std::string("has no \"") +
                             (!dtype   ? "dtype"
                              : !shape ? "shape"
                                       : "data_offsets") +
                             "\"");
    }
    if (!dtype->is_string()) throw_input(place, "dtype must be a string");
    e.dtype = dtype->as_string();
    if (!safetensors_dtype(e.dtype, e.type)) {
      throw_input(place, "unknown dtype " + quoted(e.dtype) +
                             "; attn reads F64, F32, F16, BF16, F8_E4M3, F8_E5M2, I8-I64, U8-U64 "
                             "and BOOL");
    }
    // A packed array of rank 1: [[2, 2]] is packed too, but not a shape.
    if (!shape->is_array() ||
        (shape->size() > 0 && (!shape->packed() || shape->dims().size() != 1))) {
      throw_input(place, "shape must be a list of non-negative integers");
    }
    for (double d : shape->numbers()) {
      if (!whole(d)) throw_input(place, "shape must be a list of non-negative integers");
      e.shape.push_back(static_cast<int64_t>(d));
    }
    if (!offsets->is_array() || !offsets->packed() || offsets->dims().size() != 1 ||
        offsets->numbers().size() != 2 || !whole(offsets->numbers()[0]) ||
        !whole(offsets->numbers()[1])) {
      throw_input(place, "data_offsets must be [begin, end], two non-negative integers");
    }
    e.begin = static_cast<uint64_t>(offsets->numbers()[0]);
    e.end = static_cast<uint64_t>(offsets->numbers()[1]);
    if (e.end < e.begin) {
      throw_input(place, "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                             "] end before they begin");
    }
    if (e.end > data_.size()) {
      throw_input(place, "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                             "] reach past the data, which has " + std::to_string(data_.size()) +
                             " bytes");
    }
    // Cells the shape needs, without overflow: the product stays below
    // the data size (<= the file size) or the shape cannot fit anyway.
    const uint64_t bytes = e.end - e.begin;
    const uint64_t cell = static_cast<uint64_t>(element_size(e.type));
    uint64_t need = cell;
    bool zero = false;
    for (int64_t d : e.shape) zero = zero || d == 0;
    if (zero) {
      // No bytes, but the other axes still have to make sense: their
      // product must stay within what a tensor can count.
      uint64_t cells = 1;
      for (int64_t d : e.shape) {
        const auto ud = static_cast<uint64_t>(d);
        if (ud == 0) continue;
        if (cells > (uint64_t{1} << 62) / ud) {
          throw_input(place, "shape " + shape_string(e.shape) + " is larger than any tensor");
        }
        cells *= ud;
      }
      need = 0;
    } else {
      bool overflow = false;
      for (int64_t d : e.shape) {
        overflow = overflow || __builtin_mul_overflow(need, static_cast<uint64_t>(d), &need);
      }
      if (overflow) {
        throw_input(place, "shape " + shape_string(e.shape) + " of " + e.dtype +
                               " needs more than 2^64 bytes but data_offsets give " +
                               std::to_string(bytes));
      }
    }
    if (need != bytes) {
      throw_input(place, "shape " + shape_string(e.shape) + " of " + e.dtype + " needs " +
                             std::to_string(need) + " bytes but data_offsets give " +
                             std::to_string(bytes));
    }
    tensors_.push_back(std::move(e));
  }

  // The data must be the tensors laid end to end: no overlap, no gap,
  // nothing after the last.
  std::sort(tensors_.begin(), tensors_.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const SafetensorsEntry& e : tensors_) {
    if (e.begin < expected) {
      throw_input(name_ + ": " + quoted(e.name), "data_offsets [" + std::to_string(e.begin) + ", " +
                                                     std::to_string(e.end) + "] overlap those of " +
                                                     quoted(previous->name) + " (which end at " +
                                                     std::to_string(expected) + ")");
    }
    if (e.begin > expected) {
      throw_input(name_ + ": " + quoted(e.name),
                  "data_offsets begin at " + std::to_string(e.begin) + ", leaving bytes " +
                      std::to_string(expected) + " to " + std::to_string(e.begin) +
                      " of the data to no tensor");
    }
    expected = e.end;
    previous = &e;
  }
  if (expected != data_.size()) {
    throw_input(name_, std::to_string(data_.size() - expected) +
                           " bytes after the last tensor belong to no tensor (truncated "
                           "header or a damaged file?)");
  }
}

const SafetensorsEntry* SafetensorsFile::find(std::string_view tensor) const {
  for (const SafetensorsEntry& e : tensors_) {
    if (e.name == tensor) return &e;
  }
  return nullptr;
}

const SafetensorsEntry& SafetensorsFile::get(std::string_view tensor) const {
  if (const SafetensorsEntry* e = find(tensor)) return *e;
  std::vector<std::string> names;
  for (const SafetensorsEntry& e : tensors_) names.push_back(e.name);
  const std::string near = closest_name(tensor, names);
  throw_input(name_, "no tensor " + quoted(tensor) + " (the file holds " +
                         std::to_string(tensors_.size()) +
                         (tensors_.size() == 1 ? " tensor)" : " tensors)") +
                         (near.empty() ? "" : "; did you mean " + quoted(near) + "?"));
}

BinaryArray SafetensorsFile::view(const SafetensorsEntry& e) const {
  BinaryArray a;
  a.type = e.type;
  a.shape = e.shape;
  a.data = reinterpret_cast<const unsigned char*>(data_.data()) + e.begin;
  a.keep = bytes_;
  a.check_bools(name_ + ":" + message_text(e.name));
  return a;
}

Tensor<double> SafetensorsFile::read(const SafetensorsEntry& e, CellKind kind, int64_t max_bytes,
                                     int64_t max_elements) const {
  detail::check_input_bytes(name_ + ":" + message_text(e.name), e.end - e.begin, max_bytes);
  return view(e).to_tensor(name_ + ":" + message_text(e.name), kind, max_elements);
}

}  // namespace attn
