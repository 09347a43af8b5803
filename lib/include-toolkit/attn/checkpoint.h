// One attention layer of a Hugging Face checkpoint: its projection weights
// and biases as `params`, and the settings of its architecture (heads,
// grouped K/V heads, RoPE, sliding window, soft-capping, causal mask,
// scale) from its config.json, so `attn run --checkpoint DIR --layer N`
// computes that layer's attention on the hidden states given as X.
//
// A checkpoint is a directory (config.json beside model.safetensors, or
// beside model.safetensors.index.json and its shards) or one .safetensors
// file (config.json, when present, is read from its directory), a .gguf
// file, or a model on this machine by name: "ollama:NAME[:TAG]" (Ollama's
// store) or "hf:ORG/NAME[@REVISION]" (the Hugging Face cache), found as
// docs/models.md says. Only the layer's tensors are read: the files are
// memory-mapped.
//
// Architectures (config.json "model_type"): the rows of attn's
// architecture table, which architecture_names() lists and
// architectures() describes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/document.h"
#include "attn/file_io.h"
#include "attn/options.h"

namespace attn {

struct LayerRequest {
  std::string checkpoint;  // a directory, a .safetensors or .gguf file, or a model's name
  int64_t layer = 0;
  std::string arch;  // model_type to use when there is no config.json ("": from it)
  int64_t max_bytes = kDefaultMaxInputBytes;   // per tensor read (--max-input-bytes)
  int64_t max_elements = kDefaultMaxElements;  // per tensor read (--max-elements)
};

struct CheckpointLayer {
  std::string arch;                // the model_type used
  std::vector<NamedInput> params;  // W_q, W_k, W_v, W_o and the biases there are
  RunSettings settings;            // heads, kv_heads, rope..., causal, params_layout
  std::string title;               // "llama layer 3 (model/)"
  std::string description;         // which tensors and config fields were read
  // True when the layer's Q, K and V are not projections the engine
  // computes from X (latent attention, clipped or LayerNorm-ed heads): then
  // `params` holds only W_o and b_o, and checkpoint_layer_heads gives Q, K
  // and V of an X, for a run in mode qkv with these settings.
  bool heads_from_x = false;
};

// Reads the layer. Throws attn::Error: kInput for a malformed or
// incomplete checkpoint (naming what was looked for and where), kUsage for
// a layer out of range or an architecture attn does not know, kFile when a
// file cannot be opened.
CheckpointLayer load_checkpoint_layer(const LayerRequest& request);

// The layer's Q, K and V of x ([tokens][hidden], what enters its
// attention), each [tokens][heads · head width], projected, clipped and
// normed as the architecture does, ready for the settings of
// load_checkpoint_layer (for a layer whose heads_from_x is true; any layer
// works).
struct LayerHeads {
  Input Q, K, V;
};
LayerHeads checkpoint_layer_heads(const LayerRequest& request, const Tensor<double>& x);

// A layer's values and output projection as its heads use them (the
// hook ForwardRequest::on_values hands out), for analyses that weigh the
// attention by what each key passes on.
struct LayerValues {
  int64_t layer = 0;
  int64_t sentence = 0;  // which of ForwardRequest::lengths' sentences (0 for one)
  // [heads][k][d_v]: the value vector each key gives head h, its bias
  // included (a grouped K/V head's for each query head of its group; a
  // latent attention's own per head), as the weighted sum takes it.
  Tensor<double> values;
  // [heads][d_v][hidden]: W_O^h, the rows of the output projection (as
  // x · W_O) that multiply head h's output; its bias is not in them.
  Tensor<double> output_blocks;
};

// The forward pass from token ids up to one layer: the hidden states that
// enter layer `layer`'s attention (after its norm where the architecture
// norms first: Llama, Mistral, Qwen 2, GPT-2; the layer's input for BERT
// and RoBERTa), computed through the earlier layers' attention (as
// load_checkpoint_layer reads them), residuals, norms and MLPs in float64,
// as transformers computes them in eager mode. What --x would hold.
struct ForwardRequest {
  std::string checkpoint;
  std::string arch;  // as LayerRequest's
  std::vector<int64_t> ids;
  // Where the ids came from, for the message of an id past the embedding
  // table: "--ids", or "--text (tokenized by DIR/tokenizer.json)".
  std::string ids_source = "--ids";
  int64_t layer = 0;
  int64_t max_bytes = kDefaultMaxInputBytes;
  int64_t max_elements = kDefaultMaxElements;
  int threads = 0;
  // The precision of the matrix products and the attention (norms,
  // residuals and activations are float64 either way).
  DType dtype = DType::kF64;
  ProgressFn progress;  // (layers done, layers), when set
  // model_attention only: called on the calling thread after each layer,
  // in order, with its index, the number of layers and its weights
  // ([1][heads][q][k], the stack's slice), for a caller that writes the
  // stack while it grows.
  std::function<void(int64_t layer, int64_t layers, const Tensor<double>& weights)> on_layer;
  // model_attention only: whether its result holds the stack of weights
  // and the hidden states. A caller that needs neither (on_layer sees the
  // weights) spares their memory: 67 MB for a Qwen2.5-0.5B over 128 tokens.
  bool keep_weights = true;
  bool keep_hidden = true;
  // model_attention only: whether its result holds the logits of the head
  // on every position.
  bool keep_logits = false;
  // model_attention only: several sentences in one pass. `ids` holds them
  // one after another and `lengths` their lengths (empty: one sentence).
  // Each is its own sequence — positions from 0, attention within it, as
  // transformers runs a right-padded batch with its attention mask — while
  // the products with the weights take every sentence's rows at once. The
  // result then holds no stacks (keep_weights, keep_hidden, keep_logits and
  // on_lens are for one sentence); on_sentence_layer sees the weights.
  std::vector<int64_t> lengths;
  // model_attention only: called on the calling thread for each layer and
  // each sentence, in order, with the sentence's weights [1][heads][q][k].
  std::function<void(int64_t layer, int64_t sentence, const Tensor<double>& weights)>
      on_sentence_layer;
  // model_attention only: called for each layer (and sentence) before its
  // weights are handed out, with its values and W_O's blocks.
  std::function<void(const LayerValues& values)> on_values;
  // model_attention only: the logit lens. Called for each hidden state
  // t = 0 ... layers (the embeddings, then each layer's output) with the
  // logits of the model's unembedding on it through the final norm,
  // [q][vocab], scaled or soft-capped as the model's logits are; t =
  // layers gives the logits themselves. A model without an unembedding
  // (BERT, RoBERTa: no lm_head, no tied embedding) is a usage error, as for
  // keep_logits.
  std::function<void(int64_t state, int64_t states, const Tensor<double>& logits)> on_lens;
};
Tensor<double> attention_input(const ForwardRequest& request);

// The same with how it was computed, for a trace that starts from the
// token ids: the embeddings (transformers' hidden_states[0]), the hidden
// states entering the layer (the embeddings for layer 0), and the layer's
// input norm, which turns them into x.
struct LayerInput {
  Tensor<double> embeddings;  // [q][hidden]
  Tensor<double> hidden;      // [q][hidden]
  Tensor<double> x;           // [q][hidden]
  std::string embedding;      // how the embeddings were made: "E[id] · √hidden (Gemma)", ...
  std::string norm;           // the input norm in words; "" when x is the hidden states (BERT)
  std::string norm_tensor;    // the norm's weight tensor ("model.layers.1.input_layernorm.weight")
};
LayerInput layer_input(const ForwardRequest& request);

// Every layer of the model on the ids (request.layer is not used): the
// attention weights of each layer, [layers][1][heads][q][k] as
// torch.stack(output_attentions), and the hidden states [layers + 1][1][q]
// [hidden] as torch.stack(output_hidden_states): the embeddings, the output
// of each layer, the last after the final norm where the model has one.
struct ModelAttention {
  Tensor<double> weights;
  Tensor<double> hidden;
  Tensor<double> logits;  // [1][q][vocab], with keep_logits
  std::string model_type;
};
ModelAttention model_attention(const ForwardRequest& request);

struct ArchitectureInfo {
  std::string name;     // model_type
  std::string tensors;  // the layer's tensor names, with N for the layer
  std::string fields;   // the config.json fields read
};

// The model_type names attn reads, in documentation order.
std::vector<std::string> architecture_names();

// Every architecture attn reads, for `attn examples` and the docs.
const std::vector<ArchitectureInfo>& architectures();

}  // namespace attn
