// An open model: its checkpoint's tensors, its configuration as its row
// read it, its weights found and checked, and the precision and threads
// of the run. The block functions (attention_block.cc, mlp_block.cc)
// compute a layer's pieces from it; forward.cc runs the layers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attn/options.h"
#include "model/config_json.h"
#include "model/layer_math.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/tensor_source.h"

namespace attn::model {

class Model {
 public:
  // Opens `checkpoint` — a directory or a .safetensors file with its
  // config.json (or `arch` naming its model_type when it has none), or a
  // GGUF file — reads its configuration through its architecture's row and
  // checks every tensor against it; with `attention_of` >= 0, only what
  // that layer's attention needs (read_model_config's attention_only).
  Model(const std::string& checkpoint, const std::string& arch, int64_t max_bytes,
        int64_t max_elements, DType dtype, int threads, int64_t attention_of = -1);
  // The weights hold references into the model: it stays where it was made.
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const { return config_; }
  const Weights& weights() const { return weights_; }
  const std::string& name() const { return name_; }  // the checkpoint, for messages
  DType dtype() const { return dtype_; }
  int threads() const { return threads_; }

  // x times the role's weight (nn.Linear's x·Wᵀ, or Conv1D's x·W), plus
  // its bias where it has one, in the run's precision.
  Matrix linear(const Matrix& x, const At& at) const;
  // Several products of the same x in one pass of the threads (float32).
  std::vector<Matrix> linears(const Matrix& x, const std::vector<At>& ats) const;
  // The role's norm of each row of x (the model's norm kind), or x itself
  // when the model has no such norm.
  Matrix norm(Role role, int64_t layer, const Matrix& x) const;
  bool has(Role role) const { return config_.has(role); }
  Vec vector(const At& at) const { return weights_.vector(weights_.weight_name(at)); }

 private:
  struct Parts {
    ModelConfig config;
    std::unique_ptr<detail::TensorSource> tensors;
  };
  Model(const std::string& checkpoint, Parts parts, DType dtype, int threads, int64_t attention_of);
  static Parts open(const std::string& checkpoint, const std::string& arch, int64_t max_bytes,
                    int64_t max_elements, bool attention_only);

  std::string name_;
  ModelConfig config_;
  std::unique_ptr<detail::TensorSource> tensors_;
  Weights weights_;
  DType dtype_;
  int threads_;
};

}  // namespace attn::model
