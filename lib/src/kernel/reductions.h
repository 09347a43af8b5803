// The overflow guard's passes over the inputs (engine/score_range.cc,
// engine/norms.h), in the vectors of this CPU. They are built once per
// instruction set with the attention kernels (reductions_impl.h, in each
// attention_kernel_<isa>.cc's table); these entry points run the build
// kernel_isa() chose (kernel/instruction_set.h).
#pragma once

#include <cstdint>

namespace attn::kernel {

// The largest sum of squares of a row of x ([rows][d]; the first that is
// not finite where one is), and the largest |x[i]| (NaN where some x[i] is
// not finite).
double max_row_square(const double* x, int64_t rows, int64_t d);
double largest_abs_finite(const double* x, int64_t n);

}  // namespace attn::kernel
