// A layer's attention: Q, K and V out of its projections (separate, fused
// in one of the table's layouts, or through DeepSeek's latent), clipped and
// normed as the architecture says; then the engine's attention of those
// heads (RoPE, scale, soft-cap, masks, sinks, softmax) from a Problem built
// directly, and the output projection.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "attn/checkpoint.h"
#include "attn/problem.h"
#include "attn/tensor.h"
#include "model/model.h"

namespace attn::model {

// The heads of one layer, side by side: q [tokens][heads · head_dim],
// k [tokens][kv_heads · head_dim], v [tokens][kv_heads · v_head_dim], in
// the order the engine rotates them (latent attention: each head's rotary
// features first).
struct Heads {
  Matrix q, k, v;
};

// Where each head of a fused Q/K/V matrix starts among its outputs.
struct FusedColumns {
  std::vector<int64_t> q, k, v;
};
FusedColumns fused_columns(const ModelConfig& c);

// Q, K and V of layer n from x (what enters the attention).
Heads project_heads(const Model& m, int64_t n, const Matrix& x);

// The engine's problem for layer n's heads (moved into it): the layer's
// RoPE, scale, soft-cap, window, sinks and causal mask.
Problem layer_problem(const Model& m, int64_t n, Heads&& heads);

// What a layer's attention hands out beside its output, each optional.
struct AttentionTaps {
  // The sequences x holds, one after another, by their lengths (null or
  // empty: one, all of x): each attends within itself only.
  const std::vector<int64_t>* lengths = nullptr;
  // Each sequence's weights [1][heads][len][len], in order.
  std::function<void(int64_t sequence, Tensor<double>&& weights)> weights;
  // Each sequence's values and the output projection's head blocks, before
  // its weights.
  std::function<void(int64_t sequence, LayerValues&& values)> values;
};

// Layer n's attention of x through its output projection.
Matrix attention(const Model& m, int64_t n, const Matrix& x, const AttentionTaps& taps);

}  // namespace attn::model
