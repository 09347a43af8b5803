// The forward pass's products with weight matrices, y = x · W, in float32
// or float64, on the weights as the checkpoint's file holds them (mapped,
// bfloat16, float32 or another cell type).
//
// A general GEMM (a BLAS's sgemm) wants operands of its own type: the
// weights would be widened into a copy, and the GEMM would then read that
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

// y[r][...] for r < n: the rows of x (n rows of `in` cells, row-major)
// times each of the `count` weights, whose outputs lie side by side in y's
// rows (ldy cells apart), weight 0's first. Every weight must have `in`
// inputs. On up to `threads` threads of parallel_for; the result does not
// depend on their number. In float64 every cell type widens exactly.
//
// Returns false when a weight holds a cell that is not finite in the
// product's type (NaN, an infinity, or in float32 a float64 past its
// range); y is then unspecified.
bool linear(const float* x, int64_t n, int64_t in, const LinearWeight* w, int count, float* y,
            int64_t ldy, int threads);
bool linear(const double* x, int64_t n, int64_t in, const LinearWeight* w, int count, double* y,
            int64_t ldy, int threads);

// The activations of a gated MLP (SwiGLU's SiLU, GeGLU's tanh GELU).
enum class GateKind { kSilu, kGeluTanh };

// out[r][c] = act(g) · u for r < n, c < width, where g and u are row r of
// `gate_up` (ld floats apart) at columns c and width + c: an MLP's gate and
// up projections as one call of linear writes them. SiLU is x / (1 + e^-x),
// GELU (tanh) 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), both from the
// attention kernels' vectorised exp and tanh (a few float ulp).
void gate_f32(const float* gate_up, int64_t n, int64_t width, int64_t ld, GateKind kind, float* out,
              int64_t ldo, int threads);

}  // namespace attn::kernel
