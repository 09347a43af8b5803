// The float32 products with weights at the baseline flags, with GCC's
// generic vectors.
#include "kernel/isa_region.h"

namespace attn::kernel::generic {
#include "kernel/simd.h"

#include "kernel/linear_kernel_impl.h"
}  // namespace attn::kernel::generic
