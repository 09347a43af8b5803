// libFuzzer target: a checkpoint's config.json, read through the
// architecture table and run on a tiny checkpoint of its model_type.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::fuzz::checkpoint_config(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
