// A thin SIMD layer for the attention kernels: one vector of float or
// double with load, store, broadcast, fused multiply-add, max and a
// vectorized exp. With AVX-512 (64 bytes) or AVX2+FMA (32 bytes) the
// operations are intrinsics; the generic build uses GCC's vector
// extensions at the baseline flags, the same code paths, just slower.
//
// Each instruction set has its own file with the whole set of operations
// (kIsa, kVectorBytes, splat_impl, fma, vmax, vmin, all_less, hsum, hmax,
// and SoftmaxExp2 and Exp2Assemble for the softmax's exponential):
// simd_avx512.h, simd_avx2.h, simd_generic.h, on the vector types of
// simd_base.h. simd_math.h then builds the exponentials and the tanh on
// them, the same code for all; this file picks the one of the ISA region.
//
// Not a normal header: attention_kernel_<isa>.cc includes it inside its own
// namespace, after kernel/isa_region.h (which includes everything this
// file uses) and with ATTN_SIMD_AVX512, ATTN_SIMD_AVX2 or neither defined.
// The choice cannot come from the compiler's __AVX2__ and __AVX512F__: g++
// does not define them under #pragma GCC target, clang under its attribute
// pragma neither.
#ifndef ATTN_KERNEL_ISA_REGION
#error "kernel/simd.h is included by kernel/attention_kernel_<isa>.cc only"
#endif

#if defined(ATTN_SIMD_AVX512)
#include "kernel/simd_avx512.h"
#elif defined(ATTN_SIMD_AVX2)
#include "kernel/simd_avx2.h"
#else
#include "kernel/simd_generic.h"
#endif

#include "kernel/simd_math.h"
