// The architecture table: one row per config.json `model_type` that attn
// reads, as llama.cpp keeps one row per architecture and its tensor names.
// A row says which tensors a layer has and what they are called (module
// paths with {L} for the layer, {E} for an expert, {H} for a head), where
// the norms sit and of what kind, how Q, K and V come out of the
// projections, the MLP's kind, the rotary embedding, the scale, the
// sliding-window pattern, the multipliers and which projections carry
// biases, and the config.json keys each of those is read from with their
// defaults. model_config.cc reads a config through a row once per model;
// the forward pass (forward.cc, blocks.cc) computes from what it read and
// never names a family. Adding a family is a row here (architecture.cc);
// a new kind of layer is a value of one of these enumerations and the
// block function that computes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn::detail {
class Config;  // model/config_json.h
}

namespace attn::model {

// A model's tensors, by what they are.
enum class Role : uint8_t {
  kEmbed,      // token embedding table [vocab][hidden]
  kPosEmbed,   // learned positions [positions][hidden]
  kTypeEmbed,  // token types (BERT) [types][hidden]
  kEmbedNorm,  // the norm of the summed embeddings (BERT)
  kAttnNorm,   // the norm before attention (before both sublayers in a parallel block)
  kQ,
  kK,
  kV,
  kQkv,  // Q, K and V in one matrix (QkvLayout says how)
  kO,
  kQNorm,  // the Q/K norms (QkNorm says over what)
  kKNorm,
  kSinks,  // one sink logit per head (gpt-oss)
  // Multi-head latent attention (DeepSeek): Q through a low-rank bottleneck,
  // K and V from one compressed latent plus a rotary key shared by the heads.
  kQa,
  kQaNorm,
  kQb,
  kKva,
  kKvaNorm,
  kKvb,
  kKb,            // kKvb split per head as GGUF stores it: K's part [heads][kv_lora][nope]
  kVb,            // and V's [heads][v][kv_lora]
  kAttnPostNorm,  // the norm of the attention's output before the residual (Gemma 2, OLMo 2)
  kMlpNorm,       // the norm before the MLP
  kMlpPostNorm,   // the norm of the MLP's output before the residual
  kGate,          // a gated MLP's gate; absent: the MLP is up, act, down
  kUp,            // (a plain MLP's first matrix)
  kGateUp,        // gate and up in one matrix, gate first (Phi-3)
  kDown,
  // Mixture of experts.
  kRouter,           // [experts][hidden]
  kRouterScoreBias,  // DeepSeek's e_score_correction_bias, for the choice only
  kExpertGate,       // one expert's matrices ({E})
  kExpertUp,
  kExpertDown,
  kExpertsGateUp,  // every expert's gate and up in one tensor [experts][hidden][2·I] (gpt-oss)
  kExpertsGateUpBias,
  kExpertsDown,  // [experts][I][hidden]
  kExpertsDownBias,
  kSharedGate,  // the shared expert
  kSharedUp,
  kSharedDown,
  kSharedExpertGate,  // its sigmoid gate [1][hidden] (Qwen 2 MoE)
  kFinalNorm,
  kLmHead,
  kCount
};

// What a role's tensor is called in messages ("q_proj" is the row's name;
// this is the role's: "the query projection").
const char* role_title(Role r);

// The kinds of norm.
enum class NormKind : uint8_t {
  kNone,
  kRms,                // w · x / √(mean(x²) + ε)
  kRmsUnit,            // (1 + w) · x / √(mean(x²) + ε) (Gemma)
  kLayerNorm,          // (x − mean) / √(var + ε) · w + b
  kLayerNormNoBias,    // (x − mean) / √(var + ε) · w (Cohere, StableLM's head norms)
  kLayerNormNoParams,  // (x − mean) / √(var + ε) (OLMo)
};

// How a layer's sublayers and norms are arranged. The norm roles a row
// has (kAttnNorm, kAttnPostNorm, kMlpNorm, kMlpPostNorm) say which norms
// there are.
enum class Block : uint8_t {
  kSequential,  // h += post(attn(pre(h))); h += post(mlp(pre(h))), each norm where present
  kPostNorm,    // h = attn_norm(h + attn(h)); h = mlp_norm(h + mlp(h)) (BERT, OPT-350m)
  kParallel,    // h += attn(attn_norm(h)) + mlp(mlp_norm(h)), mlp_norm = attn_norm when absent
};

// How Q, K and V come out of the projections.
enum class QkvLayout : uint8_t {
  kSeparate,    // kQ, kK, kV
  kSideBySide,  // kQkv's outputs are [Q | K | V] (Phi-3, Falcon multi-query)
  kPerHead,     // kQkv's outputs are [heads][q, k, v][head_dim] (GPT-NeoX)
  kGrouped,     // kQkv's outputs are [kv groups][q… (heads/kv), k, v][head_dim] (Falcon 40B+)
  kConv1D,      // GPT-2's c_attn, [hidden][Q | K | V] (math layout)
  kLatent,      // DeepSeek's multi-head latent attention
};

// Q/K norms: where they apply.
enum class QkNorm : uint8_t {
  kNone,
  kPerHead,     // one weight [head_dim] shared by the heads (Qwen 3, Gemma 3, Phi)
  kPerHeadOwn,  // a weight per head, [heads][head_dim] (Cohere; StableLM as {H} tensors)
  kWholeWidth,  // over every head's features at once, [heads·head_dim] (OLMo 2)
};

enum class Activation : uint8_t { kSilu, kGelu, kGeluTanh, kRelu, kClampedSwiglu };

enum class MlpKind : uint8_t {
  kGated,  // down(act(gate x) ⊙ up x), or kGateUp fused
  kPlain,  // down(act(up x))
};

enum class Router : uint8_t {
  kNone,
  kSoftmaxTopK,     // softmax over every expert, the top k (renormalised when norm_topk_prob)
  kTopKSoftmax,     // the top k logits, softmax over them (gpt-oss)
  kSigmoidGrouped,  // DeepSeek: sigmoid scores, a bias for the choice, groups, a scaling factor
};

enum class Shared : uint8_t {
  kNone,
  kPlain,  // every token through a shared gated MLP of moe_intermediate_size · n_shared_experts
  kSigmoidGated,  // Qwen 2 MoE: shared_expert, weighted by sigmoid(shared_expert_gate · x)
};

// Which layers are mixtures of experts.
enum class MoeLayers : uint8_t {
  kAll,
  kSparseStep,  // Qwen MoE: not in mlp_only_layers and (layer + 1) % decoder_sparse_step == 0
  kFirstDense,  // DeepSeek: layer ≥ first_k_dense_replace
};

// Which layers attend in a sliding window (a window of W keys, the
// query's own included). `layer_types` in the config, where a row reads
// it, decides before these rules.
enum class Sliding : uint8_t {
  kNever,
  kWhenSet,        // every layer once sliding_window is set (Mistral, Starcoder2, Phi-3)
  kEvenLayers,     // layers 0, 2, 4, ... (Gemma 2, gpt-oss's default)
  kGemma3Pattern,  // unless (layer + 1) % sliding_window_pattern == 0
  kQwen2,          // use_sliding_window and layer ≥ max_window_layers
  kWhenUsed,       // every layer when use_sliding_window (Qwen 3 MoE)
  kSmolLM3,        // use_sliding_window and a layer without RoPE
};

// The score scale.
enum class ScaleRule : uint8_t {
  kInvSqrtHeadDim,       // 1/√head_dim (or √ of the query-key head width)
  kQueryPreAttnScalar,   // 1/√query_pre_attn_scalar (Gemma 2, 3), when set
  kAttentionMultiplier,  // attention_multiplier (Granite)
  kGpt2,                 // scale_attn_weights, scale_attn_by_inverse_layer_idx
  kLatent,               // 1/√(nope + rope width) · mscale² under yarn (DeepSeek)
};

// How the token embeddings are scaled and what joins them.
enum class EmbedScale : uint8_t { kNone, kSqrtHidden, kMultiplier };
enum class Positions : uint8_t { kRotary, kLearned, kNone };

// How the logits are scaled after the head.
enum class LogitScale : uint8_t { kNone, kDivideByScaling, kMultiplyByScale, kSoftcap };

// A tensor of the row: its role and module path. Bias says where its
// ".bias" comes from.
enum class Bias : uint8_t {
  kNever,
  kAlways,
  kAttention,  // the row's attention-bias key (q, k, v)
  kOutput,     // the row's output-bias key (o)
  kMlp,        // the row's MLP-bias key
  kParam,      // not a module: the name is the tensor's (".weight" is not added)
};
struct TensorName {
  Role role;
  std::string path;  // "model.layers.{L}.self_attn.q_proj"; "": a norm without parameters
  Bias bias = Bias::kNever;
};

// A config.json key with its default (NaN: required), and older spellings
// read when it is absent.
struct Key {
  const char* name = nullptr;
  double fallback = 0;
  std::vector<const char*> aliases;
};

struct ModelConfig;  // model_config.h

// One architecture.
struct Row {
  const char* model_type = "";
  const char* title = "";      // "Llama"
  const char* source = "";     // transformers' modeling file, for the docs
  const char* causal_lm = "";  // the *ForCausalLM class (or the model's class)
  std::vector<TensorName> tensors;

  // Hyperparameters (config.json names).
  Key layers{"num_hidden_layers", -1, {"n_layer"}};
  Key hidden{"hidden_size", -1, {"n_embd", "d_model"}};
  Key heads{"num_attention_heads", -1, {"n_head"}};
  Key kv_heads{"num_key_value_heads", 0, {}};     // 0: as many as heads
  bool reads_head_dim = true;                     // a head_dim key wins over hidden / heads
  Key intermediate{"intermediate_size", -1, {}};  // -1: required; 0 < x < 1: a multiple of hidden
  Key eps{"rms_norm_eps", 1e-6, {}};
  Key act{"hidden_act", 0, {}};
  const char* act_default = "silu";
  Key vocab{"vocab_size", 0, {}};

  Block block = Block::kSequential;
  NormKind norm = NormKind::kRms;
  QkvLayout qkv = QkvLayout::kSeparate;
  bool conv1d = false;  // weights stored [in][out] (GPT-2's Conv1D)
  QkNorm qk_norm = QkNorm::kNone;
  NormKind qk_norm_kind = NormKind::kRms;
  bool qk_norm_uses_eps = true;    // else the norm's own ε (Phi's LayerNorm: the row's ε too)
  const char* clip_key = nullptr;  // OLMo's clip_qkv

  // Biases: which config key turns them on, and its default.
  const char* attention_bias_key = nullptr;
  bool attention_bias_default = false;
  const char* output_bias_key = nullptr;  // nullptr: the attention key decides o too
  bool output_bias_default = false;
  const char* mlp_bias_key = nullptr;
  bool mlp_bias_default = false;

  MlpKind mlp = MlpKind::kGated;
  Router router = Router::kNone;
  bool clamped_experts = false;  // gpt-oss's clamped SwiGLU experts, with biases
  Shared shared = Shared::kNone;
  MoeLayers moe_layers = MoeLayers::kAll;
  Key experts{"num_local_experts", 0, {"num_experts", "n_routed_experts"}};
  Key top_k{"num_experts_per_tok", 2, {}};
  const char* norm_topk_key = nullptr;  // nullptr: always renormalised (Mixtral)
  bool norm_topk_default = true;
  Key moe_intermediate{"moe_intermediate_size", 0, {}};  // 0: intermediate_size

  Positions positions = Positions::kRotary;
  int64_t position_offset = 0;  // learned positions: row of position 0 (OPT: 2)
  bool rope_interleaved = false;
  Key rope_theta{"rope_theta", 10000, {}};
  Key partial_rotary{"partial_rotary_factor", 1, {}};
  const char* no_rope_key = nullptr;  // SmolLM3's no_rope_layers (1: the layer rotates)
  Sliding sliding = Sliding::kNever;
  bool reads_layer_types = true;  // layer_types, where given, decides which layers slide
  ScaleRule scale = ScaleRule::kInvSqrtHeadDim;
  const char* softcap_key = nullptr;  // attn_logit_softcapping
  bool causal = true;

  EmbedScale embed_scale = EmbedScale::kNone;
  const char* residual_multiplier_key = nullptr;  // Granite
  LogitScale logit_scale = LogitScale::kNone;
  const char* logit_key = nullptr;  // logits_scaling, logit_scale, final_logit_softcapping
  double logit_default = 1;
  bool tied_default = false;  // tie_word_embeddings when absent

  // Keys that change the computation in a way attn does not compute: a
  // config that sets one (to other than its harmless value) is refused
  // by name.
  struct Refused {
    const char* key;
    const char* harmless;  // its value's JSON text when harmless ("false", "null", "0")
    const char* why;
  };
  std::vector<Refused> refused;

  // The config-dependent layout switches of a few families (GPT-NeoX's
  // parallel residual, OPT's norm placement, Falcon's two generations):
  // called after the keys above are read.
  void (*configure)(const detail::Config& config, ModelConfig& out) = nullptr;
};

// Every row, in documentation order.
const std::vector<Row>& rows();

// The row of a model_type, or nullptr.
const Row* find_row(const std::string& model_type);

// "llama, mistral, ...": the model_types, for messages.
std::string row_names();

}  // namespace attn::model
