// Reading config.json through an architecture's row, once per model.
#include "model/model_config.h"

#include <cmath>

#include "attn/error.h"
#include "attn/json.h"
#include "base/number_text.h"
#include "model/config_json.h"

namespace attn::model {

bool ModelConfig::has(Role r) const {
  for (const TensorSpec& t : tensors) {
    if (t.role == r) return true;
  }
  return false;
}

const TensorSpec& ModelConfig::tensor(Role r) const {
  for (const TensorSpec& t : tensors) {
    if (t.role == r) return t;
  }
  throw_internal(std::string("model config: no tensor for the ") + role_title(r));
}

void ModelConfig::drop(Role r) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].role == r) {
      tensors.erase(tensors.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
}

void ModelConfig::rename(Role r, std::string path) {
  for (TensorSpec& t : tensors) {
    if (t.role == r) {
      t.path = std::move(path);
      return;
    }
  }
  throw_internal(std::string("model config: no tensor to rename for the ") + role_title(r));
}

std::string expand(const std::string& path, int64_t layer, int64_t expert, int64_t head) {
  std::string s = path;
  const std::pair<const char*, int64_t> marks[] = {{"{L}", layer}, {"{E}", expert}, {"{H}", head}};
  for (const auto& [mark, value] : marks) {
    for (size_t at = s.find(mark); at != std::string::npos; at = s.find(mark, at)) {
      const std::string n = std::to_string(value);
      s.replace(at, 3, n);
      at += n.size();
    }
  }
  return s;
}

std::optional<Activation> activation_named(const std::string& a) {
  if (a == "silu" || a == "swish") return Activation::kSilu;
  if (a == "gelu") return Activation::kGelu;
  if (a == "gelu_new" || a == "gelu_pytorch_tanh") return Activation::kGeluTanh;
  if (a == "relu") return Activation::kRelu;
  return std::nullopt;
}

namespace {

using detail::Config;

class Reader {
 public:
  Reader(const Row& row, const Config& config, bool attention_only) : row_(row), c_(config) {
    m_.attention_only = attention_only;
  }

  ModelConfig read() {
    m_.row = &row_;
    m_.model_type = row_.model_type;
    m_.place = c_.place();
    refuse();
    sizes();
    structure();
    tensors();
    if (row_.configure) row_.configure(c_, m_);
    if (m_.qkv == QkvLayout::kLatent) latent();
    if (row_.router != Router::kNone && !m_.attention_only) experts();
    bounds();
    positions();
    plan();
    multipliers();
    finish();
    return std::move(m_);
  }

 private:
  void note(const char* key) {
    if (key && *key && c_.has(key) && m_.fields.find(std::string(key) + ",") == std::string::npos) {
      m_.fields += std::string(key) + ", ";
    }
  }
  // A key only the rest of the model reads: not among the fields a run of
  // one layer's attention names.
  void note_model(const char* key) {
    if (!m_.attention_only) note(key);
  }

  // The key itself or its first alias present; nullptr when none is.
  const char* present(const Key& k) const {
    if (k.name && c_.has(k.name)) return k.name;
    for (const char* a : k.aliases) {
      if (c_.has(a)) return a;
    }
    return nullptr;
  }

  // A count: the key's (or an alias's) value, or its fallback; a negative
  // fallback makes the key required.
  int64_t count(const Key& k, bool attention = true) {
    const char* key = present(k);
    if (key) {
      attention ? note(key) : note_model(key);
      return c_.count(key);
    }
    if (k.fallback < 0) {
      c_.count(k.name);  // throws: has no "key"
    }
    return static_cast<int64_t>(k.fallback);
  }

  double positive(const Key& k, bool attention = true) {
    const char* key = present(k);
    if (!key) return k.fallback;
    attention ? note(key) : note_model(key);
    return c_.positive(key);
  }

  bool flag(const char* key, bool fallback) {
    if (!key || !*key) return fallback;
    note(key);
    return c_.flag(key, fallback);
  }

  void refuse() {
    for (const Row::Refused& r : row_.refused) {
      const json::Value* v = c_.get(r.key);
      if (!v) continue;
      const std::string text = v->is_bool()     ? (v->as_bool() ? "true" : "false")
                               : v->is_number() ? format_shortest(v->as_number())
                                                : "";
      if (text != r.harmless) {
        throw_input(c_.place(),
                    "\"" + std::string(r.key) + "\" " + json::describe(*v) + ": " + r.why);
      }
    }
  }

  void sizes() {
    m_.layers = count(row_.layers);
    m_.heads = count(row_.heads);
    m_.hidden = count(row_.hidden);
    m_.kv_heads = count(row_.kv_heads);
    if (m_.kv_heads == 0) m_.kv_heads = m_.heads;
    if (m_.heads % m_.kv_heads != 0) {
      throw_input(c_.place(), std::string(row_.heads.name) + " " + std::to_string(m_.heads) +
                                  " is not a multiple of " + row_.kv_heads.name + " " +
                                  std::to_string(m_.kv_heads));
    }
    if (row_.reads_head_dim && c_.has("head_dim") && row_.qkv != QkvLayout::kLatent) {
      note("head_dim");
      m_.head_dim = c_.count("head_dim");
    } else {
      if (m_.hidden % m_.heads != 0) {
        throw_input(c_.place(),
                    std::string(present(row_.hidden) ? present(row_.hidden) : row_.hidden.name) +
                        " " + std::to_string(m_.hidden) + " is not a multiple of " +
                        row_.heads.name + " " + std::to_string(m_.heads));
      }
      m_.head_dim = m_.hidden / m_.heads;
    }
    m_.v_head_dim = m_.head_dim;
    // The MLP's width: a key, or a multiple of the hidden size (GPT-2's
    // n_inner, Falcon's ffn_hidden_size: 4 × hidden when unset).
    const Key& in = row_.intermediate;
    if (in.fallback > 0 && !present(in)) {
      m_.intermediate = static_cast<int64_t>(in.fallback) * m_.hidden;
    } else if ((row_.router != Router::kNone || m_.attention_only) && !present(in) &&
               in.fallback < 0) {
      m_.intermediate = 0;  // an MoE model without dense layers needs none
    } else {
      m_.intermediate = count(in, false);
    }
    m_.vocab = present(row_.vocab) ? count(row_.vocab, false) : 0;
    m_.eps = row_.eps.name ? positive(row_.eps, row_.qk_norm != QkNorm::kNone) : row_.eps.fallback;
    std::string act;
    if (const char* key = present(row_.act)) {
      note_model(key);
      act = c_.text(key);
    }
    if (act.empty()) act = row_.act_default;
    const std::optional<Activation> a = activation_named(act);
    if (!a) {
      throw_input(c_.place(), "\"" + std::string(row_.act.name) + "\" \"" + message_text(act) +
                                  "\" is not an activation attn computes (silu, gelu, gelu_new, "
                                  "gelu_pytorch_tanh, relu)");
    }
    m_.act = *a;
    m_.act_name = act;
  }

  void structure() {
    m_.block = row_.block;
    m_.norm = row_.norm;
    m_.qkv = row_.qkv;
    m_.conv1d = row_.conv1d;
    m_.qk_norm = row_.qk_norm;
    m_.qk_norm_kind = row_.qk_norm_kind;
    m_.qk_eps = m_.eps;
    m_.mlp = row_.mlp;
    m_.router = row_.router;
    m_.clamped_experts = row_.clamped_experts;
    m_.shared = row_.shared;
    m_.positions = row_.positions;
    m_.position_offset = row_.position_offset;
    m_.rope_layout = row_.rope_interleaved ? RopeLayout::kInterleaved : RopeLayout::kHalf;
    m_.causal = row_.causal;
    if (row_.clip_key && c_.has(row_.clip_key)) {
      note(row_.clip_key);
      m_.clip = c_.positive(row_.clip_key);
    }
    if (row_.softcap_key && c_.has(row_.softcap_key)) {
      note(row_.softcap_key);
      m_.softcap = c_.positive(row_.softcap_key);
    }
  }

  // The row's tensors with their biases decided by the config.
  void tensors() {
    const bool attention = flag(row_.attention_bias_key, row_.attention_bias_default);
    bool output = attention;
    if (row_.output_bias_key) {
      output = *row_.output_bias_key ? flag(row_.output_bias_key, row_.output_bias_default) : false;
    }
    const bool mlp = m_.attention_only ? false : flag(row_.mlp_bias_key, row_.mlp_bias_default);
    for (const TensorName& t : row_.tensors) {
      TensorSpec s{t.role, t.path, false, false};
      switch (t.bias) {
        case Bias::kNever:
          break;
        case Bias::kAlways:
          s.bias = true;
          break;
        case Bias::kAttention:
          s.bias = row_.attention_bias_key && attention;
          break;
        case Bias::kOutput:
          s.bias = output && (row_.attention_bias_key || row_.output_bias_key);
          break;
        case Bias::kMlp:
          s.bias = row_.mlp_bias_key && mlp;
          break;
        case Bias::kParam:
          s.param = true;
          break;
      }
      m_.tensors.push_back(std::move(s));
    }
  }

  // Multi-head latent attention's widths (DeepSeek).
  void latent() {
    m_.q_lora_rank = 0;
    if (c_.has("q_lora_rank")) {
      note("q_lora_rank");
      m_.q_lora_rank = c_.count("q_lora_rank");
    }
    for (Role r : {Role::kQa, Role::kQaNorm, Role::kQb}) {
      if (m_.q_lora_rank == 0) m_.drop(r);
    }
    if (m_.q_lora_rank > 0) m_.drop(Role::kQ);
    for (const char* key : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      note(key);
    m_.kv_lora_rank = c_.count("kv_lora_rank");
    m_.nope_dim = c_.count("qk_nope_head_dim");
    m_.rope_dim = c_.count("qk_rope_head_dim");
    m_.v_head_dim = c_.count("v_head_dim");
    m_.head_dim = m_.nope_dim + m_.rope_dim;
    if (m_.kv_heads != m_.heads) {
      throw_input(c_.place(), "num_key_value_heads " + std::to_string(m_.kv_heads) +
                                  " differs from num_attention_heads " + std::to_string(m_.heads) +
                                  ": latent attention gives every head its own keys and values");
    }
    if (m_.rope_dim % 2 != 0) {
      throw_input(c_.place(), "\"qk_rope_head_dim\" " + std::to_string(m_.rope_dim) +
                                  " is odd; RoPE rotates pairs of features");
    }
  }

  void experts() {
    m_.experts = count(row_.experts);
    m_.top_k = count(row_.top_k);
    if (m_.top_k > m_.experts) {
      throw_input(c_.place(), "\"" + std::string(row_.top_k.name) + "\" " +
                                  std::to_string(m_.top_k) + " is more than the " +
                                  std::to_string(m_.experts) + " experts");
    }
    m_.norm_topk = row_.norm_topk_key ? flag(row_.norm_topk_key, row_.norm_topk_default) : true;
    m_.moe_intermediate = count(row_.moe_intermediate);
    if (m_.moe_intermediate == 0) m_.moe_intermediate = m_.intermediate;
    if (m_.moe_intermediate == 0) {
      throw_input(c_.place(),
                  "has no \"" + std::string(row_.intermediate.name) + "\": the experts' width");
    }
    if (m_.shared == Shared::kSigmoidGated) {
      note("shared_expert_intermediate_size");
      m_.shared_intermediate = c_.count("shared_expert_intermediate_size");
    } else if (m_.shared == Shared::kPlain) {
      note("n_shared_experts");
      const int64_t n = c_.has("n_shared_experts") ? c_.count("n_shared_experts") : 1;
      m_.shared_intermediate = m_.moe_intermediate * n;
    }
    if (m_.router == Router::kSigmoidGrouped) {
      note("routed_scaling_factor");
      m_.routed_scaling = c_.positive("routed_scaling_factor", 2.5);
      note("n_group");
      note("topk_group");
      m_.groups = c_.count("n_group", 1);
      m_.top_groups = c_.count("topk_group", 1);
      if (m_.experts % m_.groups != 0 || m_.experts / m_.groups < 2) {
        throw_input(c_.place(), "\"n_group\" " + std::to_string(m_.groups) + " does not split " +
                                    std::to_string(m_.experts) +
                                    " experts into groups of at least 2");
      }
      if (m_.top_groups > m_.groups) {
        throw_input(c_.place(), "\"topk_group\" " + std::to_string(m_.top_groups) +
                                    " is more than n_group " + std::to_string(m_.groups));
      }
      if (m_.top_k > m_.top_groups * (m_.experts / m_.groups)) {
        throw_input(c_.place(), "\"num_experts_per_tok\" " + std::to_string(m_.top_k) +
                                    " is more than the experts of topk_group groups");
      }
    }
  }

  // Sizes past any model's, refused before anything is sized by them: a
  // hostile config's 10⁹ layers or heads would otherwise size the plan, or
  // overflow the products of the expected shapes, before a tensor is found
  // to disagree. The largest models today have ~120 layers, 128 heads of
  // 256, a hidden size of 16384, 2^17 experts' widths and 256 experts.
  void bounds() const {
    struct Limit {
      int64_t value, max;
      const char* key;
    };
    const Limit limits[] = {
        {m_.layers, 4096, row_.layers.name},
        {m_.heads, 16384, row_.heads.name},
        {m_.kv_heads, 16384, row_.kv_heads.name},
        {m_.head_dim, 65536, "head_dim"},
        {m_.v_head_dim, 65536, "v_head_dim"},
        {m_.hidden, int64_t{1} << 20, row_.hidden.name},
        {m_.intermediate, int64_t{1} << 22, row_.intermediate.name},
        {m_.moe_intermediate, int64_t{1} << 22, row_.moe_intermediate.name},
        {m_.shared_intermediate, int64_t{1} << 22, "shared_expert_intermediate_size"},
        {m_.experts, 65536, row_.experts.name},
        {m_.q_lora_rank, int64_t{1} << 20, "q_lora_rank"},
        {m_.kv_lora_rank, int64_t{1} << 20, "kv_lora_rank"},
    };
    for (const Limit& l : limits) {
      if (l.value > l.max) {
        throw_input(c_.place(), "\"" + std::string(l.key ? l.key : "?") + "\" " +
                                    std::to_string(l.value) + " is more than attn reads (" +
                                    std::to_string(l.max) + ")");
      }
    }
  }

  // Learned positions or RoPE's width; the per-layer frequencies are plan()'s.
  void positions() {
    if (m_.positions != Positions::kRotary) return;
    double partial = 1;
    if (const char* key = present(row_.partial_rotary)) {
      note(key);
      partial = c_.number(key);
    } else {
      partial = row_.partial_rotary.fallback;
    }
    // v5's rope_parameters carry it too, and win.
    if (const json::Value* p = c_.get("rope_parameters")) {
      if (p->is_object()) {
        const json::Value* e = p;
        if (const json::Value* full = p->find("full_attention")) e = full;
        if (e->is_object()) {
          if (const json::Value* f = e->find("partial_rotary_factor"); f && f->is_number()) {
            partial = f->as_number();
          }
        }
      }
    }
    const int64_t width = m_.qkv == QkvLayout::kLatent ? m_.rope_dim : m_.head_dim;
    if (m_.qkv == QkvLayout::kLatent) {
      m_.rope_dims = width;
      return;
    }
    if (!(partial > 0 && partial <= 1)) {
      throw_input(c_.place(),
                  "\"partial_rotary_factor\" must be in (0, 1], got " + format_shortest(partial));
    }
    // transformers: int(head_dim * partial_rotary_factor).
    const auto dims = static_cast<int64_t>(static_cast<double>(width) * partial);
    if (dims < 2 || dims % 2 != 0) {
      throw_input(c_.place(), "\"partial_rotary_factor\" " + format_shortest(partial) +
                                  " rotates " + std::to_string(dims) + " of head_dim " +
                                  std::to_string(width) +
                                  " dimensions; RoPE rotates an even number, at least 2");
    }
    m_.rope_dims = dims;
  }

  // Whether layer n attends in a sliding window, by layer_types or the row.
  bool sliding(int64_t n) {
    if (row_.reads_layer_types) {
      if (const json::Value* types = c_.get("layer_types")) {
        note("layer_types");
        if (!types->is_array() || static_cast<int64_t>(types->size()) < m_.layers) {
          throw_input(c_.place(), "\"layer_types\" must list every layer");
        }
        for (size_t i = 0; i < types->size(); ++i) {
          const json::Value t = types->element(i);
          if (!t.is_string() ||
              (t.as_string() != "sliding_attention" && t.as_string() != "full_attention")) {
            throw_input(c_.place(), "\"layer_types\"[" + std::to_string(i) + "] is " +
                                        json::describe(t) +
                                        "; expected \"full_attention\" or \"sliding_attention\"");
          }
        }
        return types->element(static_cast<size_t>(n)).as_string() == "sliding_attention";
      }
    }
    if (!c_.has("sliding_window")) return false;
    switch (row_.sliding) {
      case Sliding::kNever:
        return false;
      case Sliding::kWhenSet:
        return true;
      case Sliding::kEvenLayers:
        return n % 2 == 0;
      case Sliding::kGemma3Pattern:
        note("sliding_window_pattern");
        return (n + 1) % c_.count("sliding_window_pattern", 6) != 0;
      case Sliding::kQwen2:
        note("use_sliding_window");
        note("max_window_layers");
        return c_.flag("use_sliding_window", false) && n >= c_.whole("max_window_layers", 0);
      case Sliding::kWhenUsed:
        note("use_sliding_window");
        return c_.flag("use_sliding_window", false);
      case Sliding::kSmolLM3:
        note("use_sliding_window");
        return c_.flag("use_sliding_window", false) && !uses_rope(n);
    }
    return false;
  }

  // SmolLM3's no_rope_layers: 1 where the layer rotates Q and K.
  bool uses_rope(int64_t n) {
    if (m_.positions != Positions::kRotary) return false;
    if (!row_.no_rope_key) return true;
    if (const json::Value* list = c_.get(row_.no_rope_key)) {
      note(row_.no_rope_key);
      if (!list->is_array() || static_cast<int64_t>(list->size()) < m_.layers) {
        throw_input(c_.place(), "\"" + std::string(row_.no_rope_key) + "\" must list every layer");
      }
      const json::Value v = list->element(static_cast<size_t>(n));
      if (!v.is_number() || (v.as_number() != 0 && v.as_number() != 1)) {
        throw_input(c_.place(), "\"" + std::string(row_.no_rope_key) + "\"[" + std::to_string(n) +
                                    "] is " + json::describe(v) + "; expected 0 or 1");
      }
      return v.as_number() == 1;
    }
    note("no_rope_layer_interval");
    return (n + 1) % c_.count("no_rope_layer_interval", 4) != 0;
  }

  // RoPE's base and scaling for a layer: rope_theta and rope_scaling, or
  // v5's rope_parameters (one object, or one per layer type); Gemma 3's
  // sliding layers turn at rope_local_base_freq, unscaled.
  void rope(LayerPlan& p, int64_t n) {
    const int64_t max_pos =
        c_.has("max_position_embeddings") ? c_.count("max_position_embeddings") : 0;
    const int64_t original = c_.has("original_max_position_embeddings")
                                 ? c_.count("original_max_position_embeddings")
                                 : 0;
    double theta = row_.rope_theta.fallback;
    const json::Value* scaling = nullptr;
    std::string scaling_place = c_.place() + ": rope_scaling";
    if (const json::Value* params = c_.get("rope_parameters")) {
      note("rope_parameters");
      if (!params->is_object()) throw_input(c_.place(), "\"rope_parameters\" must be an object");
      const json::Value* entry = params;
      scaling_place = c_.place() + ": rope_parameters";
      if (params->find("full_attention") || params->find("sliding_attention")) {
        const char* type = p.sliding ? "sliding_attention" : "full_attention";
        entry = params->find(type);
        if (!entry || !entry->is_object()) {
          throw_input(c_.place(), std::string("\"rope_parameters\" has no \"") + type +
                                      "\" object, and layer " + std::to_string(n) + " is " + type);
        }
        scaling_place += std::string(".") + type;
      }
      const Config e(*entry, scaling_place);
      // rotary_emb_base and friends stand beside v5's object in older keys.
      if (const char* key = present(row_.rope_theta)) {
        note(key);
        theta = c_.positive(key);
      }
      theta = e.positive("rope_theta", theta);
      if (e.has("rope_type") || e.has("type")) scaling = entry;
    } else {
      if (const char* key = present(row_.rope_theta)) {
        note(key);
        theta = c_.positive(key);
      }
      if (c_.has("rope_scaling")) {
        note("rope_scaling");
        scaling = c_.get("rope_scaling");
      }
      if (row_.sliding == Sliding::kGemma3Pattern && p.sliding) {
        // transformers' Gemma 3: the local rotary embedding is a default one.
        note("rope_local_base_freq");
        theta = c_.positive("rope_local_base_freq", 10000.0);
        scaling = nullptr;
      }
    }
    p.rope_theta = theta;
    if (scaling) {
      if (max_pos) note("max_position_embeddings");
      p.scaling = parse_rope_scaling(*scaling, scaling_place, max_pos, original,
                                     {"rope_theta", "partial_rotary_factor"});
      if (p.scaling) check_rope_scaling(*p.scaling, m_.rope_dims, scaling_place);
    }
  }

  double scale(const LayerPlan& p, int64_t n) {
    const double dk = static_cast<double>(m_.head_dim);
    switch (row_.scale) {
      case ScaleRule::kInvSqrtHeadDim:
        return 1.0 / std::sqrt(dk);
      case ScaleRule::kQueryPreAttnScalar:
        if (c_.has("query_pre_attn_scalar")) {
          note("query_pre_attn_scalar");
          return 1.0 / std::sqrt(c_.positive("query_pre_attn_scalar"));
        }
        return 1.0 / std::sqrt(dk);
      case ScaleRule::kAttentionMultiplier:
        note("attention_multiplier");
        return c_.positive("attention_multiplier", 1.0);
      case ScaleRule::kGpt2: {
        note("scale_attn_weights");
        note("scale_attn_by_inverse_layer_idx");
        double f = c_.flag("scale_attn_weights", true) ? 1.0 / std::sqrt(dk) : 1.0;
        if (c_.flag("scale_attn_by_inverse_layer_idx", false)) f /= static_cast<double>(n + 1);
        return f;
      }
      case ScaleRule::kLatent: {
        // DeepSeek: yarn's mscale_all_dim scales the scores by mscale².
        double f = 1.0 / std::sqrt(dk);
        if (p.scaling && p.scaling->mscale_all_dim.value_or(0) != 0) {
          const double factor = p.scaling->factor;
          const double m =
              factor <= 1 ? 1.0 : 0.1 * *p.scaling->mscale_all_dim * std::log(factor) + 1.0;
          f *= m * m;
        }
        return f;
      }
    }
    return 1.0 / std::sqrt(dk);
  }

  bool moe(int64_t n) {
    if (m_.router == Router::kNone || m_.attention_only) return false;
    switch (row_.moe_layers) {
      case MoeLayers::kAll:
        return true;
      case MoeLayers::kFirstDense:
        note("first_k_dense_replace");
        return n >= c_.whole("first_k_dense_replace", 0);
      case MoeLayers::kSparseStep: {
        note("decoder_sparse_step");
        note("mlp_only_layers");
        if (const json::Value* only = c_.get("mlp_only_layers")) {
          if (!only->is_array()) throw_input(c_.place(), "\"mlp_only_layers\" must be a list");
          for (size_t i = 0; i < only->size(); ++i) {
            const json::Value v = only->element(i);
            if (!v.is_number()) {
              throw_input(c_.place(), "\"mlp_only_layers\"[" + std::to_string(i) + "] is " +
                                          json::describe(v) + "; expected a layer index");
            }
            if (v.as_number() == static_cast<double>(n)) return false;
          }
        }
        const int64_t step = c_.has("decoder_sparse_step") ? c_.count("decoder_sparse_step") : 1;
        return (n + 1) % step == 0;
      }
    }
    return false;
  }

  void plan() {
    m_.plan.resize(static_cast<size_t>(m_.layers));
    for (int64_t n = 0; n < m_.layers; ++n) {
      LayerPlan& p = m_.plan[static_cast<size_t>(n)];
      p.sliding = m_.causal && sliding(n);
      p.rope = uses_rope(n);
      if (m_.positions == Positions::kRotary) rope(p, n);
      p.moe = moe(n);
      p.scale = scale(p, n);
    }
    bool any_sliding = false;
    for (const LayerPlan& p : m_.plan) any_sliding = any_sliding || p.sliding;
    if (any_sliding) {
      note("sliding_window");
      m_.window = c_.count("sliding_window");
    }
    bool any_moe = false, any_dense = false;
    for (const LayerPlan& p : m_.plan) (p.moe ? any_moe : any_dense) = true;
    if (any_dense && m_.intermediate == 0 && !m_.attention_only) {
      c_.count(row_.intermediate.name);  // throws: missing
    }
    (void)any_moe;
  }

  void multipliers() {
    switch (row_.embed_scale) {
      case EmbedScale::kNone:
        break;
      case EmbedScale::kSqrtHidden:
        m_.embed_multiplier = std::sqrt(static_cast<double>(m_.hidden));
        break;
      case EmbedScale::kMultiplier:
        note_model("embedding_multiplier");
        m_.embed_multiplier = c_.positive("embedding_multiplier", 1.0);
        break;
    }
    if (row_.residual_multiplier_key) {
      note_model(row_.residual_multiplier_key);
      m_.residual_multiplier = c_.positive(row_.residual_multiplier_key, 1.0);
    }
    m_.logit_scale = row_.logit_scale;
    m_.logit_value = row_.logit_default;
    if (row_.logit_key && c_.has(row_.logit_key)) {
      note_model(row_.logit_key);
      m_.logit_value = c_.positive(row_.logit_key);
    }
    if (m_.logit_scale == LogitScale::kSoftcap && m_.logit_value == 0) {
      m_.logit_scale = LogitScale::kNone;
    }
    note_model("tie_word_embeddings");
    m_.tied = c_.flag("tie_word_embeddings", row_.tied_default);
  }

  void finish() {
    if (m_.tied) m_.drop(Role::kLmHead);
    if (m_.qk_norm == QkNorm::kNone) {
      m_.drop(Role::kQNorm);
      m_.drop(Role::kKNorm);
    }
    if (!m_.fields.empty()) m_.fields.resize(m_.fields.size() - 2);
  }

  const Row& row_;
  const Config& c_;
  ModelConfig m_;
};

}  // namespace

ModelConfig read_model_config(const Row& row, const detail::Config& config, bool attention_only) {
  return Reader(row, config, attention_only).read();
}

bool attention_role(Role r) {
  switch (r) {
    case Role::kQ:
    case Role::kK:
    case Role::kV:
    case Role::kQkv:
    case Role::kO:
    case Role::kQNorm:
    case Role::kKNorm:
    case Role::kSinks:
    case Role::kQa:
    case Role::kQaNorm:
    case Role::kQb:
    case Role::kKva:
    case Role::kKvaNorm:
    case Role::kKvb:
    case Role::kKb:
    case Role::kVb:
      return true;
    default:
      return false;
  }
}

}  // namespace attn::model
