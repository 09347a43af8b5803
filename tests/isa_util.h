// For tests that run every build of the kernels this CPU can run
// (lib/src/kernel/instruction_set.h).
#pragma once

#include <optional>
#include <vector>

#include "kernel/instruction_set.h"

namespace attn::test {

// The instruction sets built and runnable here, in the order of Isa.
inline std::vector<kernel::Isa> runnable_isas() {
  std::vector<kernel::Isa> isas;
  for (kernel::Isa isa : kernel::built_isas()) {
    if (kernel::cpu_supports(isa)) isas.push_back(isa);
  }
  return isas;
}

// Runs the kernels of one instruction set while in scope.
class UseIsa {
 public:
  explicit UseIsa(kernel::Isa isa) { kernel::force_isa(isa); }
  ~UseIsa() { kernel::force_isa(std::nullopt); }
  UseIsa(const UseIsa&) = delete;
  UseIsa& operator=(const UseIsa&) = delete;
};

}  // namespace attn::test
