// NumPy .npy files: reading one array (format versions 1.0, 2.0 and 3.0,
// C order, little endian, rank 1 to 4, bool/int/uint/float16-64 cells) into a
// tensor of doubles, and writing a tensor as float64 or float32. Everything
// else NumPy can store (Fortran order, big endian, object, complex, string
// and structured arrays) is refused with a message saying what to do.
#pragma once

#include <string>
#include <string_view>

#include "attn/binary_array.h"
#include "attn/file_io.h"
#include "attn/json_tensor.h"
#include "attn/options.h"
#include "attn/tensor.h"

namespace attn {

struct NpyArray {
  Tensor<double> values;
  std::string dtype;  // the file's descr, e.g. "<f8", "|b1"
};

// Parses the bytes of a .npy file; `name` prefixes messages ("w.npy: ...").
// Cells are checked as `kind` says (kFinite rejects NaN/Inf naming the
// index: "w.npy[3][1]: ..."). Sizes in the header are checked against the
// bytes present before anything is allocated. Throws attn::Error (kInput).
NpyArray parse_npy(std::string_view bytes, const std::string& name, CellKind kind);

// The same checks, then a view of the cells where they lie (a memory-mapped
// file is not read), for arrays of rank 1 to max_rank.
BinaryArray view_npy(FileBytes bytes, const std::string& name, int max_rank);

// The bytes of a .npy file (version 1.0, C order) holding t as '<f8'
// (DType::kF64) or '<f4' (kF32), readable by numpy.load.
std::string format_npy(const Tensor<double>& t, DType dtype);

}  // namespace attn
