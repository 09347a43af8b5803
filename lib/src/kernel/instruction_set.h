// The instruction set the attention kernels were compiled for, checked
// against the CPU that runs them, for `attn --version`.
#pragma once

#include <string>

namespace attn::kernel {

// "AVX-512", "AVX2+FMA", "SSE2" (GCC's generic vectors) or "scalar"; with
// " (not supported by this CPU)" when the CPU lacks what the kernels use.
std::string instruction_set();

}  // namespace attn::kernel
