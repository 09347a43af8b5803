// Arrays of little-endian binary cells as they sit in a file (a
// safetensors tensor, a memory-mapped stack of attention weights): the
// element type, the shape and the bytes, read cell by cell as doubles
// without copying the array, so a 1.5 GB stack can be drawn by looking at
// the cells each panel needs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "attn/file_io.h"
#include "attn/json_tensor.h"
#include "attn/tensor.h"

namespace attn {

enum class ElementType {
  kF64,
  kF32,
  kF16,
  kBF16,
  kF8E4M3,  // float8 e4m3fn: no infinities, 0x7f/0xff are NaN
  kF8E5M2,
  kI64,
  kI32,
  kI16,
  kI8,
  kU64,
  kU32,
  kU16,
  kU8,
  kBool,
  // ggml's block types (GGUF files): a block of 32 or 256 cells is a few
  // float16 scales and the cells' quants; a cell is a float.
  kQ4_0,
  kQ4_1,
  kQ5_0,
  kQ5_1,
  kQ8_0,
  kQ2_K,
  kQ3_K,
  kQ4_K,
  kQ5_K,
  kQ6_K,
  kIQ4_NL,
  kIQ4_XS,
};

// Bytes per cell of a scalar type; of a block of block_cells(t) cells
// for a block type.
int element_size(ElementType t);
// Cells per block: 1 for the scalar types, 32 or 256 for ggml's block types.
int64_t block_cells(ElementType t);
// The bytes that n cells take, n a multiple of block_cells(t): where cell n
// of an array starts.
uint64_t cells_bytes(ElementType t, uint64_t n);
// True for the floating types of 32 bits or fewer and the block types
// (their values print as floats: 0.1, not 0.100000001).
bool single_precision(ElementType t);
// The type's name: safetensors' dtype ("F32", "BF16", "BOOL", ...), or
// ggml's for a block type ("Q4_K").
const char* safetensors_dtype_name(ElementType t);
// The type of a safetensors dtype name; false for a name attn does not read.
bool safetensors_dtype(std::string_view name, ElementType& out);

// Decodes one little-endian cell, or n consecutive cells into out. A block
// type's cells are decoded from their block, as ggml's dequantize_row_*
// does: p is the start of a block, and decode_cell gives its first cell.
double decode_cell(const unsigned char* p, ElementType t);
void decode_cells(const unsigned char* p, ElementType t, int64_t n, double* out);
// Cell `flat` of the array of type t at data (its block decoded, for a
// block type).
double decode_cell_at(const unsigned char* data, ElementType t, int64_t flat);

struct BinaryArray {
  ElementType type = ElementType::kF32;
  Shape shape;
  const unsigned char* data = nullptr;  // shape_size(shape) cells
  FileBytes keep;                       // holds the bytes in memory

  int64_t size() const { return shape_size(shape); }
  double at(int64_t flat) const { return decode_cell_at(data, type, flat); }
  // Every cell as a double, checked as `kind` says; `name` places messages
  // ("m.safetensors:attn.w[3][1]: non-finite value ..."). More cells than
  // max_elements (--max-elements) is an input error, raised before
  // anything is allocated or decoded.
  Tensor<double> to_tensor(const std::string& name, CellKind kind,
                           int64_t max_elements = kDefaultMaxElements) const;
  // An input error at the first cell of a BOOL array that is not the byte
  // 0 or 1 (NumPy and PyTorch write nothing else; decoding reads any other
  // byte as true); nothing for other types. Readers check a BOOL tensor
  // where they hand it on, as cells or as a view: every path that reads it
  // (a layer's weights, the forward pass's mapped products, a figure's
  // stack) refuses the same file.
  void check_bools(const std::string& name) const;
};

}  // namespace attn
