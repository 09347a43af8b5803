// libFuzzer target: arbitrary words as the arguments of the whole program
// (flag parsing, flag values, and the run they configure).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::fuzz::flag_words(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
