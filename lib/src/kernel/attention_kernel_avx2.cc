// The attention kernels for x86-64 CPUs with AVX2 and FMA (256-bit
// vectors), compiled for them inside this file only (kernel/isa_region.h).
#include "kernel/isa_region.h"

#if defined(__x86_64__)
#define ATTN_SIMD_AVX2 1
ATTN_ISA_REGION_BEGIN("avx2,fma")
namespace attn::kernel::avx2 {
#include "kernel/simd.h"

#include "kernel/attention_kernel_impl.h"
}  // namespace attn::kernel::avx2
ATTN_ISA_REGION_END
#endif
