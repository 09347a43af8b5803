// The embedded example documents (generated into the build directory).
#pragma once

#include <cstddef>

namespace attn::detail {

struct EmbeddedExample {
  const char* name;
  const char* text;
};

extern const EmbeddedExample kExamples[];
extern const size_t kExampleCount;

}  // namespace attn::detail
