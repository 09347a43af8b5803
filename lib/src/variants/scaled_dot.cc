// scaled_dot: softmax(Q·Kᵀ/√d_k)·V, "Attention Is All You Need" and
// PyTorch's scaled_dot_product_attention; the default variant.
#include "variants/dot_product.h"

namespace attn::detail {

const VariantUnit& scaled_dot_variant() {
  static const VariantUnit u =
      dot_product::unit(Variant::kScaledDot, "scaled_dot", ScaleKind::kSqrtDk, true);
  return u;
}

}  // namespace attn::detail
