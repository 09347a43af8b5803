// The cell types of binary arrays as one table of traits, as ggml's
// type_traits[]: for each ElementType its name, where GGUF numbers it, how
// many cells a block holds (1 for a scalar type) in how many bytes, and
// the functions that decode a run of blocks. Everything that asks what a
// type is (its size, its name, whether it is a float, how to decode it)
// asks this table; a new type is a row.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/binary_array.h"

namespace attn {

struct ElementTraits {
  ElementType type;
  // safetensors' dtype name for a scalar type, ggml's (upper case) for a
  // block type: "F32", "BF16", "Q4_K", "IQ4_NL".
  const char* name;
  // The type's number in GGUF (ggml's enum ggml_type); -1 where ggml has
  // no such type (unsigned integers, bool, float8).
  int ggml_type;
  int64_t block_cells;  // 1 for a scalar type
  int64_t block_bytes;  // bytes of one block (of one cell)
  bool floating;        // its cells are floating-point numbers
  bool safetensors;     // a safetensors dtype
  // The narrowest float the values were stored in, for a check's default
  // tolerance: "f32", "f16", "bf16" (float8 and the block types: coarser
  // still), "" for float64 and integers.
  const char* stored;
  // n cells (a multiple of block_cells) from the blocks at `blocks`, as
  // ggml's to_float: bit for bit its dequantize_row_* and its
  // GGML_FP16_TO_FP32. A float64 or a 64-bit integer is rounded to float.
  void (*to_float)(const unsigned char* blocks, float* out, int64_t n);
  // The same as doubles: exact for every type (a block type's floats
  // widened).
  void (*to_double)(const unsigned char* blocks, double* out, int64_t n);
};

// The row of a type.
const ElementTraits& element_traits(ElementType t);
// Every row, in the order of ElementType.
const std::vector<ElementTraits>& element_type_table();
// The row of a GGUF tensor type (ggml_type); nullptr for a type attn does
// not read.
const ElementTraits* element_traits_of_ggml(uint32_t ggml_type);
// ggml's name of any of its types ("IQ2_XXS" for 16), upper case, for
// messages about the types attn does not read; nullptr for a number that
// is no ggml type.
const char* ggml_type_name(uint32_t ggml_type);

}  // namespace attn
