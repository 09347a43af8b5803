// How one source file holds kernels for an instruction set the rest of the
// program must not use. attention_kernel_avx2.cc, for example, is compiled
// with the baseline flags like every other file and reads:
//
//   #include "kernel/isa_region.h"       // every header, at baseline flags
//   #define ATTN_SIMD_AVX2 1
//   ATTN_ISA_REGION_BEGIN("avx2,fma")    // functions defined from here on
//   namespace attn::kernel::avx2 {       // may use AVX2 and FMA
//   #include "kernel/simd.h"
//   #include "kernel/attention_kernel_impl.h"
//   }
//   ATTN_ISA_REGION_END
//
// Only functions defined between the two macros get the instruction set.
// Inline functions and templates of headers (the standard library's,
// Eigen's, this project's) are all defined before the region, so the copies
// this file emits of them are baseline code like every other file's: the
// linker may keep any one copy of such a symbol for the whole program, and
// with -mavx2 on the file it could keep an AVX2 copy of std::vector code
// that a CPU without AVX2 then runs into (SIGILL). Inside the region every
// function is in the instruction set's namespace and, but for the table
// kKernels, in an anonymous one, so no symbol is shared with another file.
// scripts/check_isa.sh checks the built program for exactly this.
//
// g++ and clang spell the region differently: #pragma GCC target (which
// clang ignores) and #pragma clang attribute (which g++ does not know).
#pragma once

#define ATTN_KERNEL_ISA_REGION 1

// Everything simd.h, attention_kernel_impl.h and reductions_impl.h use.
// They include nothing but each other: a header first included inside the
// region would have its inline functions compiled for the region's
// instruction set.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "attn/options.h"
#include "attn/progress.h"
#include "attn/tensor.h"
#include "base/parallel.h"
#include "io/element_types.h"
#include "kernel/attention_kernel.h"
#include "kernel/dropout.h"
#include "kernel/instruction_set.h"
#include "kernel/kernels.h"
#include "kernel/mask_view.h"

#define ATTN_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define ATTN_ISA_REGION_BEGIN(features) \
  ATTN_PRAGMA(clang attribute push(__attribute__((target(features))), apply_to = function))
#define ATTN_ISA_REGION_END _Pragma("clang attribute pop")
#else
#define ATTN_ISA_REGION_BEGIN(features) \
  _Pragma("GCC push_options") ATTN_PRAGMA(GCC target(features))
#define ATTN_ISA_REGION_END _Pragma("GCC pop_options")
#endif
