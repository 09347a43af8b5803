// libFuzzer target: a tokenizer.json and a text after its first NUL byte
// (attn tokenize --tokenizer FILE TEXT).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::fuzz::tokenizer_text(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
