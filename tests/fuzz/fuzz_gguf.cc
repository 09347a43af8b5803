// libFuzzer target: GGUF files through their reader (gguf_entry.cc).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::fuzz::gguf_file(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
