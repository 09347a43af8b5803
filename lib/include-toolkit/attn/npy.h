// NumPy .npy files: reading one array (format versions 1.0, 2.0 and 3.0,
// C order, little endian, rank 1 to 4, bool/int/uint/float16-64 cells) into a
// tensor of doubles, and writing a tensor as float64 or float32. Everything
// else NumPy can store (Fortran order, big endian, object, complex, string
// and structured arrays) is refused with a message saying what to do —
// except the strings ('<U') and booleans an attn result archive (.npz) holds
// for its labels and masked cells, which have their own writers and reader.
#pragma once

#include <string>
#include <string_view>
#include <vector>

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
// bytes present, and the element count against max_elements
// (--max-elements), before anything is allocated. Throws attn::Error
// (kInput).
NpyArray parse_npy(std::string_view bytes, const std::string& name, CellKind kind,
                   int64_t max_elements = kDefaultMaxElements);

// The same checks, then a view of the cells where they lie (a memory-mapped
// file is not read), for arrays of rank 1 to max_rank.
BinaryArray view_npy(FileBytes bytes, const std::string& name, int max_rank);

// The bytes of a .npy file (version 1.0, C order) holding t as '<f8'
// (DType::kF64) or '<f4' (kF32), readable by numpy.load.
std::string format_npy(const Tensor<double>& t, DType dtype);
// format_npy in parts, for a file written while its cells are made: the
// header of an array of `shape`, then the cells of tensors appended in
// order (as format_npy writes them) until `shape` is full.
std::string format_npy_header(const Shape& shape, DType dtype);
void append_npy_cells(std::string& out, const Tensor<double>& t, DType dtype);

// A .npy file of booleans ('|b1'; cells non-zero are True) of `shape`.
std::string format_npy_bool(const uint8_t* cells, const Shape& shape);

// A list of integers as a 1-D int64 .npy ('<i8'): token ids.
std::string format_npy_int64(const std::vector<int64_t>& values);

// A .npy file of UTF-8 strings as NumPy's '<U' (UTF-32, NUL-padded):
// np.load reads it without pickle. A list (rank 1), or with `scalar` one
// string (rank 0, strings.size() == 1).
std::string format_npy_strings(const std::vector<std::string>& strings, bool scalar);

// The strings of a '<U' array of rank 0 or 1, as UTF-8; an input error
// naming `name` for any other array or an invalid code point.
std::vector<std::string> parse_npy_strings(std::string_view bytes, const std::string& name);

}  // namespace attn
