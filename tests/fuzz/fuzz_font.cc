// libFuzzer target: the bytes of a --font file (font_entry.cc).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "font_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::fuzz::font_file(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
