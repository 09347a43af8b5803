// libFuzzer target: safetensors files and .npz archives, read tensor by
// tensor and member by member.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::fuzz::binary_archive(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
