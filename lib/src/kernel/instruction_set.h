// Which build of the attention kernels runs on this CPU. The kernels are
// compiled once per instruction set (attention_kernel_<isa>.cc) and one is
// chosen at run time: the best the CPU has, or the one the environment
// variable ATTN_KERNEL names (for tests and benchmarks).
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::kernel {

// Best last: a CPU that runs one runs every one before it.
enum class Isa {
  kGeneric,  // GCC's generic vectors at the baseline flags (SSE2 on x86-64)
  kAvx2,     // AVX2 and FMA: x86-64 from Intel Haswell and AMD Zen on
  kAvx512,   // AVX-512 F, DQ, BW and VL: Intel Skylake-SP, AMD Zen 4 and later
};

// "generic", "AVX2+FMA", "AVX-512": for people.
std::string_view isa_name(Isa isa);
// "generic", "avx2", "avx512": ATTN_KERNEL's values.
std::string_view isa_key(Isa isa);

// The instruction sets this build has kernels for (all three on x86-64,
// generic elsewhere), in the order of Isa.
const std::vector<Isa>& built_isas();
// Whether this CPU (and its operating system) runs `isa`'s kernels.
bool cpu_supports(Isa isa);
// The best of built_isas() this CPU runs.
Isa best_isa();

// The kernels an ATTN_KERNEL value asks for: nullopt for unset, empty or
// "auto" (the best); a usage error for an unknown name or an instruction
// set this CPU lacks.
std::optional<Isa> parse_isa_request(const char* value);

// The kernels in use: ATTN_KERNEL's, else best_isa(). ATTN_KERNEL is read
// once; a bad value throws the usage error of parse_isa_request, on every
// call.
Isa kernel_isa();

// For tests: from now on run `isa` (which the CPU must support), or go back
// to kernel_isa()'s choice with nullopt. Not to be called while kernels run.
void force_isa(std::optional<Isa> isa);

// For `attn --version`: the kernels in use and why, e.g.
// "AVX2+FMA (chosen at run time; AVX-512 and generic also built)".
std::string instruction_set();

}  // namespace attn::kernel
