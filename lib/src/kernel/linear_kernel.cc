// The entry points of kernel/linear_kernel.h: each calls the build for the
// instruction set kernel_isa() chose.
#include "kernel/linear_kernel.h"

#include "kernel/kernels.h"

namespace attn::kernel {

const LinearKernels& linear_kernels_for(Isa isa) {
  switch (isa) {
#if defined(__x86_64__)
    case Isa::kAvx512:
      return avx512::kLinear;
    case Isa::kAvx2:
      return avx2::kLinear;
#endif
    default:
      return generic::kLinear;
  }
}

int64_t linear_row_block() { return linear_kernels_for(kernel_isa()).row_block; }

bool linear_f32(const float* x, int64_t n, int64_t in, const LinearWeight* w, int count, float* y,
                int64_t ldy, int threads) {
  return linear_kernels_for(kernel_isa()).linear_f32(x, n, in, w, count, y, ldy, threads);
}

}  // namespace attn::kernel
