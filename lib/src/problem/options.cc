#include "attn/options.h"

#include "attn/error.h"

#include <cmath>

#include "base/number_text.h"
#include "problem/variant_unit.h"

namespace attn {

namespace {

template <class E>
struct Names {
  std::vector<std::string> names;
  std::vector<E> values;
};

template <class E>
std::optional<E> lookup(const Names<E>& table, std::string_view s) {
  for (size_t i = 0; i < table.names.size(); ++i) {
    if (table.names[i] == s) return table.values[i];
  }
  return std::nullopt;
}

template <class E>
std::string_view reverse(const Names<E>& table, E value) {
  for (size_t i = 0; i < table.values.size(); ++i) {
    if (table.values[i] == value) return table.names[i];
  }
  return "?";
}

const Names<Mode>& modes() {
  static const Names<Mode> t{{"self", "cross", "qkv"}, {Mode::kSelf, Mode::kCross, Mode::kQkv}};
  return t;
}

// The variants' names are their registry's (variants/registry.cc).
const Names<Variant>& variants() {
  static const Names<Variant> t = [] {
    Names<Variant> n;
    for (const detail::VariantUnit* u : detail::variant_units()) {
      n.names.emplace_back(u->name);
      n.values.push_back(u->id);
    }
    return n;
  }();
  return t;
}

const Names<ScaleKind>& scales() {
  static const Names<ScaleKind> t{{"sqrt_dk", "none", "dk", "cosine", "norm", "long_seq"},
                                  {ScaleKind::kSqrtDk, ScaleKind::kNone, ScaleKind::kDk,
                                   ScaleKind::kCosine, ScaleKind::kNorm, ScaleKind::kLongSeq}};
  return t;
}

const Names<ScaleAt>& scale_ats() {
  static const Names<ScaleAt> t{{"scores", "output"}, {ScaleAt::kScores, ScaleAt::kOutput}};
  return t;
}

const Names<MaskConvention>& conventions() {
  static const Names<MaskConvention> t{{"block", "keep"},
                                       {MaskConvention::kBlock, MaskConvention::kKeep}};
  return t;
}

const Names<FullyMasked>& fully_maskeds() {
  static const Names<FullyMasked> t{
      {"zero", "uniform", "nan", "error"},
      {FullyMasked::kZero, FullyMasked::kUniform, FullyMasked::kNan, FullyMasked::kError}};
  return t;
}

const Names<ParamsLayout>& layouts() {
  static const Names<ParamsLayout> t{{"math", "torch"},
                                     {ParamsLayout::kMath, ParamsLayout::kTorch}};
  return t;
}

const Names<DType>& dtypes() {
  static const Names<DType> t{{"f64", "f32"}, {DType::kF64, DType::kF32}};
  return t;
}

const Names<RopeLayout>& rope_layouts() {
  static const Names<RopeLayout> t{{"half", "interleaved"},
                                   {RopeLayout::kHalf, RopeLayout::kInterleaved}};
  return t;
}

}  // namespace

std::string_view name(Mode m) { return reverse(modes(), m); }
std::string_view name(Variant v) { return reverse(variants(), v); }
std::string_view name(ScaleKind s) {
  if (s == ScaleKind::kValue) return "value";
  return reverse(scales(), s);
}
std::string name(const Scale& s) {
  if (s.kind == ScaleKind::kValue) return format_shortest(s.value);
  return std::string(name(s.kind));
}
std::string_view name(ScaleAt s) { return reverse(scale_ats(), s); }
std::string_view name(MaskConvention m) { return reverse(conventions(), m); }
std::string_view name(FullyMasked f) { return reverse(fully_maskeds(), f); }
std::string_view name(ParamsLayout p) { return reverse(layouts(), p); }
std::string_view name(DType d) { return reverse(dtypes(), d); }
std::string_view name(RopeLayout l) { return reverse(rope_layouts(), l); }

const std::vector<std::string>& mode_names() { return modes().names; }
const std::vector<std::string>& variant_names() { return variants().names; }
const std::vector<std::string>& scale_names() { return scales().names; }
const std::vector<std::string>& scale_at_names() { return scale_ats().names; }
const std::vector<std::string>& mask_convention_names() { return conventions().names; }
const std::vector<std::string>& fully_masked_names() { return fully_maskeds().names; }
const std::vector<std::string>& params_layout_names() { return layouts().names; }
const std::vector<std::string>& dtype_names() { return dtypes().names; }
const std::vector<std::string>& rope_layout_names() { return rope_layouts().names; }

std::optional<Mode> parse_mode(std::string_view s) { return lookup(modes(), s); }
std::optional<Variant> parse_variant(std::string_view s) { return lookup(variants(), s); }
std::optional<ScaleAt> parse_scale_at(std::string_view s) { return lookup(scale_ats(), s); }
std::optional<MaskConvention> parse_mask_convention(std::string_view s) {
  return lookup(conventions(), s);
}
std::optional<FullyMasked> parse_fully_masked(std::string_view s) {
  return lookup(fully_maskeds(), s);
}
std::optional<ParamsLayout> parse_params_layout(std::string_view s) { return lookup(layouts(), s); }
std::optional<DType> parse_dtype(std::string_view s) { return lookup(dtypes(), s); }
std::optional<RopeLayout> parse_rope_layout(std::string_view s) {
  return lookup(rope_layouts(), s);
}

std::optional<Scale> parse_scale(std::string_view s) {
  if (auto k = lookup(scales(), s)) return Scale{*k, 1.0};
  double v = 0;
  if (parse_number_word(s, &v)) return Scale{ScaleKind::kValue, v};
  return std::nullopt;
}

}  // namespace attn
