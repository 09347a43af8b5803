// Dropout: inverted dropout on the attention weights with the project's own
// counter-based generator, so a seed gives the same mask on every platform
// and library (std:: distributions differ between implementations).
//
// Cell (b, h, i, j) of a problem with H heads, len_q queries and len_k keys
// has counter c = ((b*H + h)*len_q + i)*len_k + j. It is kept when
//   u = (mix(seed ^ mix(c)) >> 11) * 2^-53  >=  p
// and a kept weight is divided by (1 - p). mix() is SplitMix64's finalizer:
//   z += 0x9E3779B97F4A7C15; z = (z ^ z>>30) * 0xBF58476D1CE4E5B9;
//   z = (z ^ z>>27) * 0x94D049BB133111EB; return z ^ z>>31   (mod 2^64)
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <cstdint>

namespace attn {

uint64_t splitmix64_mix(uint64_t z);

// The uniform number in [0, 1) of a counter under a seed.
double dropout_uniform(uint64_t seed, uint64_t counter);

inline bool dropout_keep(uint64_t seed, uint64_t counter, double p) {
  return dropout_uniform(seed, counter) >= p;
}

}  // namespace attn
