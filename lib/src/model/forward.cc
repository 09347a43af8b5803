// The forward pass of a checkpoint from token ids up to one layer's
// attention: embeddings, then for each earlier layer its attention (the
// engine's, with the layer's settings from load_checkpoint_layer), the
// residuals, norms and MLP, as transformers computes them in eager mode
// and float64. What it returns is what `--x` would have to hold.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/problem.h"
#include "attn/progress.h"
#include "base/number_text.h"
#include "kernel/linear_kernel.h"
#include "kernel/parallel.h"
#include "model/checkpoint_files.h"
#include "model/matmul.h"

namespace attn {

namespace {

using detail::Config;
using detail::multiply;
using detail::Tensors;
using Matrix = MatrixR;

enum class Family { kLlama, kGemma, kGemma2, kGpt2, kBert };

Eigen::RowVectorXd as_vector(const Tensor<double>& t, int64_t n, const std::string& what) {
  if (t.rank() != 1 || t.dim(0) != n) {
    throw_input(what, "expected a vector of " + std::to_string(n) + ", got shape " +
                          shape_string(t.shape()));
  }
  return Eigen::Map<const Eigen::RowVectorXd>(t.data(), n);
}

// transformers' LlamaRMSNorm: x / sqrt(mean(x²) + eps) · w.
// One pass per row after its sum of squares, no temporary matrix.
Matrix rms_norm(const Matrix& x, const Eigen::RowVectorXd& w, double eps) {
  Matrix out(x.rows(), x.cols());
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const double ms = x.row(r).squaredNorm() / static_cast<double>(x.cols());
    out.row(r) = (x.row(r).array() / std::sqrt(ms + eps)) * w.array();
  }
  return out;
}

// Gemma's RMSNorm scales by (1 + w).
Matrix gemma_rms_norm(const Matrix& x, const Eigen::RowVectorXd& w, double eps) {
  return rms_norm(x, w.array() + 1.0, eps);
}

// torch.nn.LayerNorm: biased variance.
Matrix layer_norm(const Matrix& x, const Eigen::RowVectorXd& w, const Eigen::RowVectorXd& b,
                  double eps) {
  Matrix out(x.rows(), x.cols());
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const double mu = x.row(r).mean();
    const Eigen::RowVectorXd c = x.row(r).array() - mu;
    const double var = c.squaredNorm() / static_cast<double>(x.cols());
    out.row(r) = (c / std::sqrt(var + eps)).cwiseProduct(w) + b;
  }
  return out;
}

using Activation = double (*)(double);

double silu(double v) { return v / (1.0 + std::exp(-v)); }
double gelu(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }
double gelu_tanh(double v) {
  return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
}
double relu(double v) { return v > 0 ? v : 0.0; }

// transformers' ACT2FN entries attn computes; nullptr for another name.
Activation activation_named(const std::string& act) {
  if (act == "silu" || act == "swish") return silu;
  if (act == "gelu") return gelu;
  if (act == "gelu_new" || act == "gelu_pytorch_tanh") return gelu_tanh;
  if (act == "relu") return relu;
  return nullptr;
}

class Forward {
 public:
  Forward(const ForwardRequest& req, const Config& config, const std::string& type)
      : req_(req),
        config_(config),
        type_(type),
        tensors_(req.checkpoint, req.max_bytes, req.max_elements) {
    if (type_ == "gpt2") {
      family_ = Family::kGpt2;
    } else if (type_ == "bert" || type_ == "roberta") {
      family_ = Family::kBert;
    } else if (type_ == "gemma2" || type_ == "gemma3_text") {
      family_ = Family::kGemma2;
    } else if (type_ == "gemma") {
      family_ = Family::kGemma;
    } else if (type_ == "mixtral") {
      moe_ = true;
    }
    layers_ = config_.count(family_ == Family::kGpt2 ? "n_layer" : "num_hidden_layers");
    switch (family_) {
      case Family::kLlama:
        d_ = config_.count("hidden_size");
        eps_ = config_.positive("rms_norm_eps", 1e-6);
        act_ = act("hidden_act", "silu");
        if (config_.flag("mlp_bias", false)) {
          throw_input(config_.place(), "\"mlp_bias\" true is not implemented in the forward pass");
        }
        if (moe_) {
          experts_ = config_.count("num_local_experts");
          top_k_ = config_.count("num_experts_per_tok", 2);
          if (top_k_ > experts_) {
            throw_input(config_.place(), "\"num_experts_per_tok\" " + std::to_string(top_k_) +
                                             " is more than num_local_experts " +
                                             std::to_string(experts_));
          }
        }
        break;
      case Family::kGemma:
      case Family::kGemma2:
        d_ = config_.count("hidden_size");
        eps_ = config_.positive("rms_norm_eps", 1e-6);
        // transformers' Gemma models read hidden_activation; Gemma (1)
        // uses gelu_pytorch_tanh when it is not set, whatever hidden_act says.
        act_ = act("hidden_activation", "gelu_pytorch_tanh");
        break;
      case Family::kGpt2:
        d_ = config_.count("n_embd");
        eps_ = config_.positive("layer_norm_epsilon", 1e-5);
        act_ = act("activation_function", "gelu_new");
        break;
      case Family::kBert:
        d_ = config_.count("hidden_size");
        eps_ = config_.positive("layer_norm_eps", 1e-12);
        act_ = act("hidden_act", "gelu");
        break;
    }
  }

  int64_t layers() const { return layers_; }

  // How the embeddings and layer n's input norm are computed, in words.
  void describe(int64_t n, LayerInput& out) const {
    const std::string eps = format_shortest(eps_);
    switch (family_) {
      case Family::kLlama:
        out.embedding = "E[id], the rows of embed_tokens.weight";
        out.norm = "RMSNorm: h / √(mean(h²) + ε) · w, ε = " + eps;
        out.norm_tensor = layer("layers.N.input_layernorm.weight", n);
        break;
      case Family::kGemma:
      case Family::kGemma2:
        out.embedding = "E[id] · √hidden_size, the rows of embed_tokens.weight scaled by √" +
                        std::to_string(d_);
        out.norm = "Gemma's RMSNorm: h / √(mean(h²) + ε) · (1 + w), ε = " + eps;
        out.norm_tensor = layer("layers.N.input_layernorm.weight", n);
        break;
      case Family::kGpt2:
        out.embedding = "E[id] + P[t], the rows of wte.weight plus those of wpe.weight";
        out.norm = "LayerNorm: (h − mean(h)) / √(var(h) + ε) · w + b, ε = " + eps;
        out.norm_tensor = layer("h.N.ln_1", n);
        break;
      case Family::kBert:
        out.embedding = "LayerNorm(E[id] + P[t] + T[0]), word, position" +
                        std::string(type_ == "roberta" ? " (from padding_idx + 1)" : "") +
                        " and token-type embeddings";
        out.norm = "";  // post-LN: the layer reads the hidden states themselves
        break;
    }
  }

  void check_layer(int64_t layer) const {
    if (layer < 0 || layer >= layers_) {
      throw_usage("--layer " + std::to_string(layer) + ": the model has " +
                  std::to_string(layers_) + " layers (0 to " + std::to_string(layers_ - 1) + ")");
    }
  }

  static Tensor<double> to_tensor(const Matrix& m) {
    Tensor<double> t(Shape{m.rows(), m.cols()});
    Eigen::Map<Matrix>(t.data(), m.rows(), m.cols()) = m;
    return t;
  }

  // The hidden states entering layer 0: transformers' hidden_states[0].
  Matrix embeddings() {
    const auto s = static_cast<int64_t>(req_.ids.size());
    std::vector<int64_t> positions(static_cast<size_t>(s));
    switch (family_) {
      case Family::kLlama:
        return embed("embed_tokens.weight", req_.ids);
      case Family::kGemma:
      case Family::kGemma2:
        // Scaled by sqrt(hidden_size), in the hidden states' dtype (float64).
        return embed("embed_tokens.weight", req_.ids) * std::sqrt(static_cast<double>(d_));
      case Family::kGpt2:
        for (int64_t i = 0; i < s; ++i) positions[static_cast<size_t>(i)] = i;
        return embed("wte.weight", req_.ids) + embed("wpe.weight", positions);
      case Family::kBert: {
        // RoBERTa counts positions from the padding id + 1.
        int64_t first = 0;
        if (type_ == "roberta") {
          const double pad = config_.number("pad_token_id", 1);
          if (!(pad >= 0 && pad < 1e9 && pad == std::floor(pad))) {
            throw_input(config_.place(), "\"pad_token_id\" must be a non-negative integer");
          }
          first = static_cast<int64_t>(pad) + 1;
        }
        for (int64_t i = 0; i < s; ++i) positions[static_cast<size_t>(i)] = first + i;
        const std::vector<int64_t> types(static_cast<size_t>(s), 0);
        const std::string e = "embeddings.";
        return ln(embed(e + "word_embeddings.weight", req_.ids) +
                      embed(e + "position_embeddings.weight", positions) +
                      embed(e + "token_type_embeddings.weight", types),
                  e + "LayerNorm");
      }
    }
    return {};
  }

  // What enters layer n's attention: the hidden states after the layer's
  // first norm (pre-norm models), or themselves (BERT).
  Matrix attention_in(int64_t n, const Matrix& h) {
    switch (family_) {
      case Family::kLlama:
        return rms_norm(h, vec(layer("layers.N.input_layernorm.weight", n), d_), eps_);
      case Family::kGemma:
      case Family::kGemma2:
        return gemma_norm(h, "layers.N.input_layernorm.weight", n);
      case Family::kGpt2:
        return ln(h, layer("h.N.ln_1", n));
      case Family::kBert:
        return h;
    }
    return h;
  }

  // Layer n on the hidden states h: the hidden states after it, and its
  // attention weights [heads][q][k] in *weights when asked.
  Matrix layer_step(int64_t n, const Matrix& h, Tensor<double>* weights) {
    const Matrix a = attention(n, attention_in(n, h), weights);
    switch (family_) {
      case Family::kLlama: {
        const Matrix r = h + a;
        const Matrix m =
            rms_norm(r, vec(layer("layers.N.post_attention_layernorm.weight", n), d_), eps_);
        return r + (moe_ ? experts(n, m) : gated_mlp(n, m));
      }
      case Family::kGemma: {
        const Matrix r = h + a;
        return r + gated_mlp(n, gemma_norm(r, "layers.N.post_attention_layernorm.weight", n));
      }
      case Family::kGemma2: {
        // Gemma 2 norms the attention's and the MLP's outputs too, before
        // each residual.
        const Matrix r = h + gemma_norm(a, "layers.N.post_attention_layernorm.weight", n);
        const Matrix m = gemma_norm(r, "layers.N.pre_feedforward_layernorm.weight", n);
        return r + gemma_norm(gated_mlp(n, m), "layers.N.post_feedforward_layernorm.weight", n);
      }
      case Family::kGpt2: {
        const Matrix r = h + a;
        const Matrix m = ln(r, layer("h.N.ln_2", n));
        // Conv1D: x · W + b, W stored [in][out].
        const Matrix fc = linear(m, layer("h.N.mlp.c_fc.weight", n), false).rowwise() +
                          vec(layer("h.N.mlp.c_fc.bias", n), 4 * d_);
        return r + (linear(activated(fc), layer("h.N.mlp.c_proj.weight", n), false).rowwise() +
                    vec(layer("h.N.mlp.c_proj.bias", n), d_));
      }
      case Family::kBert: {
        const std::string p = layer("encoder.layer.N.", n);
        const Matrix r = ln(a + h, p + "attention.output.LayerNorm");
        const Matrix lin = linear(r, p + "intermediate.dense.weight");
        const Matrix inter = lin.rowwise() + vec(p + "intermediate.dense.bias", lin.cols());
        const Matrix out = linear(activated(inter), p + "output.dense.weight").rowwise() +
                           vec(p + "output.dense.bias", d_);
        return ln(out + r, p + "output.LayerNorm");
      }
    }
    return h;
  }

  // transformers' last hidden state: after the final norm (Llama's
  // model.norm, GPT-2's ln_f; BERT has none).
  Matrix final_norm(const Matrix& h) {
    switch (family_) {
      case Family::kLlama:
        return rms_norm(h, vec("norm.weight", d_), eps_);
      case Family::kGemma:
      case Family::kGemma2:
        return gemma_rms_norm(h, vec("norm.weight", d_), eps_);
      case Family::kGpt2:
        return ln(h, "ln_f");
      case Family::kBert:
        return h;
    }
    return h;
  }

 private:
  // Llama's MLP (SwiGLU; GeGLU with Gemma's activation):
  // down(act(gate(x)) ⊙ up(x)).
  Matrix gated_mlp(int64_t n, const Matrix& m) {
    return gated_product(m, layer("layers.N.mlp.gate_proj.weight", n),
                         layer("layers.N.mlp.up_proj.weight", n),
                         layer("layers.N.mlp.down_proj.weight", n));
  }

  // Mixtral's sparse MoE block: the router's softmax over the experts, the
  // top k of each token renormalised to sum to 1, and each chosen expert's
  // w2(act(w1 x) ⊙ w3 x) weighted by it, added in expert order as
  // transformers' index_add_ does. The router's softmax is in float64
  // (transformers takes it in float32 whatever the model's dtype).
  Matrix experts(int64_t n, const Matrix& m) {
    const std::string p = layer("layers.N.block_sparse_moe.", n);
    const Matrix logits = linear(m, p + "gate.weight");
    if (logits.cols() != experts_) {
      throw_input(display_name(req_.checkpoint),
                  p + "gate.weight routes to " + std::to_string(logits.cols()) +
                      " experts but num_local_experts is " + std::to_string(experts_));
    }
    const Eigen::Index tokens = m.rows();
    Matrix route = Matrix::Zero(tokens, experts_);  // each token's weight of each expert
    for (Eigen::Index t = 0; t < tokens; ++t) {
      const double top = logits.row(t).maxCoeff();
      Eigen::RowVectorXd prob = (logits.row(t).array() - top).exp();
      prob /= prob.sum();
      // torch.topk: the k largest, the earlier index first among equals.
      std::vector<int64_t> order(static_cast<size_t>(experts_));
      for (int64_t e = 0; e < experts_; ++e) order[static_cast<size_t>(e)] = e;
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return prob[a] > prob[b]; });
      double sum = 0;
      for (int64_t k = 0; k < top_k_; ++k) sum += prob[order[static_cast<size_t>(k)]];
      for (int64_t k = 0; k < top_k_; ++k) {
        const int64_t e = order[static_cast<size_t>(k)];
        route(t, e) = prob[e] / sum;
      }
    }
    Matrix out = Matrix::Zero(tokens, m.cols());
    for (int64_t e = 0; e < experts_; ++e) {
      std::vector<Eigen::Index> rows;
      for (Eigen::Index t = 0; t < tokens; ++t) {
        if (route(t, e) != 0) rows.push_back(t);
      }
      if (rows.empty()) continue;
      const std::string x = p + "experts." + std::to_string(e) + ".";
      Matrix in(static_cast<Eigen::Index>(rows.size()), m.cols());
      for (size_t i = 0; i < rows.size(); ++i)
        in.row(static_cast<Eigen::Index>(i)) = m.row(rows[i]);
      const Matrix y = gated_product(in, x + "w1.weight", x + "w3.weight", x + "w2.weight");
      for (size_t i = 0; i < rows.size(); ++i) {
        out.row(rows[i]) += y.row(static_cast<Eigen::Index>(i)) * route(rows[i], e);
      }
    }
    return out;
  }

  std::string name_of(const std::string& suffix) const {
    const auto name = tensors_.find_suffix(suffix);
    if (!name) {
      throw_input(display_name(req_.checkpoint), "no tensor named " + suffix + " (or ending in ." +
                                                     suffix + ") for the " + type_ +
                                                     " forward pass");
    }
    return *name;
  }
  Tensor<double> tensor(const std::string& suffix) { return tensors_.read(name_of(suffix)); }

  // x times the weight matrix `suffix`: x · Wᵀ for nn.Linear's [out][in]
  // (`torch`), x · W for Conv1D's [in][out]; in the request's precision.
  Matrix linear(const Matrix& x, const std::string& suffix, bool torch = true) {
    return std::move(linears(x, {suffix}, torch)[0]);
  }
  // x times each of the weight matrices, in one pass of the threads in
  // float32 (an MLP's gate and up).
  std::vector<Matrix> linears(const Matrix& x, const std::vector<std::string>& suffixes,
                              bool torch = true) {
    std::vector<Weight> ws;
    for (const std::string& suffix : suffixes) ws.push_back(weight(suffix, x.cols(), torch));
    std::vector<detail::NamedWeight> named;
    for (const Weight& w : ws) named.push_back({&w.view, torch, w.place});
    return multiply(x, named, req_.dtype, req_.threads);
  }

  // A weight matrix where it lies in the file, checked to take `in`
  // features.
  struct Weight {
    BinaryArray view;
    std::string place;
  };
  Weight weight(const std::string& suffix, int64_t in, bool torch = true) {
    const std::string name = name_of(suffix);
    Weight w{tensors_.view(name), tensors_.place(name)};
    const Shape& shape = w.view.shape;
    const int64_t takes = shape.size() != 2 ? -1 : torch ? shape.back() : shape.front();
    if (takes != in) {
      throw_input(w.place, "has shape " + shape_string(shape) + "; the " + type_ +
                               " forward pass multiplies it by " + std::to_string(in) +
                               " features " + (torch ? "([out][in])" : "([in][out])"));
    }
    return w;
  }

  // down(act(gate(x)) ⊙ up(x)), the weights [out][in]: SwiGLU, GeGLU.
  Matrix gated_product(const Matrix& x, const std::string& gate, const std::string& up,
                       const std::string& down) {
    if (req_.dtype == DType::kF32 && (act_ == silu || act_ == gelu_tanh)) {
      const Weight g = weight(gate, x.cols()), u = weight(up, x.cols());
      if (g.view.shape[0] != u.view.shape[0]) {
        throw_input(u.place, "has shape " + shape_string(u.view.shape) + "; the gate " + g.place +
                                 " has " + std::to_string(g.view.shape[0]) + " outputs");
      }
      const Weight d = weight(down, g.view.shape[0]);
      return detail::gated_mlp_f32(
          x, {&g.view, true, g.place}, {&u.view, true, u.place}, {&d.view, true, d.place},
          act_ == silu ? kernel::GateKind::kSilu : kernel::GateKind::kGeluTanh, req_.threads);
    }
    const std::vector<Matrix> gate_up = linears(x, {gate, up});
    return linear(gated(gate_up[0], gate_up[1]), down);
  }

  Eigen::RowVectorXd vec(const std::string& suffix, int64_t n) {
    return as_vector(tensor(suffix), n, suffix);
  }
  static std::string layer(const char* pattern, int64_t n) {
    std::string s = pattern;
    s.replace(s.find('N'), 1, std::to_string(n));
    return s;
  }
  Matrix ln(const Matrix& x, const std::string& p) {
    return layer_norm(x, vec(p + ".weight", d_), vec(p + ".bias", d_), eps_);
  }
  Matrix gemma_norm(const Matrix& x, const char* pattern, int64_t n) {
    return gemma_rms_norm(x, vec(layer(pattern, n), d_), eps_);
  }
  // The activation of every cell, rows shared among the threads (a
  // 128 x 4864 gate is 600 thousand exponentials a layer).
  Matrix activated(const Matrix& m) const {
    Matrix out(m.rows(), m.cols());
    const int threads = req_.threads > 0 ? req_.threads : kernel::hardware_threads();
    kernel::parallel_for(m.rows(), threads, [&](int64_t r, int) {
      for (Eigen::Index c = 0; c < m.cols(); ++c) out(r, c) = act_(m(r, c));
    });
    return out;
  }

  // act(gate) ⊙ up, rows shared among the threads.
  Matrix gated(const Matrix& gate, const Matrix& up) const {
    Matrix out(gate.rows(), gate.cols());
    const int threads = req_.threads > 0 ? req_.threads : kernel::hardware_threads();
    kernel::parallel_for(gate.rows(), threads, [&](int64_t r, int) {
      for (Eigen::Index c = 0; c < gate.cols(); ++c) out(r, c) = act_(gate(r, c)) * up(r, c);
    });
    return out;
  }

  // Rows of an embedding table for the ids.
  // Only those rows are read: a vocabulary's table (151936 x 896 for
  // Qwen 2.5) stays in the mapped file.
  Matrix embed(const std::string& suffix, const std::vector<int64_t>& rows) {
    const std::string name = name_of(suffix);
    const BinaryArray a = tensors_.view(name, false);
    if (a.shape.size() != 2 || a.shape[1] != d_) {
      throw_input(tensors_.place(name), "has shape " + shape_string(a.shape) +
                                            "; an embedding table is [rows][hidden size " +
                                            std::to_string(d_) + "]");
    }
    struct {
      int64_t rows, cols;
    } table{a.shape[0], a.shape[1]};
    Matrix out(static_cast<Eigen::Index>(rows.size()), table.cols);
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i] < 0 || rows[i] >= table.rows) {
        if (&rows != &req_.ids) {  // positions (or token types): the text is too long
          throw_usage("the text has " + std::to_string(req_.ids.size()) + " tokens; " + suffix +
                      " has rows for " + std::to_string(table.rows) +
                      " positions (the model's longest input)");
        }
        throw_usage(req_.ids_source + ": id " + std::to_string(rows[i]) + " is past " + suffix +
                    "'s " + std::to_string(table.rows) + " rows");
      }
      double* row = out.data() + static_cast<int64_t>(i) * table.cols;
      decode_cells(a.data + rows[i] * table.cols * element_size(a.type), a.type, table.cols, row);
      for (int64_t c = 0; c < table.cols; ++c) {
        if (!std::isfinite(row[c])) {
          throw_input(tensors_.place(name), "non-finite value in row " + std::to_string(rows[i]) +
                                                " (model weights must be finite)");
        }
      }
    }
    return out;
  }

  // The engine's attention of layer n on x, with its output projection.
  // The layer's weights and settings are read_layer's, its projection
  // matrices left where they are mapped; the projections are products here
  // (model/matmul.h, in the request's precision) and the engine gets the
  // heads as 4-D Q, K, V: what it adds (the Q/K norm, RoPE, scaling,
  // masks, softmax) is the same as from X and W.
  Matrix attention(int64_t n, const Matrix& x, Tensor<double>* weights) {
    LayerRequest lr;
    lr.checkpoint = req_.checkpoint;
    lr.layer = n;
    lr.arch = req_.arch;
    lr.max_bytes = req_.max_bytes;
    lr.max_elements = req_.max_elements;
    std::vector<detail::InPlaceWeight> in_place;
    CheckpointLayer l = detail::read_layer(lr, tensors_, config_, type_, &in_place);
    const RunSettings& s = l.settings;
    const bool torch = s.params_layout.value_or(ParamsLayout::kMath) == ParamsLayout::kTorch;
    auto param = [&](const char* name) -> const Tensor<double>* {
      for (const NamedInput& p : l.params) {
        if (p.name == name) return &p.input.tensor;
      }
      return nullptr;
    };
    // A projection's weight where it lies in the file, or the doubles
    // read_layer cut from a tensor (GPT-2's c_attn).
    auto weight = [&](const char* name) {
      for (const detail::InPlaceWeight& w : in_place) {
        if (w.param == name) return tensors_.view(w.tensor);
      }
      return detail::view_of(*param(name));
    };
    // A bias the width of the projection's output, or an input error.
    auto add_bias = [&](Matrix& y, const char* b) {
      const Tensor<double>* bias = param(b);
      if (!bias) return;
      if (bias->rank() != 1 || bias->dim(0) != y.cols()) {
        throw_input(display_name(req_.checkpoint),
                    l.title + ": " + b + " has shape " + shape_string(bias->shape()) +
                        " but its projection gives " + std::to_string(y.cols()) + " features");
      }
      y.rowwise() += Eigen::Map<const Eigen::RowVectorXd>(bias->data(), bias->size());
    };
    const BinaryArray wq = weight("W_q"), wk = weight("W_k"), wv = weight("W_v");
    std::vector<Matrix> qkv = multiply(x,
                                       {{&wq, torch, l.title + " W_q"},
                                        {&wk, torch, l.title + " W_k"},
                                        {&wv, torch, l.title + " W_v"}},
                                       req_.dtype, req_.threads);
    add_bias(qkv[0], "b_q");
    add_bias(qkv[1], "b_k");
    add_bias(qkv[2], "b_v");
    const int64_t heads = s.heads.value_or(1), kv = s.kv_heads.value_or(heads);
    const auto len = static_cast<int64_t>(x.rows());
    // [L][h·d] -> [1][h][L][d]: head h owns column block h.
    auto split = [&](const Matrix& m, int64_t h) {
      const int64_t d = m.cols() / h;
      Tensor<double> t(Shape{1, h, len, d});
      for (int64_t g = 0; g < h; ++g) {
        Eigen::Map<Matrix>(t.data() + g * len * d, len, d) = m.middleCols(g * d, d);
      }
      return t;
    };
    InputDocument doc;
    const std::string source = display_name(req_.checkpoint) + " layer " + std::to_string(n);
    doc.source = source;
    doc.settings_place = source;
    doc.Q = Input{split(qkv[0], heads), "Q"};
    doc.K = Input{split(qkv[1], kv), "K"};
    doc.V = Input{split(qkv[2], kv), "V"};
    for (NamedInput& p : l.params) {
      if (p.name == "q_norm" || p.name == "k_norm") doc.params.push_back(std::move(p));
    }
    doc.settings = s;
    doc.settings.mode = Mode::kQkv;
    doc.settings.params_layout.reset();
    const Problem p = build_problem(std::move(doc));
    ComputeRequest creq;
    creq.threads = req_.threads;
    creq.weights = weights != nullptr;
    creq.dtype = req_.dtype;
    Result r = compute(p, creq);
    if (weights) *weights = std::move(*r.weights);
    // [1][h][L][dv] -> [L][h·dv], then the output projection.
    const Tensor<double>& o = r.output;
    const int64_t dv = o.dim(3);
    Matrix concat(len, heads * dv);
    for (int64_t g = 0; g < heads; ++g) {
      concat.middleCols(g * dv, dv) = Eigen::Map<const Matrix>(o.data() + g * len * dv, len, dv);
    }
    const BinaryArray wo = weight("W_o");
    Matrix out = multiply(concat, wo, torch, req_.dtype, req_.threads, l.title + " W_o");
    add_bias(out, "b_o");
    if (out.cols() != d_) {
      throw_input(display_name(req_.checkpoint),
                  l.title + ": W_o gives " + std::to_string(out.cols()) +
                      " features but the hidden size is " + std::to_string(d_));
    }
    return out;
  }

  Activation act(const char* key, const char* fallback) const {
    std::string a = config_.text(key);
    if (a.empty()) a = fallback;
    const Activation f = activation_named(a);
    if (!f) {
      throw_input(config_.place(), std::string("\"") + key + "\" \"" + message_text(a) +
                                       "\" is not an activation attn computes (silu, gelu, "
                                       "gelu_new, gelu_pytorch_tanh, relu)");
    }
    return f;
  }

  const ForwardRequest& req_;
  const Config& config_;
  std::string type_;
  Tensors tensors_;
  Family family_ = Family::kLlama;
  bool moe_ = false;  // Mixtral: the MLP is a mixture of experts
  int64_t experts_ = 0, top_k_ = 0;
  int64_t layers_ = 0, d_ = 0;
  double eps_ = 0;
  Activation act_ = nullptr;
};

}  // namespace

LayerInput layer_input(const ForwardRequest& req) {
  if (req.ids.empty()) throw_usage("--ids: no token ids");
  std::string type;
  const Config config = detail::open_config(req.checkpoint, req.arch, type);
  Forward f(req, config, type);
  f.check_layer(req.layer);
  LayerInput out;
  Matrix h = f.embeddings();
  out.embeddings = Forward::to_tensor(h);
  for (int64_t n = 0; n < req.layer; ++n) {
    if (req.progress) req.progress(n, req.layer);
    h = f.layer_step(n, h, nullptr);
  }
  if (req.progress) req.progress(req.layer, req.layer);
  out.hidden = Forward::to_tensor(h);
  out.x = Forward::to_tensor(f.attention_in(req.layer, h));
  f.describe(req.layer, out);
  return out;
}

Tensor<double> attention_input(const ForwardRequest& req) { return layer_input(req).x; }

ModelAttention model_attention(const ForwardRequest& req) {
  if (req.ids.empty()) throw_usage("--ids: no token ids");
  std::string type;
  const Config config = detail::open_config(req.checkpoint, req.arch, type);
  Forward f(req, config, type);
  const int64_t layers = f.layers();
  const auto q = static_cast<int64_t>(req.ids.size());
  ModelAttention out;
  Matrix h = f.embeddings();
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
  auto put_hidden = [&](int64_t at, const Matrix& m) {
    if (req.keep_hidden) Eigen::Map<Matrix>(out.hidden.data() + at * q * d, q, d) = m;
  };
  int64_t heads = 0;
  for (int64_t n = 0; n < layers; ++n) {
    if (req.progress) req.progress(n, layers);
    put_hidden(n, h);
    Tensor<double> w;
    h = f.layer_step(n, h, &w);
    // The stack is allocated once, by the first layer's heads (every layer
    // of these architectures has as many): growing it layer by layer cost
    // 6% of a Qwen2.5-0.5B run in copies and fresh pages.
    if (n == 0) {
      heads = w.rank() >= 3 ? w.dim(w.rank() - 3) : 1;
      if (req.keep_weights) out.weights = stack(Shape{layers, 1, heads, q, q});
    }
    if (w.size() != heads * q * q) {
      throw_internal("model_attention: layer " + std::to_string(n) + " has weights of shape " +
                     shape_string(w.shape()) + ", not " + std::to_string(heads) + " heads of " +
                     std::to_string(q) + " x " + std::to_string(q));
    }
    if (req.keep_weights) {
      std::copy(w.data(), w.data() + w.size(), out.weights.data() + n * w.size());
    }
    if (req.on_layer) req.on_layer(n, layers, w);
  }
  if (req.progress) req.progress(layers, layers);
  if (req.keep_hidden) put_hidden(layers, f.final_norm(h));
  out.model_type = type;
  return out;
}

}  // namespace attn
