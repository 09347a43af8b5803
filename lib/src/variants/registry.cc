// The variants of attn, one row each, in documentation order: the one list
// that names, parsing, --help, params, the engine, the limits, the trace
// and --emit-pytorch find a variant in.
#include "attn/error.h"
#include "problem/variant_unit.h"

namespace attn::detail {

// Each defined in the variant's own file.
const VariantUnit& scaled_dot_variant();
const VariantUnit& dot_variant();
const VariantUnit& additive_variant();
const VariantUnit& single_layer_variant();
const VariantUnit& biattention_variant();

const std::vector<const VariantUnit*>& variant_units() {
  static const std::vector<const VariantUnit*> units = {
      &scaled_dot_variant(),   &dot_variant(),         &additive_variant(),
      &single_layer_variant(), &biattention_variant(),
  };
  return units;
}

const VariantUnit& variant_unit(Variant v) {
  for (const VariantUnit* u : variant_units()) {
    if (u->id == v) return *u;
  }
  throw_internal("a Variant without a row in the variant registry");
}

}  // namespace attn::detail
