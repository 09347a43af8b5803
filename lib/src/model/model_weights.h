// A model's tensors as its configuration expects them: every tensor of
// every layer found by its row's name and checked against the config —
// its shape, its bias, a floating cell type — before anything is
// computed, and tensors under a layer's name that no role claims refused.
// Then each one's cells where they lie in the mapped file, or as doubles.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "attn/binary_array.h"
#include "attn/problem.h"
#include "model/model_config.h"
#include "model/tensor_source.h"

namespace attn::model {

// Which tensor: a role in a layer (-1 for the model's own), for an expert
// or a head where the name has {E} or {H}.
struct At {
  Role role;
  int64_t layer = -1;
  int64_t expert = -1;
  int64_t head = -1;
};

class Weights {
 public:
  // Finds and checks every tensor `config` says the model holds; throws an
  // input error naming the tensor (and what expected it) otherwise.
  // `name` is how the checkpoint is named in messages. A configuration
  // read for one layer's attention (attention_only) checks that layer's
  // attention tensors only: `layer` is the one.
  Weights(const detail::TensorSource& tensors, const ModelConfig& config, std::string name,
          int64_t layer = -1);

  // The tensor's full name in the file ("model.layers.3.self_attn.q_proj.weight").
  const std::string& weight_name(const At& at) const;
  // Its bias's name, or nullopt when it has none.
  std::optional<std::string> bias_name(const At& at) const;
  // Whether the model holds it (a norm without parameters holds none).
  bool has(const At& at) const;

  // The cells where they lie in the mapped file.
  BinaryArray view(const std::string& name) const;
  // A tensor as doubles (norm weights, biases, sinks, small vectors).
  Tensor<double> read(const std::string& name) const;
  Eigen::RowVectorXd vector(const std::string& name) const;
  // "model.safetensors:model.norm.weight", for messages.
  std::string place(const std::string& name) const { return tensors_.place(name); }
  const detail::TensorSource& tensors() const { return tensors_; }

 private:
  std::string resolve(const TensorSpec& spec, const At& at, const char* suffix) const;
  void check(const TensorSpec& spec, const At& at);
  void check_claimed();
  void stray_bias(const std::string& name, const std::string& prefix) const;

  const detail::TensorSource& tensors_;
  const ModelConfig& config_;
  std::string name_;
  // Resolved names by (role, layer, expert, head).
  struct Entry {
    At at;
    std::string weight;
    std::optional<std::string> bias;
  };
  using Key = std::tuple<int, int64_t, int64_t, int64_t>;
  static Key key(const At& a) { return {static_cast<int>(a.role), a.layer, a.expert, a.head}; }
  const Entry& entry(const At& at) const;
  std::map<Key, Entry> entries_;
};

// The shape a role's weight has in this model ([out][in] as torch stores
// it; GPT-2's Conv1D [in][out]), and its bias's.
Shape expected_weight(const ModelConfig& c, Role r, int64_t layer);
Shape expected_bias(const ModelConfig& c, Role r, int64_t layer);

}  // namespace attn::model
