// Cells of binary arrays (.npy, .safetensors, .npz members): little-endian
// integers as the formats store them, where a cell is, for messages, and
// the check that every cell has the kind its role
// needs (finite numbers, 0/1 mask cells, counts).
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/json_tensor.h"
#include "attn/tensor.h"

namespace attn::detail {

// The n-byte little-endian unsigned integer at p (n <= 8).
inline uint64_t load_le(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// "w.npy[3][1]" for flat index 7 of shape (4, 2).
std::string cell_place(const std::string& name, const Shape& shape, int64_t flat);

// Throws attn::Error (kInput) at the first cell `kind` refuses, naming its
// index. single_precision: the values came from 32 bits or fewer and are
// printed as such ("0.1", not "0.100000001").
void check_cells(const Values<double>& v, const Shape& shape, const std::string& name,
                 CellKind kind, bool single_precision);

// Throws attn::Error (kInput) naming the tensor, its shape and
// --max-elements when `count` cells (of `shape`) are more than
// max_elements: called from a file's header, before the cells are
// decoded or memory is allocated for them.
void check_element_count(const Shape& shape, int64_t count, const std::string& name,
                         int64_t max_elements);

// Throws attn::Error (kInput) naming `name` and --max-input-bytes when
// `bytes` (a file, a tensor's or a member's bytes) are more than max_bytes.
void check_input_bytes(const std::string& name, uint64_t bytes, int64_t max_bytes);

}  // namespace attn::detail
