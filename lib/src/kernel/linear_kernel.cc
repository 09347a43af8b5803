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

bool linear(const float* x, int64_t n, int64_t in, const LinearWeight* w, int count, float* y,
            int64_t ldy, int threads) {
  return linear_kernels_for(kernel_isa()).f32(x, n, in, w, count, y, ldy, threads);
}

bool linear(const double* x, int64_t n, int64_t in, const LinearWeight* w, int count, double* y,
            int64_t ldy, int threads) {
  return linear_kernels_for(kernel_isa()).f64(x, n, in, w, count, y, ldy, threads);
}

void gate_f32(const float* gate_up, int64_t n, int64_t width, int64_t ld, GateKind kind, float* out,
              int64_t ldo, int threads) {
  linear_kernels_for(kernel_isa()).gate_f32(gate_up, n, width, ld, kind, out, ldo, threads);
}

}  // namespace attn::kernel
