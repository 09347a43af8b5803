// A layer's MLP: gated (SwiGLU, GeGLU, fused gate/up), plain (up, act,
// down), or a mixture of experts with its router (softmax then top k, top
// k then softmax, DeepSeek's grouped sigmoid), its experts (one module
// each, or gpt-oss's fused tensors with the clamped SwiGLU) and its
// shared expert.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"

namespace attn::model {

// Layer n's MLP of x (what enters it).
Matrix mlp(const Model& m, int64_t n, const Matrix& x);

// The experts each token goes to and their weights: route[t] lists
// (expert, weight) in the order the experts are added (ascending expert).
struct Route {
  int64_t expert;
  double weight;
};
std::vector<std::vector<Route>> route(const ModelConfig& c, const Matrix& logits,
                                      const Vec* score_bias);

}  // namespace attn::model
