#include "io/ggml_blocks.h"

#include <cstring>

// Each function follows its dequantize_row_* in ggml-quants.c (the bodies:
// io/ggml_blocks_impl.h, compiled here with -ffp-contract=off).

namespace attn::ggml {
#include "io/ggml_blocks_impl.h"
}  // namespace attn::ggml
