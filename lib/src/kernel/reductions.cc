// The overflow guard's reductions: each calls the build for the
// instruction set kernel_isa() chose.
#include "kernel/reductions.h"

#include "kernel/kernels.h"

namespace attn::kernel {

double max_row_square(const double* x, int64_t rows, int64_t d) {
  return kernels_for(kernel_isa()).max_row_square(x, rows, d);
}

double largest_abs_finite(const double* x, int64_t n) {
  return kernels_for(kernel_isa()).largest_abs_finite(x, n);
}

}  // namespace attn::kernel
