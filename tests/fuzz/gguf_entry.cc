// The GGUF reader's entry point (fuzz_gguf): bytes parsed as a GGUF file,
// every metadata value read through each accessor (a few elements of each
// array), and every tensor (the first 64) viewed and read within 1 MiB.
// Beyond not crashing, what the reader accepts must hold together: a
// tensor's bytes are what its shape and type need, its rows are whole
// blocks, it lies aligned within the data section of the bytes it came
// from and apart from the others, a view's cells are the cells read, and
// an accessor of another type refuses with an input error. A broken rule,
// or an attn::Error of kind internal, throws std::logic_error.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "attn/binary_array.h"
#include "attn/error.h"
#include "attn/file_io.h"
#include "fuzz_entry.h"
#include "io/element_types.h"
#include "io/gguf.h"

namespace attn::fuzz {

namespace {

constexpr int64_t kMaxBytes = int64_t{1} << 20;
constexpr int64_t kMaxElements = int64_t{1} << 18;
constexpr size_t kMaxTensors = 64;

[[noreturn]] void broken(const std::string& what) { throw std::logic_error("gguf_file: " + what); }

void swallow(const Error& e) {
  if (e.kind() == ErrorKind::kInternal) broken(std::string("internal error: ") + e.what());
}

// f must throw an input error (an accessor of another type).
template <class F>
void refused(const GgufValue& v, const char* what, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kInput) broken(std::string(what) + ": not an input error");
    return;
  }
  broken(std::string(what) + " of " + v.describe() + " did not refuse");
}

bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void visit(const GgufValue& v, int depth) {
  if (depth > kGgufMaxArrayDepth + 1) broken("arrays nested past the limit");
  (void)v.describe();
  (void)v.place();
  if (v.is_integer()) {
    if (!same(static_cast<double>(v.as_int()), v.as_number())) broken("as_int != as_number");
  } else if (v.is_float()) {
    (void)v.as_number();
    refused(v, "as_int", [&] { v.as_int(); });
  } else if (v.type() == GgufValue::Type::kBool) {
    (void)v.as_bool();
    refused(v, "as_number", [&] { v.as_number(); });
  } else if (v.is_string()) {
    if (v.as_string().size() > kGgufMaxStringBytes) broken("a string past the limit");
    refused(v, "as_int", [&] { v.as_int(); });
  } else if (v.is_array()) {
    const size_t n = v.size();
    if (n > kGgufMaxArrayElements) broken("an array past the limit");
    const GgufValue::Type e = v.element_type();
    if (e == GgufValue::Type::kString) {
      if (v.strings().size() != n) broken("strings() and size() differ");
      refused(v, "numbers", [&] { v.numbers(); });
    } else if (e != GgufValue::Type::kArray) {
      if (v.numbers().size() != n) broken("numbers() and size() differ");
      refused(v, "strings", [&] { v.strings(); });
    }
    for (size_t i : {size_t{0}, size_t{1}, n - 1}) {
      if (i >= n) continue;
      const GgufValue& x = v.at(i);
      if (x.type() != e) broken("an element of another type than the array's");
      if (e != GgufValue::Type::kString && e != GgufValue::Type::kArray &&
          !same(x.as_number(), v.numbers()[i])) {
        if (e != GgufValue::Type::kBool) broken("at(i) and numbers()[i] differ");
      }
      visit(x, depth + 1);
    }
    refused(v, "at(size)", [&] { v.at(n); });
    return;
  }
  refused(v, "element_type", [&] { v.element_type(); });
}

void check(std::string_view data) {
  const GgufFile f = GgufFile::parse(FileBytes::from_string(std::string(data)), "fuzz.gguf");
  if (f.version() != 2 && f.version() != 3)
    broken("accepted version " + std::to_string(f.version()));
  for (const auto& [key, value] : f.metadata()) {
    if (f.find(key) != &value) broken("find() of a key gives another value");
    visit(value, 0);
  }
  const uint64_t a = f.alignment();
  if (a == 0 || (a & (a - 1)) != 0) broken("an alignment that is no power of two");
  const auto* begin =
      reinterpret_cast<const unsigned char*>(f.view(GgufTensor{}).keep.view().data());
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const GgufTensor& t : f.tensors()) {
    if (f.find_tensor(t.name) != &t) broken("find_tensor() gives another tensor");
    if (t.shape.empty() || t.shape.size() > 4)
      broken("a tensor of rank " + std::to_string(t.shape.size()));
    for (int64_t d : t.shape) {
      if (d < 1) broken("a dimension under 1");
    }
    const ElementTraits& e = element_traits(t.type);
    if (t.shape.back() % e.block_cells != 0) broken("rows that are not whole blocks");
    const BinaryArray view = f.view(t);
    if (t.bytes != cells_bytes(t.type, static_cast<uint64_t>(view.size()))) {
      broken("a tensor's bytes are not what its shape needs");
    }
    if (t.offset % a != 0 || f.data_offset() % a != 0) broken("a tensor not aligned");
    if (view.data < begin || f.data_offset() + t.offset > data.size() ||
        t.bytes > data.size() - f.data_offset() - t.offset) {
      broken("a tensor outside the file");
    }
    spans.emplace_back(t.offset, t.offset + t.bytes);
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].first < spans[i - 1].second) broken("overlapping tensors");
  }
  for (size_t i = 0; i < f.tensors().size() && i < kMaxTensors; ++i) {
    const GgufTensor& t = f.tensors()[i];
    try {
      const Tensor<double> v = f.read(t, CellKind::kExtended, kMaxBytes, kMaxElements);
      const BinaryArray view = f.view(t);
      for (int64_t k : {int64_t{0}, view.size() / 2, view.size() - 1}) {
        if (!same(view.at(k), v.data()[k])) broken("a view's cell is not the cell read");
      }
    } catch (const Error& e) {
      swallow(e);
    }
  }
}

}  // namespace

void gguf_file(std::string_view data) {
  try {
    check(data);
  } catch (const Error& e) {
    swallow(e);
  }
}

}  // namespace attn::fuzz
