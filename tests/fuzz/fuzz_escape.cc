// libFuzzer target: arbitrary bytes as a title and labels, through every
// escaping function and writer (text in outputs).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::fuzz::escape_text(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
