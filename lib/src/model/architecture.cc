// The rows of the architecture table, each written from transformers'
// modeling file it names (docs/models.md lists them). A row starts from
// the one it derives from, as the modeling files do ("Qwen 2 is Llama with
// q/k/v biases"), and says only what differs. The few switches that
// config.json flips in a family's layout are its `configure` function.
#include "model/architecture.h"

#include <cmath>

#include "attn/error.h"
#include "base/number_text.h"
#include "model/config_json.h"
#include "model/model_config.h"

namespace attn::model {

const char* role_title(Role r) {
  switch (r) {
    case Role::kEmbed:
      return "token embedding";
    case Role::kPosEmbed:
      return "position embedding";
    case Role::kTypeEmbed:
      return "token type embedding";
    case Role::kEmbedNorm:
      return "embedding norm";
    case Role::kAttnNorm:
      return "attention input norm";
    case Role::kQ:
      return "query projection";
    case Role::kK:
      return "key projection";
    case Role::kV:
      return "value projection";
    case Role::kQkv:
      return "fused query/key/value projection";
    case Role::kO:
      return "output projection";
    case Role::kQNorm:
      return "query norm";
    case Role::kKNorm:
      return "key norm";
    case Role::kSinks:
      return "attention sinks";
    case Role::kQa:
      return "query down-projection";
    case Role::kQaNorm:
      return "query latent norm";
    case Role::kQb:
      return "query up-projection";
    case Role::kKva:
      return "key/value latent projection";
    case Role::kKvaNorm:
      return "key/value latent norm";
    case Role::kKvb:
      return "key/value up-projection";
    case Role::kKb:
      return "key up-projection";
    case Role::kVb:
      return "value up-projection";
    case Role::kAttnPostNorm:
      return "attention output norm";
    case Role::kMlpNorm:
      return "MLP input norm";
    case Role::kMlpPostNorm:
      return "MLP output norm";
    case Role::kGate:
      return "MLP gate";
    case Role::kUp:
      return "MLP up projection";
    case Role::kGateUp:
      return "fused MLP gate/up projection";
    case Role::kDown:
      return "MLP down projection";
    case Role::kRouter:
      return "expert router";
    case Role::kRouterScoreBias:
      return "router score correction";
    case Role::kExpertGate:
      return "expert gate";
    case Role::kExpertUp:
      return "expert up projection";
    case Role::kExpertDown:
      return "expert down projection";
    case Role::kExpertsGateUp:
      return "experts' fused gate/up projection";
    case Role::kExpertsGateUpBias:
      return "experts' gate/up bias";
    case Role::kExpertsDown:
      return "experts' down projection";
    case Role::kExpertsDownBias:
      return "experts' down bias";
    case Role::kSharedGate:
      return "shared expert gate";
    case Role::kSharedUp:
      return "shared expert up projection";
    case Role::kSharedDown:
      return "shared expert down projection";
    case Role::kSharedExpertGate:
      return "shared expert's sigmoid gate";
    case Role::kFinalNorm:
      return "final norm";
    case Role::kLmHead:
      return "output head";
    case Role::kCount:
      break;
  }
  return "tensor";
}

namespace {

// --- Llama and the families written as Llama plus changes ----------------

// models/llama/modeling_llama.py
Row llama() {
  Row r;
  r.model_type = "llama";
  r.title = "Llama";
  r.source = "models/llama/modeling_llama.py";
  r.causal_lm = "LlamaForCausalLM";
  r.tensors = {
      {Role::kEmbed, "model.embed_tokens"},
      {Role::kAttnNorm, "model.layers.{L}.input_layernorm"},
      {Role::kQ, "model.layers.{L}.self_attn.q_proj", Bias::kAttention},
      {Role::kK, "model.layers.{L}.self_attn.k_proj", Bias::kAttention},
      {Role::kV, "model.layers.{L}.self_attn.v_proj", Bias::kAttention},
      {Role::kO, "model.layers.{L}.self_attn.o_proj", Bias::kOutput},
      {Role::kMlpNorm, "model.layers.{L}.post_attention_layernorm"},
      {Role::kGate, "model.layers.{L}.mlp.gate_proj", Bias::kMlp},
      {Role::kUp, "model.layers.{L}.mlp.up_proj", Bias::kMlp},
      {Role::kDown, "model.layers.{L}.mlp.down_proj", Bias::kMlp},
      {Role::kFinalNorm, "model.norm"},
      {Role::kLmHead, "lm_head"},
  };
  r.attention_bias_key = "attention_bias";
  r.mlp_bias_key = "mlp_bias";
  return r;
}

void replace(Row& r, Role role, const std::string& path, Bias bias = Bias::kNever) {
  for (TensorName& t : r.tensors) {
    if (t.role == role) {
      t.path = path;
      t.bias = bias;
      return;
    }
  }
  r.tensors.push_back({role, path, bias});
}

void remove(Row& r, Role role) {
  for (size_t i = 0; i < r.tensors.size(); ++i) {
    if (r.tensors[i].role == role) {
      r.tensors.erase(r.tensors.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
}

// models/mistral/modeling_mistral.py: a window on every layer once set.
Row mistral() {
  Row r = llama();
  r.model_type = "mistral";
  r.title = "Mistral";
  r.source = "models/mistral/modeling_mistral.py";
  r.causal_lm = "MistralForCausalLM";
  r.sliding = Sliding::kWhenSet;
  return r;
}

// models/mixtral/modeling_mixtral.py
Row mixtral() {
  Row r = mistral();
  r.model_type = "mixtral";
  r.title = "Mixtral";
  r.source = "models/mixtral/modeling_mixtral.py";
  r.causal_lm = "MixtralForCausalLM";
  for (Role role : {Role::kGate, Role::kUp, Role::kDown}) remove(r, role);
  r.tensors.push_back({Role::kRouter, "model.layers.{L}.block_sparse_moe.gate"});
  r.tensors.push_back({Role::kExpertGate, "model.layers.{L}.block_sparse_moe.experts.{E}.w1"});
  r.tensors.push_back({Role::kExpertUp, "model.layers.{L}.block_sparse_moe.experts.{E}.w3"});
  r.tensors.push_back({Role::kExpertDown, "model.layers.{L}.block_sparse_moe.experts.{E}.w2"});
  r.router = Router::kSoftmaxTopK;
  r.experts = Key{"num_local_experts", -1, {}};
  r.mlp_bias_key = nullptr;
  return r;
}

// models/qwen2/modeling_qwen2.py: q/k/v biases always, o none.
Row qwen2() {
  Row r = llama();
  r.model_type = "qwen2";
  r.title = "Qwen 2";
  r.source = "models/qwen2/modeling_qwen2.py";
  r.causal_lm = "Qwen2ForCausalLM";
  for (Role role : {Role::kQ, Role::kK, Role::kV}) {
    for (TensorName& t : r.tensors) {
      if (t.role == role) t.bias = Bias::kAlways;
    }
  }
  replace(r, Role::kO, "model.layers.{L}.self_attn.o_proj");
  r.attention_bias_key = nullptr;
  r.mlp_bias_key = nullptr;
  r.sliding = Sliding::kQwen2;
  return r;
}

// models/qwen3/modeling_qwen3.py: each head of Q and K RMS-normed.
Row qwen3() {
  Row r = llama();
  r.model_type = "qwen3";
  r.title = "Qwen 3";
  r.source = "models/qwen3/modeling_qwen3.py";
  r.causal_lm = "Qwen3ForCausalLM";
  r.tensors.push_back({Role::kQNorm, "model.layers.{L}.self_attn.q_norm"});
  r.tensors.push_back({Role::kKNorm, "model.layers.{L}.self_attn.k_norm"});
  r.qk_norm = QkNorm::kPerHead;
  r.mlp_bias_key = nullptr;
  r.sliding = Sliding::kQwen2;
  return r;
}

// models/gemma/modeling_gemma.py: (1 + w) norms, embeddings times
// √hidden, GeGLU, tied.
Row gemma() {
  Row r = llama();
  r.model_type = "gemma";
  r.title = "Gemma";
  r.source = "models/gemma/modeling_gemma.py";
  r.causal_lm = "GemmaForCausalLM";
  r.norm = NormKind::kRmsUnit;
  r.embed_scale = EmbedScale::kSqrtHidden;
  // Gemma reads hidden_activation and, when it is unset, uses
  // gelu_pytorch_tanh whatever hidden_act says.
  r.act = Key{"hidden_activation", 0, {}};
  r.act_default = "gelu_pytorch_tanh";
  r.tied_default = true;
  r.mlp_bias_key = nullptr;
  return r;
}

// models/gemma2/modeling_gemma2.py: norms before and after both
// sublayers, soft-capped scores and logits, every other layer sliding.
Row gemma2() {
  Row r = gemma();
  r.model_type = "gemma2";
  r.title = "Gemma 2";
  r.source = "models/gemma2/modeling_gemma2.py";
  r.causal_lm = "Gemma2ForCausalLM";
  r.tensors.push_back({Role::kAttnPostNorm, "model.layers.{L}.post_attention_layernorm"});
  replace(r, Role::kMlpNorm, "model.layers.{L}.pre_feedforward_layernorm");
  r.tensors.push_back({Role::kMlpPostNorm, "model.layers.{L}.post_feedforward_layernorm"});
  r.scale = ScaleRule::kQueryPreAttnScalar;
  r.softcap_key = "attn_logit_softcapping";
  r.logit_scale = LogitScale::kSoftcap;
  r.logit_key = "final_logit_softcapping";
  r.logit_default = 0;
  r.sliding = Sliding::kEvenLayers;
  return r;
}

// models/gemma3/modeling_gemma3.py (Gemma3ForCausalLM): Gemma 2 with
// (1 + w) Q/K norms, sliding unless (layer + 1) is a multiple of the
// pattern, and sliding layers at rope_local_base_freq.
Row gemma3() {
  Row r = gemma2();
  r.model_type = "gemma3_text";
  r.title = "Gemma 3";
  r.source = "models/gemma3/modeling_gemma3.py";
  r.causal_lm = "Gemma3ForCausalLM";
  r.tensors.push_back({Role::kQNorm, "model.layers.{L}.self_attn.q_norm"});
  r.tensors.push_back({Role::kKNorm, "model.layers.{L}.self_attn.k_norm"});
  r.qk_norm = QkNorm::kPerHead;
  r.qk_norm_kind = NormKind::kRmsUnit;
  r.sliding = Sliding::kGemma3Pattern;
  return r;
}

// models/granite/modeling_granite.py: Llama with an embedding, a residual
// and an attention multiplier, and the logits divided by logits_scaling.
Row granite() {
  Row r = llama();
  r.model_type = "granite";
  r.title = "Granite";
  r.source = "models/granite/modeling_granite.py";
  r.causal_lm = "GraniteForCausalLM";
  r.embed_scale = EmbedScale::kMultiplier;
  r.residual_multiplier_key = "residual_multiplier";
  r.scale = ScaleRule::kAttentionMultiplier;
  r.logit_scale = LogitScale::kDivideByScaling;
  r.logit_key = "logits_scaling";
  return r;
}

// models/smollm3/modeling_smollm3.py: layers without RoPE.
Row smollm3() {
  Row r = llama();
  r.model_type = "smollm3";
  r.title = "SmolLM3";
  r.source = "models/smollm3/modeling_smollm3.py";
  r.causal_lm = "SmolLM3ForCausalLM";
  r.no_rope_key = "no_rope_layers";
  r.rope_theta.fallback = 2000000;
  r.sliding = Sliding::kSmolLM3;
  r.tied_default = true;
  return r;
}

// models/olmo/modeling_olmo.py: LayerNorms without parameters (ε 1e-5),
// Q, K and V clipped.
Row olmo() {
  Row r = llama();
  r.model_type = "olmo";
  r.title = "OLMo";
  r.source = "models/olmo/modeling_olmo.py";
  r.causal_lm = "OlmoForCausalLM";
  r.norm = NormKind::kLayerNormNoParams;
  r.eps = Key{nullptr, 1e-5, {}};
  for (Role role : {Role::kAttnNorm, Role::kMlpNorm, Role::kFinalNorm}) replace(r, role, "");
  r.clip_key = "clip_qkv";
  r.mlp_bias_key = nullptr;
  return r;
}

// models/olmo2/modeling_olmo2.py: norms after each sublayer only, Q and
// K RMS-normed over their whole width.
Row olmo2() {
  Row r = llama();
  r.model_type = "olmo2";
  r.title = "OLMo 2";
  r.source = "models/olmo2/modeling_olmo2.py";
  r.causal_lm = "Olmo2ForCausalLM";
  remove(r, Role::kAttnNorm);
  remove(r, Role::kMlpNorm);
  r.tensors.push_back({Role::kAttnPostNorm, "model.layers.{L}.post_attention_layernorm"});
  r.tensors.push_back({Role::kMlpPostNorm, "model.layers.{L}.post_feedforward_layernorm"});
  r.tensors.push_back({Role::kQNorm, "model.layers.{L}.self_attn.q_norm"});
  r.tensors.push_back({Role::kKNorm, "model.layers.{L}.self_attn.k_norm"});
  r.qk_norm = QkNorm::kWholeWidth;
  r.eps.fallback = 1e-5;
  r.mlp_bias_key = nullptr;
  return r;
}

// models/starcoder2/modeling_starcoder2.py: LayerNorms with biases, a
// plain GELU MLP, biases on every projection (use_bias), a window.
Row starcoder2() {
  Row r = llama();
  r.model_type = "starcoder2";
  r.title = "StarCoder2";
  r.source = "models/starcoder2/modeling_starcoder2.py";
  r.causal_lm = "Starcoder2ForCausalLM";
  r.norm = NormKind::kLayerNorm;
  r.eps = Key{"norm_epsilon", 1e-5, {}};
  for (TensorName& t : r.tensors) {
    if (t.role == Role::kAttnNorm || t.role == Role::kMlpNorm || t.role == Role::kFinalNorm)
      t.bias = Bias::kAlways;
  }
  r.mlp = MlpKind::kPlain;
  remove(r, Role::kGate);
  replace(r, Role::kUp, "model.layers.{L}.mlp.c_fc", Bias::kMlp);
  replace(r, Role::kDown, "model.layers.{L}.mlp.c_proj", Bias::kMlp);
  r.attention_bias_key = "use_bias";
  r.attention_bias_default = true;
  r.mlp_bias_key = "use_bias";
  r.mlp_bias_default = true;
  r.act_default = "gelu_pytorch_tanh";
  r.kv_heads.fallback = 2;
  r.sliding = Sliding::kWhenSet;
  r.tied_default = true;
  return r;
}

// models/cohere/modeling_cohere.py: one LayerNorm (no bias) before a
// parallel attention and MLP, interleaved RoPE, logits times logit_scale,
// optional per-head Q/K norms.
void cohere_configure(const detail::Config& c, ModelConfig& m) {
  if (!c.flag("use_qk_norm", false)) {
    m.drop(Role::kQNorm);
    m.drop(Role::kKNorm);
    m.qk_norm = QkNorm::kNone;
  }
}
Row cohere() {
  Row r = llama();
  r.model_type = "cohere";
  r.title = "Cohere Command-R";
  r.source = "models/cohere/modeling_cohere.py";
  r.causal_lm = "CohereForCausalLM";
  r.block = Block::kParallel;
  r.norm = NormKind::kLayerNormNoBias;
  r.eps = Key{"layer_norm_eps", 1e-5, {}};
  remove(r, Role::kMlpNorm);
  r.tensors.push_back({Role::kQNorm, "model.layers.{L}.self_attn.q_norm"});
  r.tensors.push_back({Role::kKNorm, "model.layers.{L}.self_attn.k_norm"});
  r.qk_norm = QkNorm::kPerHeadOwn;
  r.qk_norm_kind = NormKind::kLayerNormNoBias;
  r.rope_interleaved = true;
  r.rope_theta.fallback = 500000;  // transformers 5 (4.x: 10000)
  r.logit_scale = LogitScale::kMultiplyByScale;
  r.logit_key = "logit_scale";
  r.logit_default = 0.0625;
  r.tied_default = true;
  r.mlp_bias_key = nullptr;
  r.configure = cohere_configure;
  return r;
}

// models/phi3/modeling_phi3.py: fused qkv_proj and gate_up_proj, partial
// rotary, longrope, a window once set.
Row phi3() {
  Row r = llama();
  r.model_type = "phi3";
  r.title = "Phi-3";
  r.source = "models/phi3/modeling_phi3.py";
  r.causal_lm = "Phi3ForCausalLM";
  for (Role role : {Role::kQ, Role::kK, Role::kV, Role::kGate, Role::kUp}) remove(r, role);
  r.tensors.push_back({Role::kQkv, "model.layers.{L}.self_attn.qkv_proj"});
  r.tensors.push_back({Role::kGateUp, "model.layers.{L}.mlp.gate_up_proj"});
  replace(r, Role::kO, "model.layers.{L}.self_attn.o_proj");
  replace(r, Role::kDown, "model.layers.{L}.mlp.down_proj");
  r.qkv = QkvLayout::kSideBySide;
  r.attention_bias_key = nullptr;
  r.mlp_bias_key = nullptr;
  r.eps.fallback = 1e-5;
  r.sliding = Sliding::kWhenSet;
  return r;
}

// models/phi/modeling_phi.py (Phi-1, 1.5, 2): a parallel block with one
// LayerNorm, biases everywhere, a plain GELU MLP, partial rotary, optional
// Q/K LayerNorms.
void phi_configure(const detail::Config& c, ModelConfig& m) {
  if (!c.flag("qk_layernorm", false)) {
    m.drop(Role::kQNorm);
    m.drop(Role::kKNorm);
    m.qk_norm = QkNorm::kNone;
  }
}
Row phi() {
  Row r;
  r.model_type = "phi";
  r.title = "Phi";
  r.source = "models/phi/modeling_phi.py";
  r.causal_lm = "PhiForCausalLM";
  r.tensors = {
      {Role::kEmbed, "model.embed_tokens"},
      {Role::kAttnNorm, "model.layers.{L}.input_layernorm", Bias::kAlways},
      {Role::kQ, "model.layers.{L}.self_attn.q_proj", Bias::kAlways},
      {Role::kK, "model.layers.{L}.self_attn.k_proj", Bias::kAlways},
      {Role::kV, "model.layers.{L}.self_attn.v_proj", Bias::kAlways},
      {Role::kO, "model.layers.{L}.self_attn.dense", Bias::kAlways},
      {Role::kQNorm, "model.layers.{L}.self_attn.q_layernorm", Bias::kAlways},
      {Role::kKNorm, "model.layers.{L}.self_attn.k_layernorm", Bias::kAlways},
      {Role::kUp, "model.layers.{L}.mlp.fc1", Bias::kAlways},
      {Role::kDown, "model.layers.{L}.mlp.fc2", Bias::kAlways},
      {Role::kFinalNorm, "model.final_layernorm", Bias::kAlways},
      {Role::kLmHead, "lm_head", Bias::kAlways},
  };
  r.block = Block::kParallel;
  r.norm = NormKind::kLayerNorm;
  r.eps = Key{"layer_norm_eps", 1e-5, {}};
  r.qk_norm = QkNorm::kPerHead;
  r.qk_norm_kind = NormKind::kLayerNorm;
  r.mlp = MlpKind::kPlain;
  r.act_default = "gelu_new";
  r.partial_rotary.fallback = 0.5;
  r.configure = phi_configure;
  return r;
}

// models/stablelm/modeling_stablelm.py: LayerNorms, partial rotary,
// optional per-head Q/K LayerNorms (one per head) and parallel residual.
void stablelm_configure(const detail::Config& c, ModelConfig& m) {
  if (!c.flag("qk_layernorm", false)) {
    m.drop(Role::kQNorm);
    m.drop(Role::kKNorm);
    m.qk_norm = QkNorm::kNone;
  }
  if (c.flag("use_parallel_residual", false)) {
    m.block = Block::kParallel;
    m.drop(Role::kMlpNorm);
  }
}
Row stablelm() {
  Row r = llama();
  r.model_type = "stablelm";
  r.title = "StableLM";
  r.source = "models/stablelm/modeling_stablelm.py";
  r.causal_lm = "StableLmForCausalLM";
  r.norm = NormKind::kLayerNorm;
  r.eps = Key{"layer_norm_eps", 1e-5, {}};
  for (Role role : {Role::kAttnNorm, Role::kMlpNorm, Role::kFinalNorm}) {
    for (TensorName& t : r.tensors) {
      if (t.role == role) t.bias = Bias::kAlways;
    }
  }
  replace(r, Role::kO, "model.layers.{L}.self_attn.o_proj");
  r.attention_bias_key = "use_qkv_bias";
  r.output_bias_key = "";  // never
  r.mlp_bias_key = nullptr;
  r.tensors.push_back({Role::kQNorm, "model.layers.{L}.self_attn.q_layernorm.norms.{H}"});
  r.tensors.push_back({Role::kKNorm, "model.layers.{L}.self_attn.k_layernorm.norms.{H}"});
  r.qk_norm = QkNorm::kPerHeadOwn;
  r.qk_norm_kind = NormKind::kLayerNormNoBias;
  r.partial_rotary.fallback = 0.25;
  r.configure = stablelm_configure;
  return r;
}

// models/gpt_neox/modeling_gpt_neox.py: Q, K and V fused per head, a
// parallel residual with two LayerNorms, partial rotary (rotary_pct).
void gpt_neox_configure(const detail::Config& c, ModelConfig& m) {
  if (!c.flag("use_parallel_residual", true)) m.block = Block::kSequential;
}
Row gpt_neox() {
  Row r;
  r.model_type = "gpt_neox";
  r.title = "GPT-NeoX (Pythia)";
  r.source = "models/gpt_neox/modeling_gpt_neox.py";
  r.causal_lm = "GPTNeoXForCausalLM";
  r.tensors = {
      {Role::kEmbed, "gpt_neox.embed_in"},
      {Role::kAttnNorm, "gpt_neox.layers.{L}.input_layernorm", Bias::kAlways},
      {Role::kQkv, "gpt_neox.layers.{L}.attention.query_key_value", Bias::kAttention},
      {Role::kO, "gpt_neox.layers.{L}.attention.dense", Bias::kAttention},
      {Role::kMlpNorm, "gpt_neox.layers.{L}.post_attention_layernorm", Bias::kAlways},
      {Role::kUp, "gpt_neox.layers.{L}.mlp.dense_h_to_4h", Bias::kAlways},
      {Role::kDown, "gpt_neox.layers.{L}.mlp.dense_4h_to_h", Bias::kAlways},
      {Role::kFinalNorm, "gpt_neox.final_layer_norm", Bias::kAlways},
      {Role::kLmHead, "embed_out"},
  };
  r.block = Block::kParallel;
  r.norm = NormKind::kLayerNorm;
  r.eps = Key{"layer_norm_eps", 1e-5, {}};
  r.qkv = QkvLayout::kPerHead;
  r.reads_head_dim = false;
  r.attention_bias_key = "attention_bias";
  r.attention_bias_default = true;
  r.mlp = MlpKind::kPlain;
  r.act_default = "gelu";
  r.rope_theta = Key{"rotary_emb_base", 10000, {}};
  r.partial_rotary = Key{"rotary_pct", 0.25, {}};
  r.configure = gpt_neox_configure;
  return r;
}

// models/falcon/modeling_falcon.py: two generations in one model_type.
// The new decoder architecture (40B, 180B, Falcon 2) fuses Q, K and V by
// key/value group and has a LayerNorm for each parallel sublayer; the
// older one (7B, RW) shares one K/V head (multi_query) or fuses per head,
// and is parallel or sequential.
void falcon_configure(const detail::Config& c, ModelConfig& m) {
  const std::string l = "transformer.h.{L}.";
  const bool parallel = c.flag("parallel_attn", true);
  if (c.flag("new_decoder_architecture", false)) {
    m.qkv = QkvLayout::kGrouped;
    const int64_t norms = c.count("num_ln_in_parallel_attn", 2);
    m.block = Block::kParallel;
    if (norms == 2) {
      m.rename(Role::kAttnNorm, l + "ln_attn");
      m.rename(Role::kMlpNorm, l + "ln_mlp");
    } else {
      m.drop(Role::kMlpNorm);
    }
    return;
  }
  if (c.flag("multi_query", true)) {
    m.kv_heads = 1;
    m.qkv = QkvLayout::kSideBySide;
  } else {
    if (m.kv_heads != m.heads) {
      throw_input(c.place(), "num_kv_heads " + std::to_string(m.kv_heads) +
                                 " with new_decoder_architecture false and multi_query false: "
                                 "that Falcon fuses Q, K and V per head, one K/V head each");
    }
    m.qkv = QkvLayout::kPerHead;
  }
  if (parallel) {
    m.block = Block::kParallel;
    m.drop(Role::kMlpNorm);
  } else {
    m.block = Block::kSequential;
    m.rename(Role::kMlpNorm, l + "post_attention_layernorm");
  }
}
Row falcon() {
  Row r;
  r.model_type = "falcon";
  r.title = "Falcon";
  r.source = "models/falcon/modeling_falcon.py";
  r.causal_lm = "FalconForCausalLM";
  r.tensors = {
      {Role::kEmbed, "transformer.word_embeddings"},
      {Role::kAttnNorm, "transformer.h.{L}.input_layernorm", Bias::kAlways},
      {Role::kQkv, "transformer.h.{L}.self_attention.query_key_value", Bias::kAttention},
      {Role::kO, "transformer.h.{L}.self_attention.dense", Bias::kAttention},
      {Role::kMlpNorm, "transformer.h.{L}.ln_mlp", Bias::kAlways},
      {Role::kUp, "transformer.h.{L}.mlp.dense_h_to_4h", Bias::kMlp},
      {Role::kDown, "transformer.h.{L}.mlp.dense_4h_to_h", Bias::kMlp},
      {Role::kFinalNorm, "transformer.ln_f", Bias::kAlways},
      {Role::kLmHead, "lm_head"},
  };
  r.hidden = Key{"hidden_size", -1, {"n_embed"}};
  r.kv_heads = Key{"num_kv_heads", 0, {"n_head_kv"}};
  r.reads_head_dim = false;
  r.intermediate = Key{"ffn_hidden_size", 4, {}};
  r.eps = Key{"layer_norm_epsilon", 1e-5, {}};
  r.act = Key{"activation", 0, {}};
  r.act_default = "gelu";
  r.norm = NormKind::kLayerNorm;
  r.block = Block::kParallel;
  r.mlp = MlpKind::kPlain;
  r.attention_bias_key = "bias";
  r.mlp_bias_key = "bias";
  r.tied_default = true;
  r.refused = {{"alibi", "false",
                "ALiBi Falcons (RW-1B, 7B-RW) add the bias twice in transformers' eager "
                "attention, which returns the weights, and once otherwise; attn computes "
                "neither"}};
  r.configure = falcon_configure;
  return r;
}

// models/opt/modeling_opt.py: learned positions from row 2, ReLU,
// LayerNorms before (or, as OPT-350m, after) each sublayer.
void opt_configure(const detail::Config& c, ModelConfig& m) {
  if (!c.flag("do_layer_norm_before", true)) {
    m.block = Block::kPostNorm;
    m.drop(Role::kFinalNorm);
  } else if (c.flag("_remove_final_layer_norm", false)) {
    m.drop(Role::kFinalNorm);
  }
  if (c.has("word_embed_proj_dim") && c.count("word_embed_proj_dim") != m.hidden) {
    throw_input(c.place(), "\"word_embed_proj_dim\" " +
                               std::to_string(c.count("word_embed_proj_dim")) +
                               " differs from hidden_size " + std::to_string(m.hidden) +
                               ": OPT's project_in and project_out are not implemented");
  }
}
Row opt() {
  Row r;
  r.model_type = "opt";
  r.title = "OPT";
  r.source = "models/opt/modeling_opt.py";
  r.causal_lm = "OPTForCausalLM";
  r.tensors = {
      {Role::kEmbed, "model.decoder.embed_tokens"},
      {Role::kPosEmbed, "model.decoder.embed_positions"},
      {Role::kAttnNorm, "model.decoder.layers.{L}.self_attn_layer_norm", Bias::kAlways},
      {Role::kQ, "model.decoder.layers.{L}.self_attn.q_proj", Bias::kAttention},
      {Role::kK, "model.decoder.layers.{L}.self_attn.k_proj", Bias::kAttention},
      {Role::kV, "model.decoder.layers.{L}.self_attn.v_proj", Bias::kAttention},
      {Role::kO, "model.decoder.layers.{L}.self_attn.out_proj", Bias::kAttention},
      {Role::kMlpNorm, "model.decoder.layers.{L}.final_layer_norm", Bias::kAlways},
      {Role::kUp, "model.decoder.layers.{L}.fc1", Bias::kMlp},
      {Role::kDown, "model.decoder.layers.{L}.fc2", Bias::kMlp},
      {Role::kFinalNorm, "model.decoder.final_layer_norm", Bias::kAlways},
      {Role::kLmHead, "lm_head"},
  };
  r.hidden = Key{"hidden_size", -1, {"d_model"}};
  r.reads_head_dim = false;
  r.intermediate = Key{"ffn_dim", -1, {}};
  r.eps = Key{nullptr, 1e-5, {}};
  r.act = Key{"activation_function", 0, {}};
  r.act_default = "relu";
  r.norm = NormKind::kLayerNorm;
  r.mlp = MlpKind::kPlain;
  r.attention_bias_key = "enable_bias";
  r.attention_bias_default = true;
  r.mlp_bias_key = "enable_bias";
  r.mlp_bias_default = true;
  r.positions = Positions::kLearned;
  r.position_offset = 2;
  r.tied_default = true;
  r.refused = {{"layer_norm_elementwise_affine", "true",
                "LayerNorms without weights are not implemented for OPT"}};
  r.configure = opt_configure;
  return r;
}

// --- Mixtures of experts --------------------------------------------------

// models/qwen2_moe/modeling_qwen2_moe.py: q/k/v biases (qkv_bias), experts
// routed by softmax (renormalised when norm_topk_prob), a shared expert
// weighted by a sigmoid gate; layers dense by mlp_only_layers and
// decoder_sparse_step.
Row qwen2_moe() {
  Row r = qwen2();
  r.model_type = "qwen2_moe";
  r.title = "Qwen 2 MoE (Qwen1.5-MoE)";
  r.source = "models/qwen2_moe/modeling_qwen2_moe.py";
  r.causal_lm = "Qwen2MoeForCausalLM";
  for (Role role : {Role::kQ, Role::kK, Role::kV}) {
    for (TensorName& t : r.tensors) {
      if (t.role == role) t.bias = Bias::kAttention;
    }
  }
  r.attention_bias_key = "qkv_bias";
  r.attention_bias_default = true;
  r.output_bias_key = "";
  r.tensors.push_back({Role::kRouter, "model.layers.{L}.mlp.gate"});
  r.tensors.push_back({Role::kExpertGate, "model.layers.{L}.mlp.experts.{E}.gate_proj"});
  r.tensors.push_back({Role::kExpertUp, "model.layers.{L}.mlp.experts.{E}.up_proj"});
  r.tensors.push_back({Role::kExpertDown, "model.layers.{L}.mlp.experts.{E}.down_proj"});
  r.tensors.push_back({Role::kSharedGate, "model.layers.{L}.mlp.shared_expert.gate_proj"});
  r.tensors.push_back({Role::kSharedUp, "model.layers.{L}.mlp.shared_expert.up_proj"});
  r.tensors.push_back({Role::kSharedDown, "model.layers.{L}.mlp.shared_expert.down_proj"});
  r.tensors.push_back({Role::kSharedExpertGate, "model.layers.{L}.mlp.shared_expert_gate"});
  r.router = Router::kSoftmaxTopK;
  r.shared = Shared::kSigmoidGated;
  r.moe_layers = MoeLayers::kSparseStep;
  r.experts = Key{"num_experts", -1, {"num_local_experts"}};
  r.top_k = Key{"num_experts_per_tok", 4, {}};
  r.norm_topk_key = "norm_topk_prob";
  r.norm_topk_default = false;
  r.moe_intermediate = Key{"moe_intermediate_size", -1, {}};
  return r;
}

// models/qwen3_moe/modeling_qwen3_moe.py: Qwen 3's attention, no shared
// expert; a window on every layer when use_sliding_window.
Row qwen3_moe() {
  Row r = qwen3();
  r.model_type = "qwen3_moe";
  r.title = "Qwen 3 MoE";
  r.source = "models/qwen3_moe/modeling_qwen3_moe.py";
  r.causal_lm = "Qwen3MoeForCausalLM";
  r.tensors.push_back({Role::kRouter, "model.layers.{L}.mlp.gate"});
  r.tensors.push_back({Role::kExpertGate, "model.layers.{L}.mlp.experts.{E}.gate_proj"});
  r.tensors.push_back({Role::kExpertUp, "model.layers.{L}.mlp.experts.{E}.up_proj"});
  r.tensors.push_back({Role::kExpertDown, "model.layers.{L}.mlp.experts.{E}.down_proj"});
  r.router = Router::kSoftmaxTopK;
  r.moe_layers = MoeLayers::kSparseStep;
  r.experts = Key{"num_experts", -1, {"num_local_experts"}};
  r.top_k = Key{"num_experts_per_tok", 8, {}};
  r.norm_topk_key = "norm_topk_prob";
  r.norm_topk_default = false;
  r.moe_intermediate = Key{"moe_intermediate_size", -1, {}};
  r.sliding = Sliding::kWhenUsed;
  return r;
}

// models/gpt_oss/modeling_gpt_oss.py: biases on every projection, a sink
// per head, every other layer sliding, yarn, experts with a clamped
// SwiGLU chosen by a softmax over the top k router logits.
Row gpt_oss() {
  Row r = llama();
  r.model_type = "gpt_oss";
  r.title = "gpt-oss";
  r.source = "models/gpt_oss/modeling_gpt_oss.py";
  r.causal_lm = "GptOssForCausalLM";
  for (Role role : {Role::kGate, Role::kUp, Role::kDown}) remove(r, role);
  for (TensorName& t : r.tensors) {
    if (t.role == Role::kQ || t.role == Role::kK || t.role == Role::kV || t.role == Role::kO)
      t.bias = Bias::kAlways;
  }
  r.tensors.push_back({Role::kSinks, "model.layers.{L}.self_attn.sinks", Bias::kParam});
  r.tensors.push_back({Role::kRouter, "model.layers.{L}.mlp.router", Bias::kAlways});
  r.tensors.push_back(
      {Role::kExpertsGateUp, "model.layers.{L}.mlp.experts.gate_up_proj", Bias::kParam});
  r.tensors.push_back(
      {Role::kExpertsGateUpBias, "model.layers.{L}.mlp.experts.gate_up_proj_bias", Bias::kParam});
  r.tensors.push_back({Role::kExpertsDown, "model.layers.{L}.mlp.experts.down_proj", Bias::kParam});
  r.tensors.push_back(
      {Role::kExpertsDownBias, "model.layers.{L}.mlp.experts.down_proj_bias", Bias::kParam});
  r.attention_bias_key = nullptr;
  r.mlp_bias_key = nullptr;
  r.router = Router::kTopKSoftmax;
  r.clamped_experts = true;
  r.experts = Key{"num_local_experts", -1, {}};
  r.top_k = Key{"num_experts_per_tok", 4, {"experts_per_token"}};
  r.rope_theta.fallback = 150000;
  r.eps.fallback = 1e-5;
  r.sliding = Sliding::kEvenLayers;
  return r;
}

// models/deepseek_v3/modeling_deepseek_v3.py: multi-head latent attention
// and experts chosen by sigmoid scores within groups; the first layers dense.
void deepseek_configure(const detail::Config& c, ModelConfig& m) {
  m.rope_layout = c.flag("rope_interleave", true) ? RopeLayout::kInterleaved : RopeLayout::kHalf;
}
Row deepseek_v3() {
  Row r = llama();
  r.model_type = "deepseek_v3";
  r.title = "DeepSeek-V3 / R1";
  r.source = "models/deepseek_v3/modeling_deepseek_v3.py";
  r.causal_lm = "DeepseekV3ForCausalLM";
  for (Role role : {Role::kK, Role::kV}) remove(r, role);
  replace(r, Role::kQ, "model.layers.{L}.self_attn.q_proj");
  r.tensors.push_back({Role::kQa, "model.layers.{L}.self_attn.q_a_proj", Bias::kAttention});
  r.tensors.push_back({Role::kQaNorm, "model.layers.{L}.self_attn.q_a_layernorm"});
  r.tensors.push_back({Role::kQb, "model.layers.{L}.self_attn.q_b_proj"});
  r.tensors.push_back(
      {Role::kKva, "model.layers.{L}.self_attn.kv_a_proj_with_mqa", Bias::kAttention});
  r.tensors.push_back({Role::kKvaNorm, "model.layers.{L}.self_attn.kv_a_layernorm"});
  r.tensors.push_back({Role::kKvb, "model.layers.{L}.self_attn.kv_b_proj"});
  for (TensorName& t : r.tensors) {
    if (t.role == Role::kGate || t.role == Role::kUp || t.role == Role::kDown)
      t.bias = Bias::kNever;
  }
  r.tensors.push_back({Role::kRouter, "model.layers.{L}.mlp.gate"});
  r.tensors.push_back(
      {Role::kRouterScoreBias, "model.layers.{L}.mlp.gate.e_score_correction_bias", Bias::kParam});
  r.tensors.push_back({Role::kExpertGate, "model.layers.{L}.mlp.experts.{E}.gate_proj"});
  r.tensors.push_back({Role::kExpertUp, "model.layers.{L}.mlp.experts.{E}.up_proj"});
  r.tensors.push_back({Role::kExpertDown, "model.layers.{L}.mlp.experts.{E}.down_proj"});
  r.tensors.push_back({Role::kSharedGate, "model.layers.{L}.mlp.shared_experts.gate_proj"});
  r.tensors.push_back({Role::kSharedUp, "model.layers.{L}.mlp.shared_experts.up_proj"});
  r.tensors.push_back({Role::kSharedDown, "model.layers.{L}.mlp.shared_experts.down_proj"});
  r.qkv = QkvLayout::kLatent;
  r.mlp_bias_key = nullptr;
  r.router = Router::kSigmoidGrouped;
  r.shared = Shared::kPlain;
  r.moe_layers = MoeLayers::kFirstDense;
  r.experts = Key{"n_routed_experts", 256, {"num_local_experts"}};
  r.top_k = Key{"num_experts_per_tok", 8, {}};
  r.norm_topk_key = "norm_topk_prob";
  r.norm_topk_default = true;
  r.moe_intermediate = Key{"moe_intermediate_size", 2048, {}};
  r.scale = ScaleRule::kLatent;
  r.configure = deepseek_configure;
  return r;
}

// --- GPT-2 and BERT -------------------------------------------------------

// models/gpt2/modeling_gpt2.py: Conv1D weights ([in][out]), Q, K and V side
// by side in c_attn, learned positions, a plain MLP of n_inner (4 × n_embd).
Row gpt2() {
  Row r;
  r.model_type = "gpt2";
  r.title = "GPT-2";
  r.source = "models/gpt2/modeling_gpt2.py";
  r.causal_lm = "GPT2LMHeadModel";
  r.tensors = {
      {Role::kEmbed, "transformer.wte"},
      {Role::kPosEmbed, "transformer.wpe"},
      {Role::kAttnNorm, "transformer.h.{L}.ln_1", Bias::kAlways},
      {Role::kQkv, "transformer.h.{L}.attn.c_attn", Bias::kAlways},
      {Role::kO, "transformer.h.{L}.attn.c_proj", Bias::kAlways},
      {Role::kMlpNorm, "transformer.h.{L}.ln_2", Bias::kAlways},
      {Role::kUp, "transformer.h.{L}.mlp.c_fc", Bias::kAlways},
      {Role::kDown, "transformer.h.{L}.mlp.c_proj", Bias::kAlways},
      {Role::kFinalNorm, "transformer.ln_f", Bias::kAlways},
      {Role::kLmHead, "lm_head"},
  };
  r.layers = Key{"n_layer", -1, {"num_hidden_layers"}};
  r.hidden = Key{"n_embd", -1, {"hidden_size"}};
  r.heads = Key{"n_head", -1, {"num_attention_heads"}};
  r.reads_head_dim = false;
  r.intermediate = Key{"n_inner", 4, {}};
  r.eps = Key{"layer_norm_epsilon", 1e-5, {}};
  r.act = Key{"activation_function", 0, {}};
  r.act_default = "gelu_new";
  r.norm = NormKind::kLayerNorm;
  r.qkv = QkvLayout::kConv1D;
  r.conv1d = true;
  r.mlp = MlpKind::kPlain;
  r.positions = Positions::kLearned;
  r.scale = ScaleRule::kGpt2;
  r.tied_default = true;
  return r;
}

// models/bert/modeling_bert.py (BertModel): LayerNorm after each residual,
// learned positions and token types, no causal mask. RoBERTa counts
// positions from padding_idx + 1.
void bert_configure(const detail::Config& c, ModelConfig& m) {
  m.causal = c.flag("is_decoder", false);
  const std::string pe = c.text("position_embedding_type");
  if (!pe.empty() && pe != "absolute") {
    throw_input(c.place(), "position_embedding_type \"" + message_text(pe) +
                               "\" adds learned relative scores attn does not compute; "
                               "only \"absolute\" is supported");
  }
}
void roberta_configure(const detail::Config& c, ModelConfig& m) {
  bert_configure(c, m);
  const double pad = c.number("pad_token_id", 1);
  if (!(pad >= 0 && pad < 1e9 && pad == std::floor(pad))) {
    throw_input(c.place(), "\"pad_token_id\" must be a non-negative integer");
  }
  m.position_offset = static_cast<int64_t>(pad) + 1;
}
Row bert(const char* type, const std::string& prefix) {
  Row r;
  r.model_type = type;
  auto name = [&](const char* s) { return prefix + s; };
  r.tensors = {
      {Role::kEmbed, name(".embeddings.word_embeddings")},
      {Role::kPosEmbed, name(".embeddings.position_embeddings")},
      {Role::kTypeEmbed, name(".embeddings.token_type_embeddings")},
      {Role::kEmbedNorm, name(".embeddings.LayerNorm"), Bias::kAlways},
      {Role::kQ, name(".encoder.layer.{L}.attention.self.query"), Bias::kAlways},
      {Role::kK, name(".encoder.layer.{L}.attention.self.key"), Bias::kAlways},
      {Role::kV, name(".encoder.layer.{L}.attention.self.value"), Bias::kAlways},
      {Role::kO, name(".encoder.layer.{L}.attention.output.dense"), Bias::kAlways},
      {Role::kAttnNorm, name(".encoder.layer.{L}.attention.output.LayerNorm"), Bias::kAlways},
      {Role::kUp, name(".encoder.layer.{L}.intermediate.dense"), Bias::kAlways},
      {Role::kDown, name(".encoder.layer.{L}.output.dense"), Bias::kAlways},
      {Role::kMlpNorm, name(".encoder.layer.{L}.output.LayerNorm"), Bias::kAlways},
  };
  r.block = Block::kPostNorm;
  r.norm = NormKind::kLayerNorm;
  r.eps = Key{"layer_norm_eps", 1e-12, {}};
  r.reads_head_dim = false;
  r.mlp = MlpKind::kPlain;
  r.act_default = "gelu";
  r.positions = Positions::kLearned;
  r.causal = false;
  return r;
}
Row bert_row() {
  Row r = bert("bert", "bert");
  r.title = "BERT";
  r.source = "models/bert/modeling_bert.py";
  r.causal_lm = "BertModel";
  r.configure = bert_configure;
  return r;
}
Row roberta_row() {
  Row r = bert("roberta", "roberta");
  r.title = "RoBERTa";
  r.source = "models/roberta/modeling_roberta.py";
  r.causal_lm = "RobertaModel";
  r.configure = roberta_configure;
  return r;
}

}  // namespace

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      llama(), mistral(), mixtral(),     qwen2(),      qwen3(),    qwen2_moe(),   qwen3_moe(),
      gemma(), gemma2(),  gemma3(),      granite(),    smollm3(),  olmo(),        olmo2(),
      phi3(),  phi(),     stablelm(),    starcoder2(), cohere(),   gpt_neox(),    falcon(),
      opt(),   gpt_oss(), deepseek_v3(), gpt2(),       bert_row(), roberta_row(),
  };
  return table;
}

const Row* find_row(const std::string& model_type) {
  for (const Row& r : rows()) {
    if (model_type == r.model_type) return &r;
  }
  return nullptr;
}

std::string row_names() {
  std::string s;
  for (const Row& r : rows()) s += (s.empty() ? "" : ", ") + std::string(r.model_type);
  return s;
}

}  // namespace attn::model
