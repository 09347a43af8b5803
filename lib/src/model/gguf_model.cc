// GGUF models through the architecture table. The converter's changes per
// architecture are llama.cpp's convert_hf_to_gguf.py's (docs/models.md,
// "GGUF files").
#include "model/gguf_model.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "attn/error.h"
#include "attn/file_io.h"
#include "base/number_text.h"
#include "io/gguf.h"
#include "model/config_json.h"

namespace attn::model {

namespace {

using json::Value;

// One row of GGUF architectures: the row it reads as, the GGUF names of the
// roles whose names differ from the common ones, the metadata it writes
// besides the common keys, and what its layout changes.
struct GgufArch {
  const char* arch;        // general.architecture
  const char* model_type;  // the architecture table's row
  std::vector<std::pair<Role, const char*>> names;
  void (*config)(const GgufFile& f, const std::string& arch, Value& hf) = nullptr;
  void (*adjust)(ModelConfig& c) = nullptr;
};

// The GGUF name of each role (llama.cpp's src/llama-arch.cpp), with {L}
// for the layer; stacked experts are one tensor for all of them.
const char* common_name(Role r) {
  switch (r) {
    case Role::kEmbed:
      return "token_embd";
    case Role::kPosEmbed:
      return "position_embd";
    case Role::kTypeEmbed:
      return "token_types";
    case Role::kEmbedNorm:
      return "token_embd_norm";
    case Role::kAttnNorm:
      return "blk.{L}.attn_norm";
    case Role::kQ:
      return "blk.{L}.attn_q";
    case Role::kK:
      return "blk.{L}.attn_k";
    case Role::kV:
      return "blk.{L}.attn_v";
    case Role::kQkv:
      return "blk.{L}.attn_qkv";
    case Role::kO:
      return "blk.{L}.attn_output";
    case Role::kQNorm:
      return "blk.{L}.attn_q_norm";
    case Role::kKNorm:
      return "blk.{L}.attn_k_norm";
    case Role::kSinks:
      return "blk.{L}.attn_sinks.weight";
    case Role::kQa:
      return "blk.{L}.attn_q_a";
    case Role::kQaNorm:
      return "blk.{L}.attn_q_a_norm";
    case Role::kQb:
      return "blk.{L}.attn_q_b";
    case Role::kKva:
      return "blk.{L}.attn_kv_a_mqa";
    case Role::kKvaNorm:
      return "blk.{L}.attn_kv_a_norm";
    case Role::kKb:
      return "blk.{L}.attn_k_b";
    case Role::kVb:
      return "blk.{L}.attn_v_b";
    case Role::kAttnPostNorm:
      return "blk.{L}.post_attention_norm";
    case Role::kMlpNorm:
      return "blk.{L}.ffn_norm";
    case Role::kMlpPostNorm:
      return "blk.{L}.post_ffw_norm";
    case Role::kGate:
      return "blk.{L}.ffn_gate";
    case Role::kUp:
      return "blk.{L}.ffn_up";
    case Role::kGateUp:
      return "blk.{L}.ffn_up";
    case Role::kDown:
      return "blk.{L}.ffn_down";
    case Role::kRouter:
      return "blk.{L}.ffn_gate_inp";
    case Role::kRouterScoreBias:
      return "blk.{L}.exp_probs_b.bias";
    case Role::kExpertGate:
      return "blk.{L}.ffn_gate_exps";
    case Role::kExpertUp:
      return "blk.{L}.ffn_up_exps";
    case Role::kExpertDown:
      return "blk.{L}.ffn_down_exps";
    case Role::kSharedGate:
      return "blk.{L}.ffn_gate_shexp";
    case Role::kSharedUp:
      return "blk.{L}.ffn_up_shexp";
    case Role::kSharedDown:
      return "blk.{L}.ffn_down_shexp";
    case Role::kSharedExpertGate:
      return "blk.{L}.ffn_gate_inp_shexp";
    case Role::kFinalNorm:
      return "output_norm";
    case Role::kLmHead:
      return "output";
    default:
      return nullptr;
  }
}

void put(Value& hf, const char* key, Value v) {
  if (!hf.find(key)) hf.add_member(key, std::move(v));
}

// A metadata number as config.json held it: a float32 value is the
// shortest decimal that rounds to it (what the converter read, 0.22 and not
// 0.2199999988), so a multiplier or an epsilon is the config's own double.
double number_of(const GgufValue& v) {
  if (v.type() != GgufValue::Type::kF32) return v.as_number();
  const auto f = static_cast<float>(v.as_number());
  char text[64];
  const auto r = std::to_chars(text, text + sizeof text, f);
  double d = 0;
  std::from_chars(text, r.ptr, d);
  return d;
}

int64_t count_of(const GgufFile& f, const std::string& key) {
  const GgufValue& v = f.get(key);
  const int64_t n = v.as_int();
  if (n < 0 || n > 1'000'000'000) {
    throw_input(f.name(), key + ": " + std::to_string(n) + " is out of range");
  }
  return n;
}

// --- What the layouts change --------------------------------------------

// llama's converter permutes each head's Q and K rows so that llama.cpp
// rotates adjacent pairs (its "NORM" RoPE): the same rotation on the same
// features, paired differently. The scores are the same whatever order Q
// and K share, so attn keeps the file's rows and rotates their pairs.
void interleaved_rope(ModelConfig& c) { c.rope_layout = RopeLayout::kInterleaved; }

// Gemma's converter stores every norm weight as 1 + w (float32): the
// multiplier itself.
void gemma_norms(ModelConfig& c) {
  c.norm = NormKind::kRms;
  if (c.qk_norm_kind == NormKind::kRmsUnit) c.qk_norm_kind = NormKind::kRms;
}

// GPT-2's Conv1D matrices are transposed to [out][in], c_attn's Q, K and V
// still side by side.
void gpt2_layout(ModelConfig& c) {
  c.conv1d = false;
  c.qkv = QkvLayout::kSideBySide;
}

// GPT-NeoX's and Falcon's fused Q/K/V are regrouped: every Q row, then
// every K row, then every V row.
void side_by_side(ModelConfig& c) { c.qkv = QkvLayout::kSideBySide; }

// gpt-oss's experts: gate and up apart ([experts][I][hidden]), with their
// biases, instead of one interleaved [experts][hidden][2I] matrix.
void gpt_oss_experts(ModelConfig& c) {
  for (Role r : {Role::kExpertsGateUp, Role::kExpertsGateUpBias, Role::kExpertsDown,
                 Role::kExpertsDownBias}) {
    c.drop(r);
  }
  for (const auto& [role, path] : {std::pair{Role::kExpertGate, "gate"},
                                   {Role::kExpertUp, "up"},
                                   {Role::kExpertDown, "down"}}) {
    c.tensors.push_back(TensorSpec{
        role, std::string("model.layers.{L}.mlp.experts.{E}.") + path + "_proj", true, false});
  }
}

// DeepSeek's kv_b is split per head into K's part (transposed: [kv_lora]
// [nope]) and V's ([v][kv_lora]), as llama.cpp's absorbed attention wants.
void deepseek_split_kv(ModelConfig& c) {
  c.drop(Role::kKvb);
  c.tensors.push_back(TensorSpec{Role::kKb, "model.layers.{L}.self_attn.k_b_proj", false, false});
  c.tensors.push_back(TensorSpec{Role::kVb, "model.layers.{L}.self_attn.v_b_proj", false, false});
}

// --- Metadata that is not the common keys ---------------------------------

void qwen2moe_config(const GgufFile&, const std::string&, Value& hf) {
  // llama.cpp's qwen2moe: every layer MoE, the k weights as they come.
  put(hf, "decoder_sparse_step", Value::number(1));
  put(hf, "norm_topk_prob", Value::boolean(false));
}

void qwen3moe_config(const GgufFile&, const std::string&, Value& hf) {
  put(hf, "decoder_sparse_step", Value::number(1));
  put(hf, "norm_topk_prob", Value::boolean(true));
}

void falcon_config(const GgufFile& f, const std::string& arch, Value& hf) {
  // The new decoder architecture has a second norm per layer (ln_attn,
  // stored as attn_norm_2) or more than one K/V head.
  const bool two_norms = f.find_tensor("blk.0.attn_norm_2.weight") != nullptr;
  const GgufValue* kv = f.find(arch + ".attention.head_count_kv");
  const bool grouped = kv && kv->as_int() > 1;
  put(hf, "new_decoder_architecture", Value::boolean(two_norms || grouped));
  put(hf, "num_ln_in_parallel_attn", Value::number(two_norms ? 2 : 1));
  put(hf, "multi_query", Value::boolean(!two_norms && !grouped));
  put(hf, "parallel_attn", Value::boolean(true));
  put(hf, "bias", Value::boolean(f.find_tensor("blk.0.attn_qkv.bias") != nullptr));
}

void qk_norm_by_tensor(const GgufFile& f, const std::string&, Value& hf) {
  const bool has = f.find_tensor("blk.0.attn_q_norm.weight") != nullptr;
  put(hf, "use_qk_norm", Value::boolean(has));
  put(hf, "qk_layernorm", Value::boolean(has));
}

void deepseek2_config(const GgufFile& f, const std::string& arch, Value& hf) {
  // MLA's widths: key_length_mla is a head's nope + rope features.
  const int64_t rope = count_of(f, arch + ".rope.dimension_count");
  put(hf, "qk_rope_head_dim", Value::number(static_cast<double>(rope)));
  if (f.find(arch + ".attention.key_length_mla")) {
    put(hf, "qk_nope_head_dim",
        Value::number(static_cast<double>(count_of(f, arch + ".attention.key_length_mla") - rope)));
  }
  if (f.find(arch + ".attention.value_length_mla")) {
    put(hf, "v_head_dim",
        Value::number(static_cast<double>(count_of(f, arch + ".attention.value_length_mla"))));
  }
  // The converter writes one K/V head (MLA as llama.cpp computes it): each
  // head has its own.
  if (const Value* heads = hf.find("num_attention_heads")) {
    put(hf, "num_key_value_heads", *heads);
  }
}

void bert_config(const GgufFile&, const std::string&, Value& hf) {
  put(hf, "is_decoder", Value::boolean(false));
}

const std::vector<GgufArch>& archs() {
  static const std::vector<GgufArch> table = {
      {"llama", "llama", {}, nullptr, interleaved_rope},
      {"granite", "granite", {}, nullptr, interleaved_rope},
      {"smollm3", "smollm3", {}, nullptr, interleaved_rope},
      {"olmo", "olmo", {}, nullptr, interleaved_rope},
      {"qwen2", "qwen2", {}, nullptr, nullptr},
      {"qwen3", "qwen3", {}, nullptr, nullptr},
      {"qwen2moe", "qwen2_moe", {}, qwen2moe_config, nullptr},
      {"qwen3moe", "qwen3_moe", {}, qwen3moe_config, nullptr},
      {"gemma", "gemma", {}, nullptr, gemma_norms},
      {"gemma2", "gemma2", {}, nullptr, gemma_norms},
      {"gemma3", "gemma3_text", {}, nullptr, gemma_norms},
      {"phi3", "phi3", {}, nullptr, nullptr},
      {"phi2", "phi", {}, qk_norm_by_tensor, nullptr},
      {"stablelm", "stablelm", {}, qk_norm_by_tensor, nullptr},
      {"starcoder2", "starcoder2", {}, nullptr, nullptr},
      {"olmo2", "olmo2", {}, nullptr, nullptr},
      {"command-r", "cohere", {}, qk_norm_by_tensor, nullptr},
      {"gptneox", "gpt_neox", {}, nullptr, side_by_side},
      {"falcon", "falcon", {}, falcon_config, side_by_side},
      {"gpt2", "gpt2", {}, nullptr, gpt2_layout},
      {"gpt-oss",
       "gpt_oss",
       {{Role::kMlpNorm, "blk.{L}.post_attention_norm"}},
       nullptr,
       gpt_oss_experts},
      {"deepseek2", "deepseek_v3", {}, deepseek2_config, deepseek_split_kv},
      {"bert", "bert", {}, bert_config, nullptr},
  };
  return table;
}

const GgufArch* find_arch(const std::string& name) {
  for (const GgufArch& a : archs()) {
    if (name == a.arch) return &a;
  }
  return nullptr;
}

std::string arch_names() {
  std::string s;
  for (const GgufArch& a : archs()) s += (s.empty() ? "" : ", ") + std::string(a.arch);
  return s;
}

// The common keys: {arch}.KEY → the row's config field.
void common_config(const GgufFile& f, const std::string& a, const Row& row, Value& hf) {
  auto number = [&](const std::string& key, const char* field) {
    if (!field || !*field) return;
    if (const GgufValue* v = f.find(a + "." + key)) {
      if (!(v->is_integer() || v->is_float())) {
        throw_input(f.name(), a + "." + key + ": expected a number, got " + v->describe());
      }
      put(hf, field, Value::number(number_of(*v)));
    }
  };
  put(hf, "model_type", Value::string(row.model_type));
  number("block_count", row.layers.name);
  number("embedding_length", row.hidden.name);
  number("feed_forward_length", row.intermediate.name);
  number("attention.head_count", row.heads.name);
  if (std::strcmp(row.model_type, "deepseek_v3") != 0) {
    number("attention.head_count_kv", row.kv_heads.name);
  }
  number("attention.layer_norm_rms_epsilon", row.eps.name);
  number("attention.layer_norm_epsilon", row.eps.name);
  number("context_length", "max_position_embeddings");
  number("rope.freq_base", row.rope_theta.name);
  number("rope.freq_base_swa", "rope_local_base_freq");
  // The converter writes a window of 0 for none.
  if (const GgufValue* w = f.find(a + ".attention.sliding_window"); w && w->as_number() > 0) {
    put(hf, "sliding_window", Value::number(w->as_number()));
  }
  number("attention.sliding_window_pattern", "sliding_window_pattern");
  number("attn_logit_softcapping", "attn_logit_softcapping");
  number("final_logit_softcapping", "final_logit_softcapping");
  number("expert_count", row.experts.name);
  number("expert_used_count", row.top_k.name);
  number("expert_feed_forward_length", row.moe_intermediate.name);
  number("expert_shared_feed_forward_length", "shared_expert_intermediate_size");
  number("expert_shared_count", "n_shared_experts");
  number("expert_group_count", "n_group");
  number("expert_group_used_count", "topk_group");
  number("expert_weights_scale", "routed_scaling_factor");
  number("leading_dense_block_count", "first_k_dense_replace");
  number("attention.scale", "attention_multiplier");
  number("embedding_scale", "embedding_multiplier");
  number("residual_scale", "residual_multiplier");
  number("logit_scale", row.logit_key);
  number("attention.clamp_kqv", "clip_qkv");
  number("attention.q_lora_rank", "q_lora_rank");
  number("attention.kv_lora_rank", "kv_lora_rank");
  number("vocab_size", "vocab_size");
  if (const GgufValue* v = f.find(a + ".expert_weights_norm")) {
    put(hf, "norm_topk_prob", Value::boolean(v->as_bool()));
  }
  if (const GgufValue* v = f.find(a + ".use_parallel_residual")) {
    put(hf, "use_parallel_residual", Value::boolean(v->as_bool()));
  }
  // head_dim: key_length, where it is not hidden / heads.
  if (const GgufValue* k = f.find(a + ".attention.key_length");
      k && row.reads_head_dim && std::strcmp(row.model_type, "deepseek_v3") != 0) {
    put(hf, "head_dim", Value::number(k->as_number()));
  }
  // RoPE's width: rope.dimension_count of a head's features.
  if (const GgufValue* d = f.find(a + ".rope.dimension_count");
      d && row.partial_rotary.name && std::strcmp(row.model_type, "deepseek_v3") != 0) {
    const Value* hd = hf.find("head_dim");
    const Value* hidden = hf.find(row.hidden.name);
    const Value* heads = hf.find(row.heads.name);
    const double width = hd                ? hd->as_number()
                         : hidden && heads ? hidden->as_number() / heads->as_number()
                                           : 0;
    if (width > 0 && d->as_number() != width) {
      put(hf, row.partial_rotary.name, Value::number(d->as_number() / width));
    } else if (width > 0) {
      put(hf, row.partial_rotary.name, Value::number(1));
    }
  }
  // Biases: the config keys that give them, by the tensors there are.
  auto has = [&](const char* name) { return f.find_tensor(name) != nullptr; };
  if (row.attention_bias_key && *row.attention_bias_key) {
    put(hf, row.attention_bias_key,
        Value::boolean(has("blk.0.attn_q.bias") || has("blk.0.attn_qkv.bias") ||
                       has("blk.0.attn_q_a.bias") || has("blk.0.attn_output.bias")));
  }
  if (row.output_bias_key && *row.output_bias_key) {
    put(hf, row.output_bias_key, Value::boolean(has("blk.0.attn_output.bias")));
  }
  if (row.mlp_bias_key && *row.mlp_bias_key) {
    put(hf, row.mlp_bias_key,
        Value::boolean(has("blk.0.ffn_up.bias") || has("blk.0.ffn_gate.bias")));
  }
  // Tied: no output.weight in the file.
  put(hf, "tie_word_embeddings", Value::boolean(f.find_tensor("output.weight") == nullptr));
}

// A tensor of per-pair numbers (RoPE's factors) as a JSON list.
Value factor_list(const GgufFile& f, const GgufTensor& t) {
  const Tensor<double> v = f.read(t, CellKind::kFinite);
  Value list = Value::array();
  for (int64_t i = 0; i < v.size(); ++i) list.push(Value::number(v[i]));
  return list;
}

// rope.scaling.* as a rope_scaling object.
void rope_scaling(const GgufFile& f, const std::string& a, Value& hf) {
  const GgufValue* type = f.find(a + ".rope.scaling.type");
  std::string t = type ? type->as_string() : "";
  // Phi-3's converter writes longrope's factors as tensors and not always
  // its type.
  if ((t.empty() || t == "none") && f.find_tensor("rope_factors_long.weight")) t = "longrope";
  if (t.empty() || t == "none") {
    // Llama 3.1's scaling is written as the frequencies' divisors
    // (rope_freqs, llama.cpp's freq_factors): theta_i / factor_i, the
    // formula of longrope's factors at any length, with no attention factor.
    if (const GgufTensor* r = f.find_tensor("rope_freqs.weight")) {
      Value s = Value::object();
      s.add_member("rope_type", Value::string("longrope"));
      s.add_member("short_factor", factor_list(f, *r));
      s.add_member("long_factor", factor_list(f, *r));
      s.add_member("attention_factor", Value::number(1));
      const Value* max = hf.find("max_position_embeddings");
      const double length = max ? max->as_number() : 4096;
      put(hf, "max_position_embeddings", Value::number(length));
      put(hf, "original_max_position_embeddings", Value::number(length));
      put(hf, "rope_scaling", std::move(s));
    }
    return;
  }
  Value s = Value::object();
  s.add_member("rope_type", Value::string(t));
  auto copy = [&](const char* key, const char* field) {
    if (const GgufValue* v = f.find(a + ".rope.scaling." + key)) {
      s.add_member(field, Value::number(number_of(*v)));
    }
  };
  if (t == "longrope") {
    // Phi-3: the factors are tensors, the pretrained length the scaling's.
    for (const auto& [tensor, field] : {std::pair{"rope_factors_short.weight", "short_factor"},
                                        {"rope_factors_long.weight", "long_factor"}}) {
      const GgufTensor* r = f.find_tensor(tensor);
      if (!r) throw_input(f.name(), std::string("longrope scaling without ") + tensor);
      s.add_member(field, factor_list(f, *r));
    }
    if (const GgufValue* o = f.find(a + ".rope.scaling.original_context_length")) {
      put(hf, "original_max_position_embeddings", Value::number(o->as_number()));
    }
    // The attention factor, where it is not longrope's own from the two
    // lengths: the file holds it in float32, the formula gives it exactly.
    if (const GgufValue* af = f.find(a + ".rope.scaling.attn_factor")) {
      const Value* max = hf.find("max_position_embeddings");
      const GgufValue* o = f.find(a + ".rope.scaling.original_context_length");
      double formula = 1;
      if (max && o && o->as_number() > 1) {
        const double factor = max->as_number() / o->as_number();
        if (factor > 1) formula = std::sqrt(1 + std::log(factor) / std::log(o->as_number()));
      }
      if (static_cast<float>(formula) != static_cast<float>(af->as_number())) {
        s.add_member("attention_factor", Value::number(number_of(*af)));
      }
    }
  } else {
    copy("factor", "factor");
    copy("original_context_length", "original_max_position_embeddings");
    if (t == "yarn") {
      copy("yarn_beta_fast", "beta_fast");
      copy("yarn_beta_slow", "beta_slow");
      if (const GgufValue* m = f.find(a + ".rope.scaling.yarn_log_multiplier")) {
        // DeepSeek: 0.1 · mscale_all_dim, and llama.cpp takes mscale equal.
        const double mscale = number_of(*m) / 0.1;
        s.add_member("mscale", Value::number(mscale));
        s.add_member("mscale_all_dim", Value::number(mscale));
      }
    }
  }
  put(hf, "rope_scaling", std::move(s));
}

// A tensor of the model under the row's name: the GGUF tensor, and for a
// stacked expert's its index.
struct Mapped {
  const GgufTensor* tensor = nullptr;
  int64_t slice = -1;
  Shape shape;
};

class GgufSource final : public detail::TensorSource {
 public:
  GgufSource(std::shared_ptr<const GgufFile> f, const GgufArch& arch, const ModelConfig& c,
             int64_t max_bytes, int64_t max_elements)
      : f_(std::move(f)), max_bytes_(max_bytes), max_elements_(max_elements) {
    std::map<Role, std::string> names;
    for (const auto& [role, name] : arch.names) names[role] = name;
    for (const TensorSpec& s : c.tensors) {
      if (s.path.empty()) continue;
      std::string g = names.count(s.role) ? names[s.role] : "";
      if (g.empty()) {
        const char* common = common_name(s.role);
        if (!common) continue;
        g = common;
      }
      // Falcon's second norm: ln_attn is attn_norm_2, ln_mlp attn_norm.
      if (s.role == Role::kAttnNorm && s.path.find("ln_attn") != std::string::npos) {
        g = "blk.{L}.attn_norm_2";
      }
      if (s.role == Role::kMlpNorm && s.path.find("ln_mlp") != std::string::npos) {
        g = "blk.{L}.attn_norm";
      }
      const bool layer = s.path.find("{L}") != std::string::npos;
      const bool expert = s.path.find("{E}") != std::string::npos;
      for (int64_t n = 0; n < (layer ? c.layers : 1); ++n) {
        for (int64_t e = 0; e < (expert ? std::max<int64_t>(c.experts, 1) : 1); ++e) {
          const std::string hf = expand(s.path, n, e);
          const std::string gg = expand(g, n);
          add(s.param ? hf : hf + ".weight", s.param ? gg : gg + ".weight", expert ? e : -1);
          add(hf + ".bias", gg + ".bias", expert ? e : -1);
        }
      }
    }
    // A tensor no role of the row takes: another architecture's, or a part
    // attn does not compute (a vision tower, MTP layers, new norms).
    if (c.attention_only) return;
    for (const GgufTensor& t : f_->tensors()) {
      if (used_.count(t.name) || t.name == "rope_freqs.weight" ||
          t.name == "rope_factors_long.weight" || t.name == "rope_factors_short.weight") {
        continue;
      }
      // A layer past block_count (DeepSeek's multi-token prediction layer).
      if (t.name.rfind("blk.", 0) == 0) {
        int64_t n = 0;
        size_t i = 4;
        for (; i < t.name.size() && i < 12 && t.name[i] >= '0' && t.name[i] <= '9'; ++i)
          n = n * 10 + (t.name[i] - '0');
        if (i > 4 && i < t.name.size() && t.name[i] == '.' && n >= c.layers) continue;
      }
      throw_input(f_->name(), "holds " + message_text(t.name) + ", a tensor that " + c.model_type +
                                  " models (general.architecture " + arch.arch +
                                  ") do not have; is the file complete and its architecture "
                                  "right?");
    }
  }

  const std::vector<std::string>& names() const override { return names_; }
  bool contains(const std::string& name) const override { return map_.count(name) > 0; }
  const Shape& shape(const std::string& name) const override { return map_.at(name).shape; }
  ElementType type(const std::string& name) const override { return map_.at(name).tensor->type; }

  BinaryArray view(const std::string& name, bool whole) const override {
    const Mapped& m = map_.at(name);
    BinaryArray a = f_->view(*m.tensor);
    if (m.slice >= 0) {
      // One expert of a stack: its rows are whole blocks of the type.
      a.shape.erase(a.shape.begin());
      a.data += static_cast<uint64_t>(m.slice) * (m.tensor->bytes / m.tensor->shape[0]);
    }
    const uint64_t bytes = m.slice >= 0
                               ? m.tensor->bytes / static_cast<uint64_t>(m.tensor->shape[0])
                               : m.tensor->bytes;
    if (whole && bytes > static_cast<uint64_t>(max_bytes_)) {
      throw_input(place(name), std::to_string(bytes) + " bytes, more than --max-input-bytes " +
                                   std::to_string(max_bytes_) + "; raise --max-input-bytes");
    }
    if (whole && shape_size(a.shape) > max_elements_) {
      throw_input(place(name), std::to_string(shape_size(a.shape)) +
                                   " cells; the limit is --max-elements " +
                                   std::to_string(max_elements_));
    }
    return a;
  }

  Tensor<double> read(const std::string& name) const override {
    const BinaryArray a = view(name, true);
    Tensor<double> t = a.to_tensor(place(name), CellKind::kFinite, max_elements_);
    a.keep.check_intact(f_->name());
    return t;
  }

  TensorOrigin origin(const std::string& name) const override {
    TensorOrigin o;
    o.format = MatrixFormat::kGguf;
    o.path = f_->name();
    o.tensor = map_.at(name).tensor->name;
    return o;
  }

  std::string place(const std::string& name) const override {
    const Mapped& m = map_.at(name);
    return f_->name() + ":" + message_text(m.tensor->name) +
           (m.slice >= 0 ? "[" + std::to_string(m.slice) + "]" : "");
  }

  std::string files() const override { return f_->name(); }

 private:
  void add(const std::string& hf, const std::string& gguf, int64_t slice) {
    const GgufTensor* t = f_->find_tensor(gguf);
    if (!t) return;
    if (slice >= 0 && (t->shape.empty() || slice >= t->shape[0])) return;
    Mapped m{t, slice, t->shape};
    if (slice >= 0) m.shape.erase(m.shape.begin());
    if (!map_.count(hf)) names_.push_back(hf);
    map_[hf] = std::move(m);
    used_.insert(gguf);
  }

  std::shared_ptr<const GgufFile> f_;
  int64_t max_bytes_, max_elements_;
  std::map<std::string, Mapped> map_;
  std::vector<std::string> names_;
  std::set<std::string> used_;
};

}  // namespace

bool is_gguf(const std::string& path) { return is_gguf_file(path); }

std::string gguf_model_type(const GgufFile& file) {
  const std::string arch = file.get("general.architecture").as_string();
  const GgufArch* a = find_arch(arch);
  if (!a) return "";
  // Mixtral's converter labels it llama: the experts say which it is.
  if (arch == "llama" && file.find("llama.expert_count") &&
      file.get("llama.expert_count").as_int() > 0) {
    return "mixtral";
  }
  return a->model_type;
}

namespace {

GgufModel model_of(const std::shared_ptr<const GgufFile>& f) {
  const std::string arch = f->get("general.architecture").as_string();
  const GgufArch* a = find_arch(arch);
  if (!a) {
    throw_usage(f->name() + ": general.architecture \"" + message_text(arch) +
                "\" is not one attn reads (" + arch_names() + ")");
  }
  GgufModel g;
  g.model_type = gguf_model_type(*f);
  const Row* row = find_row(g.model_type);
  if (!row) throw_internal("gguf: no row " + g.model_type);
  g.place = f->name() + " (metadata)";
  g.config = Value::object();
  common_config(*f, arch, *row, g.config);
  rope_scaling(*f, arch, g.config);
  if (a->config) a->config(*f, arch, g.config);
  g.adjust = a->adjust;
  g.file = f;
  return g;
}

}  // namespace

GgufModel open_gguf_model(const std::string& path, int64_t max_stream_bytes) {
  return model_of(std::make_shared<const GgufFile>(GgufFile::open(path, max_stream_bytes)));
}

GgufModel open_gguf_model(const OpenedFile& file, int64_t max_stream_bytes) {
  return model_of(std::make_shared<const GgufFile>(
      GgufFile::parse(map_file(file, {}, max_stream_bytes), file.path())));
}

std::unique_ptr<detail::TensorSource> gguf_source(const GgufModel& g, const ModelConfig& config,
                                                  int64_t max_bytes, int64_t max_elements) {
  auto f = std::static_pointer_cast<const GgufFile>(g.file);
  const GgufFile& file = *f;
  const GgufArch* a = find_arch(file.get("general.architecture").as_string());
  return std::make_unique<GgufSource>(f, *a, config, max_bytes, max_elements);
}

}  // namespace attn::model
