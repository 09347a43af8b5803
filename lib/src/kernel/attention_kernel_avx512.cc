// The attention kernels for x86-64 CPUs with AVX-512 F, DQ, BW and VL
// (512-bit vectors, 32 registers), compiled for them inside this file only
// (kernel/isa_region.h). instruction_set.cc checks the same features.
#include "kernel/isa_region.h"

#if defined(__x86_64__)
#define ATTN_SIMD_AVX512 1
ATTN_ISA_REGION_BEGIN("avx2,fma,avx512f,avx512dq,avx512bw,avx512vl")
namespace attn::kernel::avx512 {
#include "kernel/simd.h"

#include "kernel/attention_kernel_impl.h"
}  // namespace attn::kernel::avx512
ATTN_ISA_REGION_END
#endif
