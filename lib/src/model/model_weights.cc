// Finding and checking a model's tensors against its configuration.
#include "model/model_weights.h"

#include <map>
#include <set>
#include <tuple>

#include "attn/error.h"
#include "base/number_text.h"
#include "io/element_types.h"

namespace attn::model {

namespace {

bool is_layer_role(const TensorSpec& s) { return s.path.find("{L}") != std::string::npos; }

// The roles of a dense MLP and of a mixture of experts: a model with a
// router has both kinds of layer, each holding its own.
bool dense_mlp_role(Role r) {
  return r == Role::kGate || r == Role::kUp || r == Role::kGateUp || r == Role::kDown;
}
bool moe_role(Role r) {
  switch (r) {
    case Role::kRouter:
    case Role::kRouterScoreBias:
    case Role::kExpertGate:
    case Role::kExpertUp:
    case Role::kExpertDown:
    case Role::kExpertsGateUp:
    case Role::kExpertsGateUpBias:
    case Role::kExpertsDown:
    case Role::kExpertsDownBias:
    case Role::kSharedGate:
    case Role::kSharedUp:
    case Role::kSharedDown:
    case Role::kSharedExpertGate:
      return true;
    default:
      return false;
  }
}

// Whether layer n of the model holds the role.
bool in_layer(const ModelConfig& c, const TensorSpec& s, int64_t n) {
  if (c.router == Router::kNone) return true;
  const bool moe = c.plan[static_cast<size_t>(n)].moe;
  if (dense_mlp_role(s.role)) return !moe;
  if (moe_role(s.role)) return moe;
  return true;
}

// Buffers older checkpoints carry beside their parameters (a rotary
// embedding's inv_freq, GPT-2's and GPT-NeoX's causal masks): not weights.
bool harmless_buffer(const std::string& name) {
  for (const char* end : {".inv_freq", ".attn.bias", ".attn.masked_bias", ".attention.bias",
                          ".attention.masked_bias"}) {
    const std::string e = end;
    if (name.size() >= e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0)
      return true;
  }
  return false;
}

// Cells a weight can hold: floats, and GGUF's quantized blocks (each
// dequantized as ggml does). float8 is left out: a checkpoint that stores
// it scales it by block factors of its own, which attn does not apply.
bool floating(ElementType t) {
  return element_traits(t).floating && t != ElementType::kF8E4M3 && t != ElementType::kF8E5M2;
}

constexpr int64_t kAny = -1;

// "an attention input norm", "a query norm".
std::string a_or_an(const std::string& what) {
  const char c = what.empty() ? 'x' : what[0];
  const bool vowel = c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
  return (vowel ? "an " : "a ") + what;
}

bool shape_matches(const Shape& got, const Shape& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    if (want[i] != kAny && got[i] != want[i]) return false;
  }
  return true;
}

std::string shape_text(const Shape& s) {
  std::string t;
  for (int64_t d : s) t += "[" + (d == kAny ? std::string("n") : std::to_string(d)) + "]";
  return t;
}

}  // namespace

Shape expected_weight(const ModelConfig& c, Role r, int64_t layer) {
  (void)layer;
  const int64_t H = c.hidden, nh = c.heads, kv = c.kv_heads, d = c.head_dim, dv = c.v_head_dim;
  const int64_t I = c.intermediate, Im = c.moe_intermediate, Is = c.shared_intermediate,
                E = c.experts;
  const bool t = !c.conv1d;  // torch's [out][in]
  auto lin = [&](int64_t out, int64_t in) { return t ? Shape{out, in} : Shape{in, out}; };
  switch (r) {
    case Role::kEmbed:
    case Role::kPosEmbed:
    case Role::kTypeEmbed:
    case Role::kLmHead:
      return {kAny, H};
    case Role::kEmbedNorm:
    case Role::kAttnNorm:
    case Role::kAttnPostNorm:
    case Role::kMlpNorm:
    case Role::kMlpPostNorm:
    case Role::kFinalNorm:
      return {H};
    case Role::kQ:
      return lin(nh * d, H);
    case Role::kK:
      return lin(kv * d, H);
    case Role::kV:
      return lin(kv * dv, H);
    case Role::kQkv:
      return lin((nh + 2 * kv) * d, H);
    case Role::kO:
      return lin(H, nh * dv);
    case Role::kQNorm:
    case Role::kKNorm: {
      const int64_t n = r == Role::kQNorm ? nh : kv;
      switch (c.qk_norm) {
        case QkNorm::kPerHeadOwn:
          if (c.tensor(r).path.find("{H}") != std::string::npos) return {d};
          return {n, d};
        case QkNorm::kWholeWidth:
          return {n * d};
        default:
          return {d};
      }
    }
    case Role::kSinks:
      return {nh};
    case Role::kQa:
      return {c.q_lora_rank, H};
    case Role::kQaNorm:
      return {c.q_lora_rank};
    case Role::kQb:
      return {nh * d, c.q_lora_rank};
    case Role::kKva:
      return {c.kv_lora_rank + c.rope_dim, H};
    case Role::kKvaNorm:
      return {c.kv_lora_rank};
    case Role::kKvb:
      return {nh * (c.nope_dim + dv), c.kv_lora_rank};
    case Role::kKb:
      return {nh, c.kv_lora_rank, c.nope_dim};
    case Role::kVb:
      return {nh, dv, c.kv_lora_rank};
    case Role::kGate:
    case Role::kUp:
      return lin(I, H);
    case Role::kGateUp:
      return lin(2 * I, H);
    case Role::kDown:
      return lin(H, I);
    case Role::kRouter:
      return {E, H};
    case Role::kRouterScoreBias:
      return {E};
    case Role::kExpertGate:
    case Role::kExpertUp:
      return {Im, H};
    case Role::kExpertDown:
      return {H, Im};
    case Role::kExpertsGateUp:
      return {E, H, 2 * Im};
    case Role::kExpertsGateUpBias:
      return {E, 2 * Im};
    case Role::kExpertsDown:
      return {E, Im, H};
    case Role::kExpertsDownBias:
      return {E, H};
    case Role::kSharedGate:
    case Role::kSharedUp:
      return {Is, H};
    case Role::kSharedDown:
      return {H, Is};
    case Role::kSharedExpertGate:
      return {1, H};
    case Role::kCount:
      break;
  }
  return {};
}

Shape expected_bias(const ModelConfig& c, Role r, int64_t layer) {
  const Shape w = expected_weight(c, r, layer);
  if (w.size() == 1) return w;  // a norm's bias is as wide as its weight
  if (r == Role::kQNorm || r == Role::kKNorm) return w;
  return {c.conv1d ? w.back() : w.front()};
}

Weights::Weights(const detail::TensorSource& tensors, const ModelConfig& config, std::string name,
                 int64_t layer)
    : tensors_(tensors), config_(config), name_(std::move(name)) {
  for (const TensorSpec& s : config_.tensors) {
    if (s.path.empty()) continue;  // a norm without parameters
    if (config_.attention_only && !attention_role(s.role)) continue;
    const bool per_expert = s.path.find("{E}") != std::string::npos;
    const bool per_head = s.path.find("{H}") != std::string::npos;
    const int64_t heads = s.role == Role::kKNorm ? config_.kv_heads : config_.heads;
    auto each = [&](int64_t layer) {
      for (int64_t e = 0; e < (per_expert ? config_.experts : 1); ++e) {
        for (int64_t h = 0; h < (per_head ? heads : 1); ++h) {
          check(s, At{s.role, layer, per_expert ? e : -1, per_head ? h : -1});
        }
      }
    };
    if (!is_layer_role(s)) {
      each(-1);
      continue;
    }
    for (int64_t n = 0; n < config_.layers; ++n) {
      if (config_.attention_only && n != layer) continue;
      if (in_layer(config_, s, n)) each(n);
    }
  }
  if (!config_.attention_only) check_claimed();
}

std::string Weights::resolve(const TensorSpec& spec, const At& at, const char* suffix) const {
  const std::string path = expand(spec.path, at.layer, at.expert, at.head);
  const std::string full = path + suffix;
  if (tensors_.contains(full)) return full;
  // Saved from the base model (no "model." or "transformer."), or inside
  // another (a multimodal checkpoint's "language_model."): the name after
  // its first component, as a suffix.
  const size_t dot = path.find('.');
  const std::string tail = (dot == std::string::npos ? path : path.substr(dot + 1)) + suffix;
  if (const auto found = tensors_.find_suffix(tail)) return *found;
  return "";
}

void Weights::check(const TensorSpec& spec, const At& at) {
  const std::string where =
      at.layer >= 0 ? "a " + config_.model_type + " layer" : "a " + config_.model_type + " model";
  const std::string weight = resolve(spec, at, spec.param ? "" : ".weight");
  if (weight.empty()) {
    const std::string path = expand(spec.path, at.layer, at.expert, at.head);
    const std::string want = path + (spec.param ? "" : ".weight");
    const size_t dot = path.find('.');
    const std::string tail =
        (dot == std::string::npos ? path : path.substr(dot + 1)) + (spec.param ? "" : ".weight");
    throw_input(name_, "no tensor named " + tail + " (or " + want + "), the " +
                           role_title(spec.role) + " of " + where + "; is the architecture right?");
  }
  const Shape want = expected_weight(config_, spec.role, at.layer);
  const Shape& got = tensors_.shape(weight);
  if (!shape_matches(got, want)) {
    throw_input(tensors_.place(weight), "has shape " + shape_string(got) +
                                            " but the config gives " + shape_text(want) +
                                            " for the " + role_title(spec.role) + " (" +
                                            config_.model_type + ": " + config_.place + ")");
  }
  const ElementType type = tensors_.type(weight);
  if (!floating(type)) {
    throw_input(tensors_.place(weight), std::string("has cells of type ") +
                                            safetensors_dtype_name(type) + "; the " +
                                            role_title(spec.role) +
                                            " must hold floating-point numbers (F64, F32, F16 "
                                            "or BF16)");
  }
  std::optional<std::string> bias;
  if (spec.bias) {
    const std::string b = resolve(spec, at, ".bias");
    if (b.empty()) {
      throw_input(name_, "no tensor named " + expand(spec.path, at.layer, at.expert, at.head) +
                             ".bias, the bias of the " + role_title(spec.role) + " of " + where +
                             " (" + config_.place + " gives it one)");
    }
    const Shape bwant = expected_bias(config_, spec.role, at.layer);
    Shape bw = bwant;
    if (bw.size() == 1 && bw[0] == kAny) bw[0] = got[0];  // the head's bias: one per row
    if (!shape_matches(tensors_.shape(b), bw)) {
      throw_input(tensors_.place(b), "has shape " + shape_string(tensors_.shape(b)) +
                                         " but the config gives " + shape_text(bw) + " for the " +
                                         role_title(spec.role) + "'s bias");
    }
    if (!floating(tensors_.type(b))) {
      throw_input(tensors_.place(b), std::string("has cells of type ") +
                                         safetensors_dtype_name(tensors_.type(b)) +
                                         "; a bias must hold floating-point numbers");
    }
    bias = b;
  }
  entries_.emplace(key(at), Entry{at, weight, bias});
}

// Every tensor under a layer's name is one a role of the row claims (or a
// buffer older files carry): a tensor the row does not know means another
// architecture, or a config that leaves out what the weights have.
void Weights::check_claimed() {
  std::set<std::string> claimed;
  std::set<std::string> prefixes;
  for (const auto& [k, e] : entries_) {
    claimed.insert(e.weight);
    if (e.bias) claimed.insert(*e.bias);
    if (e.at.layer < 0) continue;
    // The layer's own prefix: the name up to its layer number and the dot.
    const std::string number = "." + std::to_string(e.at.layer) + ".";
    const size_t at = e.weight.find(number);
    if (at != std::string::npos) prefixes.insert(e.weight.substr(0, at + number.size()));
  }
  for (const std::string& name : tensors_.names()) {
    if (claimed.count(name) || harmless_buffer(name)) continue;
    for (const std::string& p : prefixes) {
      if (name.compare(0, p.size(), p) != 0) continue;
      stray_bias(name, p);
      // Which architectures have such a tensor, to say what it is.
      std::string owners;
      const char* what = nullptr;
      int listed = 0;
      for (const Row& row : rows()) {
        if (row.model_type == config_.model_type) continue;
        for (const TensorName& t : row.tensors) {
          if (t.path.find("{L}") == std::string::npos) continue;
          const std::string rest = t.path.substr(t.path.find("{L}") + 4);
          const std::string tail = name.substr(p.size());
          if (tail == rest + ".weight" || tail == rest + ".bias" || tail == rest) {
            if (!what) what = role_title(t.role);
            if (++listed <= 5) {
              owners += (owners.empty() ? "" : ", ") + std::string(row.model_type);
            } else if (listed == 6) {
              owners += ", ...";
            }
            break;
          }
        }
      }
      throw_input(name_, "holds " + message_text(name) + (what ? ", " + a_or_an(what) : "") +
                             ", which " + config_.model_type + " layers do not have" +
                             (owners.empty() ? "" : " (" + owners + " do)") +
                             "; is the architecture right?");
    }
  }
}

// A bias where the config gives the module none: the config and the
// weights disagree, and which key decides is the thing to say.
void Weights::stray_bias(const std::string& name, const std::string& prefix) const {
  const std::string tail = name.substr(prefix.size());
  for (const TensorName& t : config_.row->tensors) {
    const size_t at = t.path.find("{L}.");
    if (at == std::string::npos || tail != t.path.substr(at + 4) + ".bias") continue;
    const Row& r = *config_.row;
    const char* key =
        t.bias == Bias::kAttention ? r.attention_bias_key
        : t.bias == Bias::kOutput
            ? (r.output_bias_key && *r.output_bias_key ? r.output_bias_key : r.attention_bias_key)
        : t.bias == Bias::kMlp ? r.mlp_bias_key
                               : nullptr;
    throw_input(name_, "holds " + message_text(name) + ", a bias of the " + role_title(t.role) +
                           ", which " + config_.place + " does not give " + config_.model_type +
                           " layers" +
                           (key && *key ? std::string(" (\"") + key + "\" is not true)"
                                        : std::string(" (it never has one)")) +
                           "; are the config and the weights the same model's?");
  }
}

const Weights::Entry& Weights::entry(const At& at) const {
  const auto it = entries_.find(key(at));
  if (it == entries_.end()) {
    throw_internal(std::string("weights: no ") + role_title(at.role) + " for layer " +
                   std::to_string(at.layer));
  }
  return it->second;
}

const std::string& Weights::weight_name(const At& at) const { return entry(at).weight; }

std::optional<std::string> Weights::bias_name(const At& at) const { return entry(at).bias; }

bool Weights::has(const At& at) const { return entries_.count(key(at)) > 0; }

BinaryArray Weights::view(const std::string& name) const { return tensors_.view(name, false); }

Tensor<double> Weights::read(const std::string& name) const { return tensors_.read(name); }

Eigen::RowVectorXd Weights::vector(const std::string& name) const {
  const Tensor<double> t = tensors_.read(name);
  return Eigen::Map<const Eigen::RowVectorXd>(t.data(), t.size());
}

}  // namespace attn::model
