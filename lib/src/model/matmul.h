// The forward pass's matrix products with weights: x · Wᵀ for a weight
// stored [out][in] (torch's nn.Linear) or x · W for [in][out] (GPT-2's
// Conv1D), in float64 or float32.
//
// float32: kernel/linear_kernel.h's kernel, which widens the weights from
// the mapped checkpoint (bf16 and f16 exactly) as it packs them, and
// checks them finite there.
//
// float64: the weight's outputs are cut into blocks, one task each on
// attn's thread pool: a task widens its block into doubles, checks it
// finite, and multiplies it with OpenBLAS's dgemm on that thread. OpenBLAS
// itself runs one thread: its own threads beside the pool's would be four
// threads on two cores, spinning in sched_yield (PyTorch with
// torch.set_num_threads(2) over Debian's OpenBLAS does exactly that, and
// runs at a third of its speed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/binary_array.h"
#include "attn/options.h"
#include "attn/problem.h"

namespace attn::detail {

// x [n][in] times the weight in `w` (a view of the file's cells, or of
// doubles): [out][in] with `transposed` (x · Wᵀ), else [in][out]. Every
// weight is checked finite (an input error naming `name`).
MatrixR multiply(const MatrixR& x, const BinaryArray& w, bool transposed, DType dtype, int threads,
                 const std::string& name);

// One weight of multiply_f32: the view, its layout and its name for errors.
struct NamedWeight {
  const BinaryArray* w;
  bool transposed;
  std::string name;
};

// x times each weight in float32, in one pass of the threads (the keys',
// queries' and values' projections of a layer, or an MLP's gate and up):
// one matrix per weight, in their order.
std::vector<MatrixR> multiply_f32(const MatrixR& x, const std::vector<NamedWeight>& ws,
                                  int threads);

// The same for a weight already read as doubles.
MatrixR multiply(const MatrixR& x, const Tensor<double>& w, bool transposed, DType dtype,
                 int threads, const std::string& name);

}  // namespace attn::detail
