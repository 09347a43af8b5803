#include "kernel/instruction_set.h"

#include <atomic>
#include <cstdlib>

#include "attn/error.h"

namespace attn::kernel {

namespace {

// The x86-64 kernels are compiled with #pragma GCC target inside their own
// files; other targets have the generic ones only.
#if defined(__x86_64__)
constexpr bool kX86 = true;
#else
constexpr bool kX86 = false;
#endif

constexpr int kNotForced = -1;
std::atomic<int> forced{kNotForced};

}  // namespace

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return "AVX-512";
    case Isa::kAvx2:
      return "AVX2+FMA";
    case Isa::kGeneric:
      break;
  }
  return "generic";
}

std::string_view isa_key(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kGeneric:
      break;
  }
  return "generic";
}

const std::vector<Isa>& built_isas() {
  static const std::vector<Isa> isas =
      kX86 ? std::vector<Isa>{Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}
           : std::vector<Isa>{Isa::kGeneric};
  return isas;
}

bool cpu_supports(Isa isa) {
  if (isa == Isa::kGeneric) return true;
#if defined(__x86_64__)
  // The feature bits checked are the target strings of the kernels' files.
  // libgcc (and compiler-rt) report AVX and AVX-512 only when the operating
  // system also saves their registers (XCR0), so a "yes" is safe to run.
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa == Isa::kAvx2) return avx2;
  return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

Isa best_isa() {
  Isa best = Isa::kGeneric;
  for (Isa isa : built_isas()) {
    if (cpu_supports(isa)) best = isa;
  }
  return best;
}

std::optional<Isa> parse_isa_request(const char* value) {
  if (!value || !*value || std::string_view(value) == "auto") return std::nullopt;
  const std::string_view v(value);
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
    if (v != isa_key(isa)) continue;
    const std::string what = "ATTN_KERNEL=" + std::string(v) + ": ";
    if (!kX86 && isa != Isa::kGeneric) {
      throw_usage(what + "this build has " + std::string(isa_name(isa)) +
                  " kernels on x86-64 only; use generic or auto");
    }
    if (!cpu_supports(isa)) {
      std::string can;
      for (Isa i : built_isas()) {
        if (cpu_supports(i)) can += (can.empty() ? "" : ", ") + std::string(isa_key(i));
      }
      throw_usage(what + "this CPU has no " + std::string(isa_name(isa)) + "; it runs " + can +
                  " or auto");
    }
    return isa;
  }
  throw_usage("ATTN_KERNEL=" + message_text(v) +
              ": unknown kernels; use avx512, avx2, generic or auto (the best this CPU runs)");
}

Isa kernel_isa() {
  const int f = forced.load(std::memory_order_relaxed);
  if (f != kNotForced) return static_cast<Isa>(f);
  // Thread-safe, and retried when it throws: a bad ATTN_KERNEL is reported
  // by every call, never replaced by a default.
  static const Isa chosen = [] {
    const std::optional<Isa> requested = parse_isa_request(std::getenv("ATTN_KERNEL"));
    return requested ? *requested : best_isa();
  }();
  return chosen;
}

void force_isa(std::optional<Isa> isa) {
  if (isa && !cpu_supports(*isa)) {
    throw_internal("force_isa: this CPU has no " + std::string(isa_name(*isa)));
  }
  forced.store(isa ? static_cast<int>(*isa) : kNotForced, std::memory_order_relaxed);
}

std::string instruction_set() {
  const Isa isa = kernel_isa();
  const std::string name(isa_name(isa));
  if (built_isas().size() == 1) return name + " (the only kernels built for this CPU family)";
  std::vector<std::string> others;
  for (Isa i : built_isas()) {
    if (i != isa) others.insert(others.begin(), std::string(isa_name(i)));  // best first
  }
  std::string also;
  for (size_t i = 0; i < others.size(); ++i) {
    also += (i == 0 ? "" : i + 1 == others.size() ? " and " : ", ") + others[i];
  }
  std::string why = "chosen at run time";
  if (forced.load(std::memory_order_relaxed) != kNotForced) {
    why = "forced by a test";
  } else if (parse_isa_request(std::getenv("ATTN_KERNEL"))) {
    why = "set by ATTN_KERNEL";
  }
  return name + " (" + why + "; " + also + " also built)";
}

}  // namespace attn::kernel
