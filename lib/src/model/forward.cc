// The forward pass of a checkpoint from token ids: the embeddings, then
// each layer as its block arranges the attention, the MLP, the norms and
// the residuals, then the final norm and the head, as transformers
// computes them in eager mode, in float64 (or with the products and the
// attention in float32). Everything about a family comes from its
// configuration (model_config.h): no family is named here.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/file_io.h"
#include "base/number_text.h"
#include "model/attention_block.h"
#include "model/forward_internal.h"
#include "model/matmul.h"
#include "model/mlp_block.h"

namespace attn {

namespace model {

Forward::Forward(const ForwardRequest& req)
    : req_(req),
      model_(req.checkpoint, req.arch, req.max_bytes, req.max_elements, req.dtype, req.threads) {
  if (req.ids.empty()) throw_usage("--ids: no token ids");
  int64_t total = 0;
  for (int64_t len : req.lengths) {
    if (len < 1) throw_internal("forward: a sentence of " + std::to_string(len) + " tokens");
    total += len;
  }
  if (!req.lengths.empty() && total != static_cast<int64_t>(req.ids.size())) {
    throw_internal("forward: sentences of " + std::to_string(total) + " tokens in " +
                   std::to_string(req.ids.size()) + " ids");
  }
}

std::vector<int64_t> Forward::sentence_lengths() const {
  if (!req_.lengths.empty()) return req_.lengths;
  return {static_cast<int64_t>(req_.ids.size())};
}

Matrix Forward::rows_of(Role role, const std::vector<int64_t>& rows, bool ids) const {
  const Weights& w = model_.weights();
  const std::string& name = w.weight_name({role});
  const BinaryArray a = w.view(name);
  const int64_t table = a.shape[0], width = a.shape[1];
  Matrix out(static_cast<Eigen::Index>(rows.size()), width);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= table) {
      if (!ids) {  // positions (or token types): the text is too long
        const std::vector<int64_t> lengths = sentence_lengths();
        const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
        throw_usage("the text has " + std::to_string(longest) + " tokens; " + name +
                    " has rows for " + std::to_string(table - model_.config().position_offset) +
                    " positions (the model's longest input)");
      }
      throw_usage(req_.ids_source + ": id " + std::to_string(rows[i]) + " is past " +
                  w.place(name) + "'s " + std::to_string(table) + " rows");
    }
    double* row = out.data() + static_cast<int64_t>(i) * width;
    decode_cells(a.data + cells_bytes(a.type, static_cast<uint64_t>(rows[i] * width)), a.type,
                 width, row);
    for (int64_t c = 0; c < width; ++c) {
      if (!std::isfinite(row[c])) {
        throw_input(w.place(name), "non-finite value in row " + std::to_string(rows[i]) +
                                       " (model weights must be finite)");
      }
    }
  }
  a.keep.check_intact(name);
  // The pages of the rows read go back: a corpus's tokens, batch after
  // batch, would otherwise keep more and more of a vocabulary's table
  // (272 MB for Qwen2.5-0.5B's) in memory.
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const auto row_bytes = static_cast<size_t>(cells_bytes(a.type, static_cast<uint64_t>(width)));
  for (int64_t r : rows) {
    const auto at = reinterpret_cast<uintptr_t>(a.data) + static_cast<size_t>(r) * row_bytes;
    const uintptr_t lo = at / page * page, hi = (at + row_bytes + page - 1) / page * page;
    a.keep.release(reinterpret_cast<const void*>(lo), hi - lo);
  }
  return out;
}

Matrix Forward::embeddings() const {
  const ModelConfig& c = model_.config();
  Matrix h = rows_of(Role::kEmbed, req_.ids, true);
  // Gemma's √hidden and Granite's multiplier, in the hidden states' dtype.
  if (c.embed_multiplier != 1) h *= c.embed_multiplier;
  const auto s = static_cast<int64_t>(req_.ids.size());
  if (model_.has(Role::kPosEmbed)) {
    // Each sentence's positions count from 0 (one sentence: all of ids).
    std::vector<int64_t> positions;
    positions.reserve(static_cast<size_t>(s));
    for (int64_t len : sentence_lengths()) {
      for (int64_t i = 0; i < len; ++i) positions.push_back(c.position_offset + i);
    }
    h += rows_of(Role::kPosEmbed, positions, false);
  }
  if (model_.has(Role::kTypeEmbed)) {
    h += rows_of(Role::kTypeEmbed, std::vector<int64_t>(static_cast<size_t>(s), 0), false);
  }
  return model_.norm(Role::kEmbedNorm, -1, h);
}

Matrix Forward::attention_in(int64_t n, const Matrix& h) const {
  if (model_.config().block == Block::kPostNorm) return h;
  return model_.norm(Role::kAttnNorm, n, h);
}

Matrix Forward::layer_step(int64_t n, const Matrix& h, const AttentionTaps& weights) const {
  const ModelConfig& c = model_.config();
  const double rm = c.residual_multiplier;
  switch (c.block) {
    case Block::kSequential: {
      Matrix a = model_.norm(Role::kAttnPostNorm, n,
                             model::attention(model_, n, attention_in(n, h), weights));
      if (rm != 1) a *= rm;
      const Matrix r = h + a;
      Matrix f =
          model_.norm(Role::kMlpPostNorm, n, mlp(model_, n, model_.norm(Role::kMlpNorm, n, r)));
      if (rm != 1) f *= rm;
      return r + f;
    }
    case Block::kPostNorm: {
      const Matrix r = model_.norm(Role::kAttnNorm, n, model::attention(model_, n, h, weights) + h);
      return model_.norm(Role::kMlpNorm, n, mlp(model_, n, r) + r);
    }
    case Block::kParallel: {
      const Matrix x = model_.norm(Role::kAttnNorm, n, h);
      const Matrix a = model::attention(model_, n, x, weights);
      const Matrix f =
          mlp(model_, n, model_.has(Role::kMlpNorm) ? model_.norm(Role::kMlpNorm, n, h) : x);
      return h + a + f;
    }
  }
  return h;
}

Matrix Forward::final_norm(const Matrix& h) const { return model_.norm(Role::kFinalNorm, -1, h); }

bool Forward::has_unembedding() const {
  if (model_.has(Role::kLmHead)) return true;
  // Tied: the embedding stands for a head the family has.
  const std::vector<TensorName>& specs = model_.config().row->tensors;
  return model_.config().tied && std::any_of(specs.begin(), specs.end(), [](const TensorName& t) {
           return t.role == Role::kLmHead;
         });
}

void Forward::require_unembedding() const {
  if (has_unembedding()) return;
  const ModelConfig& c = model_.config();
  throw_usage(display_name(req_.checkpoint) + ": " + c.model_type +
              " has no unembedding (no lm_head, and no embedding tied to one), so no "
              "predictions: it is read as " +
              c.row->causal_lm + ", without a language-model head");
}

Matrix Forward::logits(const Matrix& last) const {
  const ModelConfig& c = model_.config();
  const Weights& w = model_.weights();
  require_unembedding();
  Matrix out;
  if (model_.has(Role::kLmHead)) {
    out = model_.linear(last, {Role::kLmHead});
  } else {
    const std::string& name = w.weight_name({Role::kEmbed});
    const BinaryArray e = w.view(name);
    out = detail::multiply(last, e, true, model_.dtype(), model_.threads(), w.place(name));
  }
  switch (c.logit_scale) {
    case LogitScale::kNone:
      break;
    case LogitScale::kDivideByScaling:
      out /= c.logit_value;
      break;
    case LogitScale::kMultiplyByScale:
      out *= c.logit_value;
      break;
    case LogitScale::kSoftcap:
      out = (out.array() / c.logit_value).tanh() * c.logit_value;
      break;
  }
  return out;
}

namespace {

std::string eps_text(double eps) { return format_shortest(eps); }

}  // namespace

void Forward::describe(int64_t n, LayerInput& out) const {
  const ModelConfig& c = model_.config();
  const Weights& w = model_.weights();
  std::string e = "E[id]";
  std::string tables = w.weight_name({Role::kEmbed});
  if (c.row->embed_scale == EmbedScale::kSqrtHidden) {
    e += " · √hidden_size";
  } else if (c.embed_multiplier != 1) {
    e += " · " + format_shortest(c.embed_multiplier);
  }
  if (model_.has(Role::kPosEmbed)) {
    e += " + P[" + std::string(c.position_offset ? std::to_string(c.position_offset) + " + " : "") +
         "t]";
    tables += ", " + w.weight_name({Role::kPosEmbed});
  }
  if (model_.has(Role::kTypeEmbed)) {
    e += " + T[0]";
    tables += ", " + w.weight_name({Role::kTypeEmbed});
  }
  if (model_.has(Role::kEmbedNorm)) e = "LayerNorm(" + e + ")";
  out.embedding = e + ", the rows of " + tables;
  out.norm = "";
  if (c.block == Block::kPostNorm || !model_.has(Role::kAttnNorm)) return;
  const std::string eps = eps_text(c.eps);
  switch (c.norm) {
    case NormKind::kNone:
      return;
    case NormKind::kRms:
      out.norm = "RMSNorm: h / √(mean(h²) + ε) · w, ε = " + eps;
      break;
    case NormKind::kRmsUnit:
      out.norm = "Gemma's RMSNorm: h / √(mean(h²) + ε) · (1 + w), ε = " + eps;
      break;
    case NormKind::kLayerNorm:
      out.norm = "LayerNorm: (h − mean(h)) / √(var(h) + ε) · w + b, ε = " + eps;
      break;
    case NormKind::kLayerNormNoBias:
      out.norm = "LayerNorm without bias: (h − mean(h)) / √(var(h) + ε) · w, ε = " + eps;
      break;
    case NormKind::kLayerNormNoParams:
      out.norm = "LayerNorm without parameters: (h − mean(h)) / √(var(h) + ε), ε = " + eps;
      break;
  }
  if (w.has({Role::kAttnNorm, n})) out.norm_tensor = w.weight_name({Role::kAttnNorm, n});
}

void Forward::check_layer(int64_t layer) const {
  const int64_t layers = model_.config().layers;
  if (layer < 0 || layer >= layers) {
    throw_usage("--layer " + std::to_string(layer) + ": the model has " + std::to_string(layers) +
                " layers (0 to " + std::to_string(layers - 1) + ")");
  }
}

Tensor<double> to_tensor(const Matrix& m) {
  Tensor<double> t(Shape{m.rows(), m.cols()});
  Eigen::Map<Matrix>(t.data(), m.rows(), m.cols()) = m;
  return t;
}

}  // namespace model

LayerInput layer_input(const ForwardRequest& req) {
  const model::Forward f(req);
  f.check_layer(req.layer);
  LayerInput out;
  model::Matrix h = f.embeddings();
  out.embeddings = model::to_tensor(h);
  for (int64_t n = 0; n < req.layer; ++n) {
    if (req.progress) req.progress(n, req.layer);
    h = f.layer_step(n, h, model::AttentionTaps{});
  }
  if (req.progress) req.progress(req.layer, req.layer);
  out.hidden = model::to_tensor(h);
  out.x = model::to_tensor(f.attention_in(req.layer, h));
  f.describe(req.layer, out);
  return out;
}

Tensor<double> attention_input(const ForwardRequest& req) { return layer_input(req).x; }

ModelAttention model_attention(const ForwardRequest& req) {
  const model::Forward f(req);
  const int64_t layers = f.model().config().layers;
  const auto q = static_cast<int64_t>(req.ids.size());
  const bool sentences = !req.lengths.empty();
  if (sentences &&
      (req.keep_weights || req.keep_hidden || req.keep_logits || req.on_lens || req.on_layer)) {
    throw_internal("model_attention: several sentences keep no stacks, logits or lens");
  }
  // Before the first layer: a lens on a model without an unembedding stops
  // here, not after the forward pass.
  if (req.keep_logits || req.on_lens) f.require_unembedding();
  ModelAttention out;
  model::Matrix h = f.embeddings();
  const int64_t d = h.cols();
  // Both stacks are written whole below: no zeros first (67 MB of them for
  // Qwen2.5-0.5B over 128 tokens). Huge pages (base/big_buffer.h) were
  // tried for them and made the run slower: the kernel zeroed five times as
  // long, on the main thread.
  auto stack = [](Shape shape) {
    Values<double> v(static_cast<size_t>(shape_size(shape)));
    return Tensor<double>(std::move(shape), std::move(v));
  };
  if (req.keep_hidden) out.hidden = stack(Shape{layers + 1, 1, q, d});
  auto put_hidden = [&](int64_t at, const model::Matrix& m) {
    if (req.keep_hidden) Eigen::Map<model::Matrix>(out.hidden.data() + at * q * d, q, d) = m;
  };
  // The lens of hidden state `at`: what enters the final norm, or (the
  // last) what left it.
  auto lens = [&](int64_t at, const model::Matrix& h_at, bool normed) {
    if (!req.on_lens) return;
    req.on_lens(at, layers + 1, model::to_tensor(f.logits(normed ? h_at : f.final_norm(h_at))));
  };
  const int64_t heads = f.model().config().heads;
  if (req.keep_weights) out.weights = stack(Shape{layers, 1, heads, q, q});
  for (int64_t n = 0; n < layers; ++n) {
    if (req.progress) req.progress(n, layers);
    put_hidden(n, h);
    lens(n, h, false);
    Tensor<double> w;
    model::AttentionTaps taps;
    taps.lengths = &req.lengths;
    if (req.keep_weights || req.on_layer || req.on_sentence_layer) {
      taps.weights = [&](int64_t s, Tensor<double>&& weights) {
        const int64_t len = sentences ? req.lengths[static_cast<size_t>(s)] : q;
        if (weights.size() != heads * len * len) {
          throw_internal("model_attention: layer " + std::to_string(n) + " has weights of shape " +
                         shape_string(weights.shape()) + ", not " + std::to_string(heads) +
                         " heads of " + std::to_string(len) + " x " + std::to_string(len));
        }
        if (req.on_sentence_layer) req.on_sentence_layer(n, s, weights);
        w = std::move(weights);
      };
    }
    if (req.on_values) {
      taps.values = [&](int64_t, LayerValues&& v) { req.on_values(v); };
    }
    h = f.layer_step(n, h, taps);
    if (req.keep_weights) {
      std::copy(w.data(), w.data() + w.size(), out.weights.data() + n * w.size());
    }
    if (req.on_layer) req.on_layer(n, layers, w);
  }
  if (req.progress) req.progress(layers, layers);
  const model::Matrix last = f.final_norm(h);
  if (req.keep_hidden) put_hidden(layers, last);
  lens(layers, last, true);
  if (req.keep_logits) {
    const model::Matrix l = f.logits(last);
    out.logits = Tensor<double>(Shape{1, l.rows(), l.cols()});
    Eigen::Map<model::Matrix>(out.logits.data(), l.rows(), l.cols()) = l;
  }
  out.model_type = f.model().config().model_type;
  return out;
}

}  // namespace attn
