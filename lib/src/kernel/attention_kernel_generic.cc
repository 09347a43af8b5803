// The attention kernels at the baseline flags, with GCC's generic vectors:
// for CPUs without AVX2 and FMA, and for every CPU that is not x86-64.
#include "kernel/isa_region.h"

namespace attn::kernel::generic {
#include "kernel/simd.h"

#include "kernel/attention_kernel_impl.h"
}  // namespace attn::kernel::generic
