// libFuzzer target: safetensors files through their reader alone (binary_entry.cc),
// with the same invariants as fuzz_binary.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::fuzz::safetensors_file(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
