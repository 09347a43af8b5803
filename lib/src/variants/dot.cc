// dot: softmax(Q·Kᵀ)·V, Luong's dot score, unscaled unless a scale is given.
#include "variants/dot_product.h"

namespace attn::detail {

const VariantUnit& dot_variant() {
  static const VariantUnit u = dot_product::unit(Variant::kDot, "dot", ScaleKind::kNone, false);
  return u;
}

}  // namespace attn::detail
