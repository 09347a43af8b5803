// The kernels' entry points: each calls the build of the kernels for the
// instruction set kernel_isa() chose (kernel/instruction_set.h).
#include "kernel/attention_kernel.h"

#include "kernel/kernels.h"

namespace attn::kernel {

const Kernels& kernels_for(Isa isa) {
  switch (isa) {
#if defined(__x86_64__)
    case Isa::kAvx512:
      return avx512::kKernels;
    case Isa::kAvx2:
      return avx2::kKernels;
#endif
    default:
      return generic::kKernels;
  }
}

template <class T>
int64_t packed_key_elements(int64_t len_k, int64_t d) {
  return kernels_for(kernel_isa()).of<T>().packed_key_elements(len_k, d);
}

template <class T>
RunReport run_heads(std::vector<HeadTask<T>>& tasks, const ScoreRules& rules, int threads,
                    const ProgressFn& progress) {
  return kernels_for(kernel_isa()).of<T>().run_heads(tasks, rules, threads, progress);
}

template int64_t packed_key_elements<float>(int64_t, int64_t);
template int64_t packed_key_elements<double>(int64_t, int64_t);
template RunReport run_heads<float>(std::vector<HeadTask<float>>&, const ScoreRules&, int,
                                    const ProgressFn&);
template RunReport run_heads<double>(std::vector<HeadTask<double>>&, const ScoreRules&, int,
                                     const ProgressFn&);

}  // namespace attn::kernel
