#include "kernel/instruction_set.h"

// simd.h picks the kernels' vector instructions from the compiler's target
// macros; this file sees the same macros, so it names what the kernels use.
#include "kernel/simd.h"

namespace attn::kernel {

std::string instruction_set() {
  std::string isa;
  bool supported = true;
#if defined(ATTN_SIMD_AVX512)
  isa = "AVX-512";
#if defined(__x86_64__) || defined(__i386__)
  supported = __builtin_cpu_supports("avx512f");
#endif
#elif defined(ATTN_SIMD_AVX2)
  isa = "AVX2+FMA";
#if defined(__x86_64__) || defined(__i386__)
  supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
#elif defined(__SSE2__)
  isa = "SSE2";  // the generic vectors of simd.h, two SSE registers each
#else
  isa = "scalar";
#endif
  if (!supported) isa += " (not supported by this CPU)";
  return isa;
}

}  // namespace attn::kernel
