// Building a Problem: settings, inputs and widths. Parameters and masks have
// their own files (params.cc, masks.cc, modern.cc).
#include "attn/problem.h"

#include <cmath>
#include <utility>

#include "attn/error.h"
#include "attn/json.h"
#include "base/number_text.h"
#include "problem/problem_internal.h"
#include "problem/variant_unit.h"

namespace attn {

double scale_factor(const Problem& p) {
  const double dk = static_cast<double>(p.head_dim_q());
  switch (p.scale.kind) {
    case ScaleKind::kSqrtDk:
      return 1.0 / std::sqrt(dk);
    case ScaleKind::kDk:
      return 1.0 / dk;
    case ScaleKind::kLongSeq:
      return 1.0 / std::sqrt(dk * static_cast<double>(p.len_k));
    case ScaleKind::kValue:
      return p.scale.value;
    case ScaleKind::kNone:
    case ScaleKind::kCosine:
    case ScaleKind::kNorm:
      return 1.0;
  }
  return 1.0;
}

namespace detail {

std::string with_shape(const std::string& name, const Shape& shape) {
  return name + " has shape " + shape_string(shape);
}

std::string count(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace detail

namespace {

using detail::count;
using detail::with_shape;

void resolve_settings(const InputDocument& doc, Problem& p) {
  const RunSettings& s = doc.settings;
  p.variant = s.variant.value_or(Variant::kScaledDot);
  if (s.mode) {
    p.mode = *s.mode;
  } else if (doc.Q) {
    p.mode = Mode::kQkv;
  } else if (doc.Y) {
    p.mode = Mode::kCross;
  } else {
    p.mode = Mode::kSelf;
  }
  p.scale_explicit = s.scale.has_value();
  if (s.scale) {
    p.scale = *s.scale;
  } else {
    p.scale = Scale{detail::variant_unit(p.variant).default_scale, 1};
  }
  p.temperature = s.temperature.value_or(1.0);
  p.scale_at = s.scale_at.value_or(ScaleAt::kScores);
  p.mask_fill = s.mask_fill.value_or(-INFINITY);
  p.fully_masked = s.fully_masked.value_or(FullyMasked::kZero);
  p.dropout = s.dropout.value_or(0.0);
  p.seed = s.seed.value_or(0);
  p.params_layout = s.params_layout.value_or(ParamsLayout::kMath);
  p.masks.causal = s.causal.value_or(false);

  const std::string& place = doc.settings_place;
  if (p.scale_at == ScaleAt::kOutput &&
      (p.scale.kind == ScaleKind::kCosine || p.scale.kind == ScaleKind::kNorm)) {
    throw_input(place, "scale_at \"output\" needs a scalar scale factor; scale \"" +
                           std::string(name(p.scale.kind)) + "\" depends on the data");
  }
  if (detail::bidaf_pipeline(p.variant)) {
    if (s.scale || s.temperature || s.heads || s.causal.value_or(false) || s.scale_at) {
      throw_input(place,
                  "biattention takes no scale, temperature, scale_at, heads or causal setting");
    }
  }
}

// The shape of an input with a rank-2 one given a leading batch axis of 1,
// and no values yet: take_values() brings them once every shape is
// checked, without a copy when the document is the caller's to give.
Tensor<double> batched(const Input& in) {
  Shape s = in.tensor.shape();
  if (s.size() == 2) s.insert(s.begin(), 1);
  return Tensor<double>(std::move(s), Values<double>());
}

void check_rank(const Input& in, const std::string& name, int lo, int hi, const char* forms) {
  for (int64_t d : in.tensor.shape()) {
    if (d == 0) {
      throw_input(in.place, "empty (shape " + shape_string(in.tensor.shape()) + "); " + name +
                                " needs at least one position and one feature");
    }
  }
  const int r = in.tensor.rank();
  if (r < lo || r > hi) {
    throw_input(in.place, "expected " + std::string(forms) + ", got " +
                              (r == 0 ? std::string("a single number")
                                      : "an array of rank " + std::to_string(r) + " (shape " +
                                            shape_string(in.tensor.shape()) + ")"));
  }
}

void forbid(const std::optional<Input>& in, const std::string& name, const std::string& why) {
  if (in) throw_input(in->place, name + " is not used " + why);
}

Shape original_shape(const Tensor<double>& t, bool batched) {
  Shape s = t.shape();
  if (!batched) s.erase(s.begin());
  return s;
}

// Modes self and cross: X (and Y) as the query and key/value sources.
void resolve_xy(const InputDocument& doc, Problem& p) {
  const char* xy_forms = "[len][dim] or [batch][len][dim]";
  const std::string mode_text = "in " + std::string(name(p.mode)) + " mode";
  if (!doc.X) {
    if (doc.Q) {
      throw_input(doc.settings_place,
                  "mode " + std::string(name(p.mode)) + " needs X; Q, K, V are used in mode qkv");
    }
    throw_input(doc.source,
                "no input: give X (self attention), X and Y (cross "
                "attention), or Q, K and V");
  }
  forbid(doc.Q, "Q", mode_text + " (use mode qkv)");
  forbid(doc.K, "K", mode_text + " (use mode qkv)");
  forbid(doc.V, "V", mode_text + " (use mode qkv)");
  check_rank(*doc.X, "X", 2, 3, xy_forms);
  p.query_in = batched(*doc.X);
  p.batched = doc.X->tensor.rank() == 3;
  p.batch = p.query_in.dim(0);
  p.query_name = "X";
  if (p.mode == Mode::kSelf) {
    forbid(doc.Y, "Y", "in self mode (use mode cross)");
    p.key_in = p.query_in;
    p.key_name = p.value_name = "X";
  } else {
    if (!doc.Y) throw_input(doc.settings_place, "mode cross needs Y (the context sequence)");
    check_rank(*doc.Y, "Y", 2, 3, xy_forms);
    if (doc.Y->tensor.rank() != doc.X->tensor.rank()) {
      throw_input(doc.Y->place, "has rank " + std::to_string(doc.Y->tensor.rank()) + " (shape " +
                                    shape_string(doc.Y->tensor.shape()) + ") but X has rank " +
                                    std::to_string(doc.X->tensor.rank()) + " (shape " +
                                    shape_string(doc.X->tensor.shape()) + ")");
    }
    p.key_in = batched(*doc.Y);
    if (p.key_in.dim(0) != p.batch) {
      throw_input(doc.Y->place, "batch size " + std::to_string(p.key_in.dim(0)) + " of Y (shape " +
                                    shape_string(doc.Y->tensor.shape()) +
                                    ") does not match X (shape " +
                                    shape_string(doc.X->tensor.shape()) + ")");
    }
    p.key_name = p.value_name = "Y";
  }
  p.value_in = p.key_in;
}

// 4D Q/K/V: K and V carry kv_heads heads (Q's count without grouping),
// and a heads setting must agree with Q's head axis.
void check_head_axes(const InputDocument& doc, const Input& v, Problem& p) {
  const int64_t h = p.query_in.dim(1);
  // K and V with fewer heads than Q, a divisor of them, are grouped-query
  // attention as PyTorch's enable_gqa=True reads them: kv_heads from the
  // shapes when no setting gives it.
  const int64_t k_heads = doc.K->tensor.dim(1);
  if (!doc.settings.kv_heads && k_heads < h && k_heads > 0 && h % k_heads == 0 &&
      v.tensor.dim(1) == k_heads) {
    p.kv_heads_from_shapes = k_heads;
  }
  const int64_t kv = doc.settings.kv_heads.value_or(p.kv_heads_from_shapes > 0 ? k_heads : h);
  for (const Input* other : {&*doc.K, &v}) {
    if (kv != h && other->tensor.dim(1) != kv) {
      throw_input(other->place, "head count " + std::to_string(other->tensor.dim(1)) + " (shape " +
                                    shape_string(other->tensor.shape()) +
                                    ") does not match kv_heads " + std::to_string(kv));
    }
    if (kv == h && other->tensor.dim(1) != h) {
      throw_input(other->place, "head count " + std::to_string(other->tensor.dim(1)) + " (shape " +
                                    shape_string(other->tensor.shape()) +
                                    ") does not match Q (shape " +
                                    shape_string(doc.Q->tensor.shape()) +
                                    "); K and V may have fewer heads than Q when their count "
                                    "divides Q's (grouped-query attention, --kv-heads)");
    }
  }
  if (doc.settings.heads && *doc.settings.heads != h) {
    throw_input(doc.settings_place, "heads " + std::to_string(*doc.settings.heads) +
                                        " does not match the head axis of Q (shape " +
                                        shape_string(doc.Q->tensor.shape()) + ")");
  }
}

// Mode qkv: Q, K and V (V defaults to K) of one rank, batch and length.
void resolve_qkv(const InputDocument& doc, Problem& p) {
  if (!doc.Q || !doc.K) {
    throw_input(doc.settings_place, std::string("mode qkv needs Q and K (V defaults to K)") +
                                        (doc.X ? "; X is the input of modes self and cross" : ""));
  }
  forbid(doc.X, "X", "in qkv mode (use mode self or cross)");
  forbid(doc.Y, "Y", "in qkv mode (use mode cross)");
  const char* forms = "[len][dim], [batch][len][dim] or [batch][heads][len][dim]";
  check_rank(*doc.Q, "Q", 2, 4, forms);
  check_rank(*doc.K, "K", 2, 4, forms);
  const Input& v = doc.V ? *doc.V : *doc.K;
  if (doc.V) check_rank(*doc.V, "V", 2, 4, forms);
  for (const Input* other : {&*doc.K, &v}) {
    if (other->tensor.rank() != doc.Q->tensor.rank()) {
      throw_input(other->place, "rank " + std::to_string(other->tensor.rank()) + " (shape " +
                                    shape_string(other->tensor.shape()) +
                                    ") does not match Q (shape " +
                                    shape_string(doc.Q->tensor.shape()) + ")");
    }
  }
  const int r = doc.Q->tensor.rank();
  p.batched = r >= 3;
  p.four_d = r == 4;
  p.query_in = batched(*doc.Q);
  p.key_in = batched(*doc.K);
  p.value_in = batched(v);
  p.query_name = "Q";
  p.key_name = "K";
  p.value_name = doc.V ? "V" : "K";
  p.batch = p.query_in.dim(0);
  for (const Input* other : {&*doc.K, &v}) {
    if (other->tensor.dim(0) != p.batch && p.batched) {
      throw_input(other->place, "batch size " + std::to_string(other->tensor.dim(0)) + " (shape " +
                                    shape_string(other->tensor.shape()) +
                                    ") does not match Q (shape " +
                                    shape_string(doc.Q->tensor.shape()) + ")");
    }
  }
  if (p.four_d) check_head_axes(doc, v, p);
  const int len_axis = p.four_d ? 2 : 1;
  if (p.value_in.dim(len_axis) != p.key_in.dim(len_axis)) {
    throw_input(v.place, "has " + std::to_string(p.value_in.dim(len_axis)) + " positions (shape " +
                             shape_string(v.tensor.shape()) + ") but K has " +
                             std::to_string(p.key_in.dim(len_axis)) + " (shape " +
                             shape_string(doc.K->tensor.shape()) +
                             "); keys and values come in pairs");
  }
}

// The inputs' values into the problem's tensors, moved out of `own` (the
// document itself, when the caller gave it up) or copied from `doc`. An
// input feeding two tensors (V defaults to K; X is also the keys and
// values in self mode) is copied before it is moved.
void take_values(const InputDocument& doc, InputDocument* own, Problem& p) {
  using Member = std::optional<Input> InputDocument::*;
  const auto copy = [&](Member m) { return (doc.*m)->tensor.values(); };
  const auto take = [&](Member m) { return own ? std::move((own->*m)->tensor.values()) : copy(m); };
  if (p.mode == Mode::kQkv) {
    p.value_in.values() = doc.V ? take(&InputDocument::V) : copy(&InputDocument::K);
    p.key_in.values() = take(&InputDocument::K);
    p.query_in.values() = take(&InputDocument::Q);
    return;
  }
  if (p.mode == Mode::kSelf) {
    p.key_in.values() = copy(&InputDocument::X);
    p.value_in.values() = copy(&InputDocument::X);
  } else {
    p.value_in.values() = copy(&InputDocument::Y);
    p.key_in.values() = take(&InputDocument::Y);
  }
  p.query_in.values() = take(&InputDocument::X);
}

void resolve_inputs(const InputDocument& doc, InputDocument* own, Problem& p) {
  if (p.mode == Mode::kQkv) {
    resolve_qkv(doc, p);
  } else {
    resolve_xy(doc, p);
  }
  take_values(doc, own, p);
  p.query_shape = original_shape(p.query_in, p.batched);
  p.key_shape = original_shape(p.key_in, p.batched);
  p.value_shape = original_shape(p.value_in, p.batched);
  const int len_axis = p.four_d ? 2 : 1;
  p.len_q = p.query_in.dim(len_axis);
  p.len_k = p.key_in.dim(len_axis);
  if (p.four_d) {
    p.heads = p.query_in.dim(1);
  } else {
    p.heads = doc.settings.heads.value_or(1);
  }
}

void resolve_labels(const InputDocument& doc, Problem& p) {
  if (!doc.labels) return;
  const LabelSet& l = *doc.labels;
  // Labels from a flag are the flag's mistake (usage), from a file the file's.
  const bool flag = l.place.rfind("--", 0) == 0;
  auto throw_labels = [&](const std::string& what) {
    if (flag) throw_usage(l.place + ": " + what);
    throw_input(l.place, what);
  };
  if (l.shared) {
    if (p.len_q != p.len_k && p.mode != Mode::kSelf) {
      throw_labels("one list labels both queries and keys, but there are " +
                   count(p.len_q, "query", "queries") + " and " + count(p.len_k, "key", "keys") +
                   "; write {\"queries\": [...], \"keys\": [...]}");
    }
  }
  if (!l.queries.empty() && static_cast<int64_t>(l.queries.size()) != p.len_q) {
    throw_labels(count(l.queries.size(), "label", "labels") + " for " +
                 count(p.len_q, "query", "queries"));
  }
  if (!l.keys.empty() && static_cast<int64_t>(l.keys.size()) != p.len_k) {
    throw_labels(count(l.keys.size(), "label", "labels") + " for " + count(p.len_k, "key", "keys"));
  }
  // A result holds its labels (JSON strings, an .npz's '<U' arrays) and is
  // read back by attn heatmap and attn diff, whose readers stop at
  // json::kMaxStringBytes: a longer label could be written but not read.
  for (const std::vector<std::string>* list : {&l.queries, &l.keys}) {
    for (size_t i = 0; i < list->size(); ++i) {
      if ((*list)[i].size() > json::kMaxStringBytes) {
        throw_labels("label " + std::to_string(i) + " has " + std::to_string((*list)[i].size()) +
                     " bytes; labels are limited to " + std::to_string(json::kMaxStringBytes) +
                     " bytes (what a result file can hold)");
      }
    }
  }
  p.query_labels = l.queries;
  p.key_labels = l.keys;
}

// The origins of the document's tensors read from files, with their
// shapes as the document holds them.
void keep_origins(const InputDocument& doc, Problem& p) {
  const std::pair<const char*, const std::optional<Input>*> inputs[] = {
      {"X", &doc.X},
      {"Y", &doc.Y},
      {"Q", &doc.Q},
      {"K", &doc.K},
      {"V", &doc.V},
      {"mask", &doc.mask},
      {"attn_bias", &doc.attn_bias},
      {"key_padding_mask", &doc.key_padding_mask},
      {"valid_lens", &doc.valid_lens}};
  auto keep = [&](const std::string& name, const Input& in) {
    if (!in.origin) return;
    TensorOrigin o = *in.origin;
    o.shape = in.tensor.shape();
    p.origins[name] = std::move(o);
  };
  for (const auto& [name, in] : inputs) {
    if (*in) keep(name, **in);
  }
  for (const NamedInput& n : doc.params) keep(n.name, n.input);
}

// The problem of `doc`; `own`, when set, is `doc` itself, given up: its
// inputs are moved into the problem instead of copied.
Problem build(const InputDocument& doc, InputDocument* own) {
  Problem p;
  p.source = doc.source;
  keep_origins(doc, p);
  resolve_settings(doc, p);
  resolve_inputs(doc, own, p);
  detail::resolve_positions(doc, p);
  detail::resolve_modern(doc, p);
  detail::resolve_params(doc, p);
  detail::resolve_rope_width(doc, p);
  detail::resolve_masks(doc, p);
  resolve_labels(doc, p);
  if (doc.title.size() > json::kMaxStringBytes) {
    throw_input(doc.source, "the title has " + std::to_string(doc.title.size()) +
                                " bytes; titles are limited to " +
                                std::to_string(json::kMaxStringBytes) +
                                " bytes (what a result file can hold)");
  }
  p.title = doc.title;
  p.description = doc.description;
  p.source_text = doc.source_text;
  p.expected = doc.expected;
  return p;
}

}  // namespace

Problem build_problem(const InputDocument& doc) { return build(doc, nullptr); }

Problem build_problem(InputDocument&& doc) { return build(doc, &doc); }

namespace {

// " [2, 6]": the valid lengths in the shape they are usually given (one per
// batch entry, or one per query), so the description follows --valid-lens;
// "" when there are too many to list.
std::string valid_lens_text(const Problem& p) {
  const std::vector<int64_t>& v = p.masks.valid_lens;
  const int64_t B = p.batch, L = p.len_q;
  bool per_batch = true;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t i = 0; i < L; ++i) per_batch = per_batch && v[b * L + i] == v[b * L];
  }
  auto list = [&](int64_t from, int64_t n, int64_t step) {
    std::string s = "[";
    for (int64_t k = 0; k < n; ++k) s += (k ? ", " : "") + std::to_string(v[from + k * step]);
    return s + "]";
  };
  if (per_batch && !p.batched) return " " + std::to_string(v[0]);
  if (per_batch) return B <= 8 ? " " + list(0, B, L) : "";
  if (B * L > 8) return "";
  if (!p.batched) return " " + list(0, L, 1);
  std::string s = " [";
  for (int64_t b = 0; b < B; ++b) s += (b ? ", " : "") + list(b * L, L, 1);
  return s + "]";
}

}  // namespace

std::string describe_run(const Problem& p) {
  std::string s = std::string(name(p.variant)) + ", " + std::string(name(p.mode));
  if (!detail::bidaf_pipeline(p.variant)) {
    s += ", scale " + name(p.scale);
    if (p.scale_at == ScaleAt::kOutput) s += " at output";
    if (p.temperature != 1.0) s += ", temperature " + format_shortest(p.temperature);
    if (p.heads > 1) s += ", " + std::to_string(p.heads) + " heads";
    if (p.grouped()) {
      s += ", kv_heads " + std::to_string(p.kv_heads);
      if (p.kv_heads_from_shapes > 0) s += " (from K's and V's head axes, as enable_gqa)";
    }
    if (p.qk_norm > 0) s += ", qk_norm " + format_shortest(p.qk_norm);
    if (p.rope) {
      s += ", rope (theta " + format_shortest(p.rope->theta) + ", " +
           std::string(name(p.rope->layout));
      if (p.rope->dims != p.head_dim_q()) s += ", dims " + std::to_string(p.rope->dims);
      if (p.rope->scaling)
        s += ", " + std::string(rope_scaling_name(p.rope->scaling->kind)) + " scaling";
      if (p.rope->q_offset || p.rope->k_offset) {
        s += ", offsets " + std::to_string(p.rope->q_offset) + "," +
             std::to_string(p.rope->k_offset);
      }
      s += ")";
    }
    if (p.softcap > 0) s += ", softcap " + format_shortest(p.softcap);
    if (!p.alibi.empty()) s += ", alibi";
  }
  const Masks& m = p.masks;
  if (!m.mask.empty()) s += ", mask";
  if (!m.key_padding.empty()) s += ", key_padding_mask";
  if (!m.valid_lens.empty()) s += ", valid_lens" + valid_lens_text(p);
  if (m.causal) s += p.causal_bottom_right ? ", causal (bottom-right)" : ", causal";
  if ((p.q_offset || p.k_offset) && (m.causal || m.window || !p.alibi.empty() || p.rope)) {
    s += ", positions q " + std::to_string(p.q_offset) + "+i, k " + std::to_string(p.k_offset) +
         "+j";
  }
  if (!m.bias.empty()) s += ", attn_bias";
  if (m.window) {
    s += ", window [" + std::to_string(m.window_left) + ", " + std::to_string(m.window_right) + "]";
  }
  if (!p.sinks.empty()) s += ", sinks";
  if (m.any() && !std::isinf(p.mask_fill)) s += ", mask_fill " + format_shortest(p.mask_fill);
  if (p.dropout > 0)
    s += ", dropout " + format_shortest(p.dropout) + " (seed " + std::to_string(p.seed) + ")";
  return s;
}

}  // namespace attn
