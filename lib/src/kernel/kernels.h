// The kernels of one instruction set, as a table of entry points. Each
// attention_kernel_<isa>.cc compiles attention_kernel_impl.h inside its own
// namespace (attn::kernel::generic, ::avx2, ::avx512) and exports only its
// table; attention_kernel.cc calls the table of kernel_isa().
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "attn/progress.h"
#include "kernel/attention_kernel.h"
#include "kernel/instruction_set.h"
#include "kernel/linear_kernel.h"

namespace attn::kernel {

template <class T>
struct TypedKernels {
  RunReport (*run_heads)(std::vector<HeadTask<T>>& tasks, const ScoreRules& rules, int threads,
                         const ProgressFn& progress);
  int64_t (*packed_key_elements)(int64_t len_k, int64_t d);
  // y[i] = exp(x[i]) for x[i] <= 0 by the softmax's vectorized exp (for
  // tests): see vexp_softmax_n in simd.h for its error.
  void (*exp)(const T* x, T* y, int64_t n);
  // y[i] = tanh(x[i]), the soft-capping's vectorized tanh (for tests).
  void (*tanh)(const T* x, T* y, int64_t n);
};

struct Kernels {
  Isa isa;
  int vector_bytes;  // the width of the kernels' vectors
  double (*max_row_square)(const double* x, int64_t rows, int64_t d);
  double (*largest_abs_finite)(const double* x, int64_t n);
  TypedKernels<float> f32;
  TypedKernels<double> f64;

  template <class T>
  const TypedKernels<T>& of() const {
    if constexpr (std::is_same_v<T, float>) {
      return f32;
    } else {
      return f64;
    }
  }
};

// The products with weights (kernel/linear_kernel.h) of one instruction
// set: linear_kernel_<isa>.cc compiles linear_kernel_impl.h.
struct LinearKernels {
  bool (*f32)(const float* x, int64_t n, int64_t in, const LinearWeight* w, int count, float* y,
              int64_t ldy, int threads);
  bool (*f64)(const double* x, int64_t n, int64_t in, const LinearWeight* w, int count, double* y,
              int64_t ldy, int threads);
  void (*gate_f32)(const float* gate_up, int64_t n, int64_t width, int64_t ld, GateKind kind,
                   float* out, int64_t ldo, int threads);
};

namespace generic {
extern const Kernels kKernels;
extern const LinearKernels kLinear;
}  // namespace generic
#if defined(__x86_64__)
namespace avx2 {
extern const Kernels kKernels;
extern const LinearKernels kLinear;
}  // namespace avx2
namespace avx512 {
extern const Kernels kKernels;
extern const LinearKernels kLinear;
}  // namespace avx512
#endif

// The tables of `isa`, which must be one of built_isas().
const Kernels& kernels_for(Isa isa);
const LinearKernels& linear_kernels_for(Isa isa);

}  // namespace attn::kernel
