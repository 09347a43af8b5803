// Cells of binary arrays (.npy, .safetensors, .npz members): where a cell
// is, for messages, and the check that every cell has the kind its role
// needs (finite numbers, 0/1 mask cells, counts).
#pragma once

#include <string>
#include <vector>

#include "attn/json_tensor.h"
#include "attn/tensor.h"

namespace attn::detail {

// "w.npy[3][1]" for flat index 7 of shape (4, 2).
std::string cell_place(const std::string& name, const Shape& shape, int64_t flat);

// Throws attn::Error (kInput) at the first cell `kind` refuses, naming its
// index. single_precision: the values came from 32 bits or fewer and are
// printed as such ("0.1", not "0.100000001").
void check_cells(const std::vector<double>& v, const Shape& shape, const std::string& name,
                 CellKind kind, bool single_precision);

}  // namespace attn::detail
