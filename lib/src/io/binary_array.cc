#include "attn/binary_array.h"

#include <algorithm>

#include "attn/error.h"
#include "io/cells.h"
#include "io/element_types.h"
#include "io/ggml_blocks.h"
#include "kernel/parallel.h"

namespace attn {

int element_size(ElementType t) { return static_cast<int>(element_traits(t).block_bytes); }

int64_t block_cells(ElementType t) { return element_traits(t).block_cells; }

uint64_t cells_bytes(ElementType t, uint64_t n) {
  const ElementTraits& e = element_traits(t);
  return n / static_cast<uint64_t>(e.block_cells) * static_cast<uint64_t>(e.block_bytes);
}

bool single_precision(ElementType t) {
  const ElementTraits& e = element_traits(t);
  return e.floating && t != ElementType::kF64;
}

const char* safetensors_dtype_name(ElementType t) { return element_traits(t).name; }

bool safetensors_dtype(std::string_view name, ElementType& out) {
  for (const ElementTraits& e : element_type_table()) {
    if (e.safetensors && name == e.name) {
      out = e.type;
      return true;
    }
  }
  return false;
}

double decode_cell(const unsigned char* p, ElementType t) {
  const ElementTraits& e = element_traits(t);
  if (e.block_cells == 1) {
    double x = 0;
    e.to_double(p, &x, 1);
    return x;
  }
  float block[ggml::kQKK] = {};
  e.to_float(p, block, e.block_cells);
  return block[0];
}

void decode_cells(const unsigned char* p, ElementType t, int64_t n, double* out) {
  const ElementTraits& e = element_traits(t);
  // Whole blocks, then the first cells of one more.
  const int64_t whole = n / e.block_cells * e.block_cells;
  e.to_double(p, out, whole);
  if (whole == n) return;
  float block[ggml::kQKK] = {};
  e.to_float(p + cells_bytes(t, static_cast<uint64_t>(whole)), block, e.block_cells);
  for (int64_t k = whole; k < n; ++k) out[k] = block[k - whole];
}

double decode_cell_at(const unsigned char* data, ElementType t, int64_t flat) {
  const int64_t cells = block_cells(t);
  double block[ggml::kQKK];
  const int64_t first = flat / cells * cells;
  decode_cells(data + cells_bytes(t, static_cast<uint64_t>(first)), t, cells, block);
  return block[flat - first];
}

Tensor<double> BinaryArray::to_tensor(const std::string& name, CellKind kind,
                                      int64_t max_elements) const {
  detail::check_element_count(shape, size(), name, max_elements);
  Values<double> v(static_cast<size_t>(size()));  // every cell decoded below
  // A layer's weights are millions of cells: decoded in chunks on every
  // thread (the chunks are disjoint, so the cells are the same). A chunk
  // is whole blocks of every block type (256 cells at most).
  constexpr int64_t kChunk = int64_t{1} << 18;
  const int64_t chunks = (size() + kChunk - 1) / kChunk;
  kernel::parallel_for(chunks, kernel::hardware_threads(), [&](int64_t c, int) {
    const int64_t from = c * kChunk, n = std::min(kChunk, size() - from);
    decode_cells(data + cells_bytes(type, static_cast<uint64_t>(from)), type, n, v.data() + from);
  });
  keep.check_intact(name);  // before the cells are checked: zeros from a cut file
  check_bools(name);
  detail::check_cells(v, shape, name, kind, single_precision(type));
  return Tensor<double>(shape, std::move(v));
}

void BinaryArray::check_bools(const std::string& name) const {
  if (type != ElementType::kBool) return;
  for (int64_t i = 0; i < size(); ++i) {
    if (data[i] > 1) {
      throw_input(detail::cell_place(name, shape, i),
                  "a bool cell holds the byte " + std::to_string(data[i]) + "; bools are 0 or 1");
    }
  }
}

}  // namespace attn
