// The forward pass's matrix products with weights: x · Wᵀ for a weight
// stored [out][in] (torch's nn.Linear) or x · W for [in][out] (GPT-2's
// Conv1D), in float64 or float32.
//
// The weight's outputs are cut into blocks, one task each on attn's thread
// pool: a task widens its block from the mapped checkpoint (bf16 and f16
// exactly) into the product's precision, checks it finite, and multiplies
// it with OpenBLAS's GEMM on that thread. OpenBLAS itself runs one thread:
// its own threads beside the pool's would be four threads on two cores,
// spinning in sched_yield (PyTorch with torch.set_num_threads(2) over
// Debian's OpenBLAS does exactly that, and runs at a third of its speed).
#pragma once

#include <cstdint>
#include <string>

#include "attn/binary_array.h"
#include "attn/options.h"
#include "attn/problem.h"

namespace attn::detail {

// x [n][in] times the weight in `w` (a view of the file's cells, or of
// doubles): [out][in] with `transposed` (x · Wᵀ), else [in][out]. Every
// weight is checked finite (an input error naming `name`).
MatrixR multiply(const MatrixR& x, const BinaryArray& w, bool transposed, DType dtype, int threads,
                 const std::string& name);

// The same for a weight already read as doubles.
MatrixR multiply(const MatrixR& x, const Tensor<double>& w, bool transposed, DType dtype,
                 int threads, const std::string& name);

}  // namespace attn::detail
