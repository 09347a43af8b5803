// A model's configuration as its architecture's row reads config.json,
// once per model: the sizes, every structural choice resolved (which
// norms, which biases, which layers slide, rotate or route to experts),
// and the tensors the model must hold. The forward pass and the layer
// reader compute from this alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attn/options.h"
#include "attn/rope_scaling.h"
#include "model/architecture.h"

namespace attn::detail {
class Config;
}

namespace attn::model {

// One tensor the model holds: its role, its name with {L}, {E}, {H} still
// in it, whether it has a bias, and whether the name is a parameter's
// (no ".weight").
struct TensorSpec {
  Role role;
  std::string path;
  bool bias = false;
  bool param = false;
};

// What differs from layer to layer.
struct LayerPlan {
  bool sliding = false;  // attends in a window of `window` keys
  bool rope = true;      // rotates Q and K (false: a NoPE layer)
  double rope_theta = 10000;
  std::optional<RopeScaling> scaling;
  bool moe = false;  // its MLP is a mixture of experts
  double scale = 1;  // the score scale
};

struct ModelConfig {
  const Row* row = nullptr;
  std::string model_type;
  std::string place;   // config.json's path (or --arch), for messages
  std::string fields;  // the config fields read, for descriptions

  int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0;
  int64_t head_dim = 0;    // of queries and keys
  int64_t v_head_dim = 0;  // of values (MLA: its own)
  int64_t intermediate = 0;
  int64_t vocab = 0;  // 0: not in the config
  double eps = 1e-6;
  Activation act = Activation::kSilu;
  std::string act_name;

  Block block = Block::kSequential;
  NormKind norm = NormKind::kRms;
  QkvLayout qkv = QkvLayout::kSeparate;
  bool conv1d = false;  // weights stored [in][out] (GPT-2's Conv1D)
  QkNorm qk_norm = QkNorm::kNone;
  NormKind qk_norm_kind = NormKind::kRms;
  double qk_eps = 1e-6;
  double clip = 0;  // clip_qkv; 0: none

  // Multi-head latent attention: head_dim = nope_dim + rope_dim.
  int64_t q_lora_rank = 0;  // 0: a plain q_proj
  int64_t kv_lora_rank = 0, nope_dim = 0, rope_dim = 0;

  MlpKind mlp = MlpKind::kGated;
  Router router = Router::kNone;
  bool clamped_experts = false;
  Shared shared = Shared::kNone;
  int64_t experts = 0, top_k = 0, moe_intermediate = 0, shared_intermediate = 0;
  bool norm_topk = true;
  double routed_scaling = 1;
  int64_t groups = 1, top_groups = 1;

  Positions positions = Positions::kRotary;
  int64_t position_offset = 0;
  int64_t rope_dims = 0;  // rotated features at the start of each head
  RopeLayout rope_layout = RopeLayout::kHalf;
  int64_t window = 0;  // sliding layers' window (keys, the query's own included)
  double softcap = 0;
  bool causal = true;

  double embed_multiplier = 1;  // the token embeddings times this
  double residual_multiplier = 1;
  LogitScale logit_scale = LogitScale::kNone;
  double logit_value = 1;
  bool tied = false;

  std::vector<TensorSpec> tensors;  // what the model holds
  std::vector<LayerPlan> plan;      // one per layer
  bool attention_only = false;      // read for one layer's attention (read_model_config)

  bool has(Role r) const;
  const TensorSpec& tensor(Role r) const;  // one the model has
  void drop(Role r);
  void rename(Role r, std::string path);
};

// The configuration of `model_type` from config.json (`config`), as its
// row reads it. An input error names the key (and the value) of anything
// attn cannot compute: a field out of range, a value of a refused key.
// With `attention_only`, what only the MLPs need (their widths, the
// experts) is not required: a run of one layer's attention on given
// hidden states reads that layer's attention and nothing else.
ModelConfig read_model_config(const Row& row, const detail::Config& config,
                              bool attention_only = false);

// Whether a role belongs to a layer's attention (its projections, norms
// of Q and K, sinks).
bool attention_role(Role r);

// "{L}" → the layer, "{E}" → the expert, "{H}" → the head.
std::string expand(const std::string& path, int64_t layer, int64_t expert = -1, int64_t head = -1);

// The activation transformers' ACT2FN names; nullopt for another.
std::optional<Activation> activation_named(const std::string& name);

}  // namespace attn::model
