// A layer's attention: Q, K and V out of its projections (separate, fused
// in one of the table's layouts, or through DeepSeek's latent), clipped and
// normed as the architecture says; then the engine's attention of those
// heads (RoPE, scale, soft-cap, masks, sinks, softmax) from a Problem built
// directly, and the output projection.
#pragma once

#include <cstdint>
#include <vector>

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

// Layer n's attention of x through its output projection, and its weights
// [1][heads][q][k] in *weights when asked.
Matrix attention(const Model& m, int64_t n, const Matrix& x, Tensor<double>* weights);

}  // namespace attn::model
