// The forward pass's products with weight matrices in float32, y = x · W,
// on the weights as the checkpoint's file holds them (mapped, bfloat16,
// float32 or another cell type).
//
// A general GEMM (OpenBLAS's sgemm) wants float32 operands: the weights
// would be widened into a float32 copy, and the GEMM would then read that
// copy again to pack it into the panels its register tiles read. Here the
// packing widens: each panel of outputs is read once from the file, widened
// exactly (a bfloat16 is the top half of a float32), checked finite and
// transposed into the panel in one pass, and the panel is multiplied by
// every row of x while it is in the cache. The register tiles are the
// attention kernel's (an outer product of rows of x and a panel), compiled
// per instruction set like it (linear_kernel_<isa>.cc, kernel_isa()).
#pragma once

#include <cstdint>

#include "attn/binary_array.h"

namespace attn::kernel {

// One weight matrix as its file holds it: rows x cols cells of `type`,
// row-major. With out_major its rows are the outputs ([out][in], torch's
// nn.Linear: y = x · Wᵀ), else its inputs ([in][out], GPT-2's Conv1D:
// y = x · W).
struct LinearWeight {
  const unsigned char* data = nullptr;
  ElementType type = ElementType::kF32;
  int64_t rows = 0, cols = 0;
  bool out_major = true;

  int64_t outputs() const { return out_major ? rows : cols; }
  int64_t inputs() const { return out_major ? cols : rows; }
};

// The rows x must have room for: n rounded up to linear_row_block(). The
// rows past n are read (their products are dropped), so they must be
// initialised; zeros will do.
int64_t linear_row_block();

// y[r][...] for r < n: the rows of x (n rows of `in` floats, row-major,
// padded as linear_row_block() says) times each of the `count` weights,
// whose outputs lie side by side in y's rows (ldy floats apart), weight 0's
// first. Every weight must have `in` inputs. On up to `threads` threads of
// parallel_for; the result does not depend on their number.
//
// Returns false when a weight holds a cell that is not finite as a float
// (NaN, an infinity, or a float64 past float32's range); y is then
// unspecified.
bool linear_f32(const float* x, int64_t n, int64_t in, const LinearWeight* w, int count, float* y,
                int64_t ldy, int threads);

}  // namespace attn::kernel
