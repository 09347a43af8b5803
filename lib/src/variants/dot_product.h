// What scaled_dot and dot share: the product Q·Kᵀ that the SIMD kernels
// also compute, the projections and output projection of multi-head
// attention, the bound on the product and its trace words and PyTorch
// line. The two differ only in their default scale (scaled_dot.cc, dot.cc).
#pragma once

#include "problem/variant_unit.h"

namespace attn::detail::dot_product {

// The unit of a dot-product variant with its name and default scale.
VariantUnit unit(Variant id, std::string_view name, ScaleKind default_scale, bool torch_mha);

}  // namespace attn::detail::dot_product
