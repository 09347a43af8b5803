// The forward pass's matrix products with weights: x · Wᵀ for a weight
// stored [out][in] (torch's nn.Linear) or x · W for [in][out] (GPT-2's
// Conv1D), in float64 or float32.
//
// Both precisions run kernel/linear_kernel.h's kernel on attn's thread
// pool, which widens the weights from the mapped checkpoint (bf16 and f16
// exactly) as it packs them, and checks them finite there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/binary_array.h"
#include "attn/options.h"
#include "attn/problem.h"
#include "kernel/linear_kernel.h"

namespace attn::detail {

// x [n][in] times the weight in `w` (a view of the file's cells, or of
// doubles: view_of): [out][in] with `transposed` (x · Wᵀ), else
// [in][out]. Every weight is checked finite (an input error naming `name`).
MatrixR multiply(const MatrixR& x, const BinaryArray& w, bool transposed, DType dtype, int threads,
                 const std::string& name);

// One weight of a product: the view, its layout (as multiply's
// `transposed`) and its name for errors.
struct NamedWeight {
  const BinaryArray* w;
  bool transposed;
  std::string name;
};

// x times each weight: one matrix per weight, in their order. In float32
// the weights share one pass of the threads (a layer's query, key and
// value projections, or an MLP's gate and up).
std::vector<MatrixR> multiply(const MatrixR& x, const std::vector<NamedWeight>& ws, DType dtype,
                              int threads);

// down(act(x · gate) ⊙ (x · up)) in float32 from end to end (an MLP of
// Llama's or Gemma's kind under --dtype f32): the products in one pass for
// gate and up, the activation on the floats (kernel::gate_f32), no
// float64 copy between. The caller has checked that the shapes chain.
MatrixR gated_mlp_f32(const MatrixR& x, const NamedWeight& gate, const NamedWeight& up,
                      const NamedWeight& down, kernel::GateKind kind, int threads);

// A weight already read as doubles, as the view the products take (it
// points into t, which must outlive it).
BinaryArray view_of(const Tensor<double>& t);

}  // namespace attn::detail
