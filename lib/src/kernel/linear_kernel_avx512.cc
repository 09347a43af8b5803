// The float32 products with weights for AVX-512 (see
// attention_kernel_avx512.cc for how the region works).
#include "kernel/isa_region.h"

#if defined(__x86_64__)
#define ATTN_SIMD_AVX512 1
ATTN_ISA_REGION_BEGIN("avx2,fma,avx512f,avx512dq,avx512bw,avx512vl")
namespace attn::kernel::avx512 {
#include "kernel/simd.h"

#include "kernel/linear_kernel_impl.h"
}  // namespace attn::kernel::avx512
ATTN_ISA_REGION_END
#endif
