#include "kernel/dropout.h"

namespace attn {

uint64_t splitmix64_mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double dropout_uniform(uint64_t seed, uint64_t counter) {
  const uint64_t r = splitmix64_mix(seed ^ splitmix64_mix(counter));
  return static_cast<double>(r >> 11) * 0x1.0p-53;
}

}  // namespace attn
