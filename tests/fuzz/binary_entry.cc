// The binary readers' entry point: bytes starting with "PK" are opened as
// an .npz archive, anything else as a safetensors file; one input in four
// (by a hash of its bytes) goes through both. Beyond not crashing, what a
// reader accepts must hold together: a safetensors file's tensors tile its
// data exactly, each entry's bytes are what its shape and dtype need, and
// a view or a member handed over lies within the bytes it came from. A
// broken rule throws std::logic_error, which libFuzzer reports as a crash.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "attn/binary_array.h"
#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/matrix_file.h"
#include "attn/npy.h"
#include "attn/npz.h"
#include "attn/safetensors.h"
#include "attn/tensor.h"
#include "fuzz_entry.h"

namespace attn::fuzz {

namespace {

// The budget every tensor and member is read within (--max-input-bytes),
// and how many of them one input reads: the work stays small per input.
constexpr int64_t kMaxBytes = int64_t{1} << 20;
constexpr size_t kMaxTensors = 64;
constexpr size_t kMaxMembers = 16;

// FNV-1a, as in fuzz_entry.cc: an input always takes the same path.
uint64_t hash(std::string_view data) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : data) h = (h ^ c) * 1099511628211ull;
  return h;
}

[[noreturn]] void broken(const std::string& what) {
  throw std::logic_error("binary_archive: " + what);
}

// Bytes a shape of cells of type t needs; false when that overflows 64 bits.
bool needed_bytes(const Shape& shape, ElementType t, uint64_t& out) {
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d == 0) {
      out = 0;
      return true;
    }
  }
  uint64_t n = static_cast<uint64_t>(element_size(t));
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return false;
  }
  out = n;
  return true;
}

// True when [p, p + n) lies within `bytes`.
bool within(const unsigned char* p, uint64_t n, std::string_view bytes) {
  const auto* begin = reinterpret_cast<const unsigned char*>(bytes.data());
  if (p < begin || p > begin + bytes.size()) return false;
  return n <= static_cast<uint64_t>(begin + bytes.size() - p);
}

// An error of kind kInternal is a bug by the library's own account.
void swallow(const Error& e) {
  if (e.kind() == ErrorKind::kInternal) broken(std::string("internal error: ") + e.what());
}

void safetensors(std::string_view data) {
  const SafetensorsFile f = SafetensorsFile::from_bytes(std::string(data), "fuzz.safetensors");

  // The data's size from the 8-byte header length, not from the reader.
  if (data.size() < 8) broken("accepted a file shorter than the header length");
  uint64_t header = 0;
  for (int i = 0; i < 8; ++i) {
    header |= static_cast<uint64_t>(static_cast<unsigned char>(data[static_cast<size_t>(i)]))
              << (8 * i);
  }
  if (header > data.size() - 8) broken("accepted a header longer than the file");
  const uint64_t data_size = data.size() - 8 - header;

  uint64_t expected = 0;
  for (const SafetensorsEntry& e : f.tensors()) {
    const std::string place = "tensor \"" + message_text(e.name) + "\"";
    ElementType t = ElementType::kF32;
    if (!safetensors_dtype(e.dtype, t) || t != e.type) broken(place + ": dtype and type differ");
    uint64_t need = 0;
    if (!needed_bytes(e.shape, e.type, need)) broken(place + ": accepted a shape too large");
    if (e.end < e.begin || e.end - e.begin != need) {
      broken(place + ": [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
             ") is not the " + std::to_string(need) + " bytes its shape needs");
    }
    if (e.begin != expected) {
      broken(place + ": begins at " + std::to_string(e.begin) + ", not at " +
             std::to_string(expected) + " (entries not sorted or not contiguous)");
    }
    expected = e.end;
  }
  if (expected != data_size) {
    broken("the tensors end at " + std::to_string(expected) + " but the data has " +
           std::to_string(data_size) + " bytes");
  }

  size_t count = 0;
  for (const SafetensorsEntry& e : f.tensors()) {
    if (count++ == kMaxTensors) break;
    const std::string place = "tensor \"" + message_text(e.name) + "\"";
    const uint64_t bytes = e.end - e.begin;
    const BinaryArray a = f.view(e);
    if (a.type != e.type || a.shape != e.shape) broken(place + ": the view's type or shape");
    if (!within(a.data, bytes, a.keep.view())) broken(place + ": the view lies outside the file");
    // Refused at the budget, before anything is allocated: one byte less
    // than the tensor's must fail.
    if (bytes > 0) {
      bool refused = false;
      try {
        f.read(e, CellKind::kExtended, static_cast<int64_t>(bytes - 1));
      } catch (const Error&) {
        refused = true;
      }
      if (!refused) broken(place + ": read past max_bytes");
    }
    if (bytes > static_cast<uint64_t>(kMaxBytes)) {
      bool refused = false;
      try {
        f.read(e, CellKind::kExtended, kMaxBytes);
      } catch (const Error&) {
        refused = true;
      }
      if (!refused) broken(place + ": read past max_bytes");
      continue;
    }
    // kExtended takes every value, so nothing within the budget is refused
    // but a BOOL cell that is not 0 or 1.
    bool bad_bool = false;
    if (e.type == ElementType::kBool) {
      const BinaryArray a = f.view(e);
      for (int64_t i = 0; i < a.size(); ++i) bad_bool = bad_bool || a.data[i] > 1;
    }
    Tensor<double> v;
    try {
      v = f.read(e, CellKind::kExtended, kMaxBytes);
    } catch (const Error& err) {
      if (bad_bool) continue;
      broken(place + ": refused within max_bytes: " + err.what());
    }
    if (bad_bool) broken(place + ": a BOOL cell other than 0 or 1 was read");
    if (v.shape() != e.shape) broken(place + ": read with another shape");
    if (static_cast<uint64_t>(v.size()) * static_cast<uint64_t>(element_size(e.type)) != bytes) {
      broken(place + ": read another number of cells");
    }
  }
}

void npz(std::string_view data) {
  const NpzArchive a =
      NpzArchive::from_bytes(FileBytes::from_string(std::string(data)), "fuzz.npz");
  try {
    pick_member(a, TensorReference{"fuzz.npz", ""});
  } catch (const Error& e) {
    swallow(e);
  }
  size_t count = 0;
  for (const NpzMember& m : a.members()) {
    if (count++ == kMaxMembers) break;
    // member() finds the last member of a name.
    const NpzMember* last = nullptr;
    for (const NpzMember& c : a.members()) {
      if (c.name == m.name) last = &c;
    }
    const std::string place = "fuzz.npz:" + message_text(m.name);
    try {
      const FileBytes b = a.member(m.name, kMaxBytes);
      if (last->size > static_cast<uint64_t>(kMaxBytes)) broken(place + ": read past max_bytes");
      if (b.view().size() != last->size) {
        broken(place + ": " + std::to_string(b.view().size()) + " bytes handed over, " +
               std::to_string(last->size) + " in the directory");
      }
      try {
        const NpyArray n = parse_npy(b.view(), place, CellKind::kExtended);
        (void)n;
      } catch (const Error& e) {
        swallow(e);
      }
      try {
        const BinaryArray v = view_npy(b, place, 5);
        if (v.shape.empty() || v.shape.size() > 5) broken(place + ": viewed with rank outside 1-5");
        uint64_t need = 0;
        if (!needed_bytes(v.shape, v.type, need)) broken(place + ": viewed a shape too large");
        if (!within(v.data, need, b.view())) broken(place + ": the view lies outside the member");
      } catch (const Error& e) {
        swallow(e);
      }
    } catch (const Error& e) {
      swallow(e);
    }
  }
}

}  // namespace

void safetensors_file(std::string_view data) {
  try {
    safetensors(data);
  } catch (const Error& e) {
    swallow(e);
  }
}

void npz_archive(std::string_view data) {
  try {
    npz(data);
  } catch (const Error& e) {
    swallow(e);
  }
}

void binary_archive(std::string_view data) {
  const bool zip = data.substr(0, 2) == "PK";
  const bool both = hash(data) % 4 == 0;
  if (zip || both) {
    try {
      npz(data);
    } catch (const Error& e) {
      swallow(e);
    }
  }
  if (!zip || both) {
    try {
      safetensors(data);
    } catch (const Error& e) {
      swallow(e);
    }
  }
}

}  // namespace attn::fuzz
