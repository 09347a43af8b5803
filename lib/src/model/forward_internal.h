// The forward pass's steps on an open model, for the public functions of
// attn/checkpoint.h (forward.cc) and the layer reader (checkpoint.cc).
#pragma once

#include <string>
#include <vector>

#include "attn/checkpoint.h"
#include "model/attention_block.h"
#include "model/model.h"

namespace attn::model {

class Forward {
 public:
  // Opens the request's checkpoint and checks every tensor.
  explicit Forward(const ForwardRequest& req);

  const Model& model() const { return model_; }
  // transformers' hidden_states[0]: the embeddings entering layer 0.
  Matrix embeddings() const;
  // What enters layer n's attention: its input norm of h, or h itself
  // (a model that norms after the residual).
  Matrix attention_in(int64_t n, const Matrix& h) const;
  // Layer n on h: the hidden states after it; its attention hands out
  // what `taps` asks for (each sequence's weights, its values).
  Matrix layer_step(int64_t n, const Matrix& h, const AttentionTaps& taps) const;
  // transformers' last hidden state: after the final norm, where the model
  // has one.
  Matrix final_norm(const Matrix& h) const;
  // The head's logits of the final hidden states, scaled or capped as the
  // model does. A usage error for a model without an unembedding.
  Matrix logits(const Matrix& last) const;
  // Whether the model maps hidden states to the vocabulary: an lm_head, or
  // the embedding tied to it (BERT and RoBERTa, read without their MLM
  // heads, have neither).
  bool has_unembedding() const;
  // A usage error when it has none, naming the model.
  void require_unembedding() const;
  // The sentences' lengths (one sentence: all of the ids).
  std::vector<int64_t> sentence_lengths() const;
  // How the embeddings and layer n's input norm are computed, in words.
  void describe(int64_t n, LayerInput& out) const;
  void check_layer(int64_t layer) const;

 private:
  // Rows of an embedding table: only those rows are read (a vocabulary's
  // table stays in the mapped file).
  Matrix rows_of(Role role, const std::vector<int64_t>& rows, bool ids) const;

  const ForwardRequest& req_;
  Model model_;
};

Tensor<double> to_tensor(const Matrix& m);

}  // namespace attn::model
