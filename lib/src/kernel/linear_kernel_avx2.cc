// The float32 products with weights for AVX2 and FMA (see
// attention_kernel_avx2.cc for how the region works).
#include "kernel/isa_region.h"

#if defined(__x86_64__)
#define ATTN_SIMD_AVX2 1
ATTN_ISA_REGION_BEGIN("avx2,fma")
namespace attn::kernel::avx2 {
#include "kernel/simd.h"

#include "kernel/linear_kernel_impl.h"
}  // namespace attn::kernel::avx2
ATTN_ISA_REGION_END
#endif
