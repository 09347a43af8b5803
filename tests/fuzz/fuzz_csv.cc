// libFuzzer target: CSV matrices taken as X (attn run in.csv).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::fuzz::csv_matrix(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
