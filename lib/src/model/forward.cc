// The forward pass of a checkpoint from token ids up to one layer's
// attention: embeddings, then for each earlier layer its attention (the
// engine's, with the layer's settings from load_checkpoint_layer), the
// residuals, norms and MLP, as transformers computes them in eager mode
// and float64. What it returns is what `--x` would have to hold.
#include <cmath>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/problem.h"
#include "model/checkpoint_files.h"

namespace attn {

namespace {

using detail::Config;
using detail::Tensors;
using Matrix = MatrixR;

enum class Family { kLlama, kGpt2, kBert };

Matrix as_matrix(const Tensor<double>& t, const std::string& what) {
  if (t.rank() != 2) throw_input(what, "expected a matrix, got shape " + shape_string(t.shape()));
  return Eigen::Map<const Matrix>(t.data(), t.dim(0), t.dim(1));
}

Eigen::RowVectorXd as_vector(const Tensor<double>& t, int64_t n, const std::string& what) {
  if (t.rank() != 1 || t.dim(0) != n) {
    throw_input(what, "expected a vector of " + std::to_string(n) + ", got shape " +
                          shape_string(t.shape()));
  }
  return Eigen::Map<const Eigen::RowVectorXd>(t.data(), n);
}

// transformers' LlamaRMSNorm: x / sqrt(mean(x²) + eps) · w.
Matrix rms_norm(const Matrix& x, const Eigen::RowVectorXd& w, double eps) {
  Matrix out(x.rows(), x.cols());
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const double ms = x.row(r).squaredNorm() / static_cast<double>(x.cols());
    out.row(r) = x.row(r) / std::sqrt(ms + eps);
  }
  return out.array().rowwise() * w.array();
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

double activation(const std::string& act, double v) {
  if (act == "silu" || act == "swish") return v / (1.0 + std::exp(-v));
  if (act == "gelu") return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  if (act == "gelu_new" || act == "gelu_pytorch_tanh") {
    return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
  }
  if (act == "relu") return v > 0 ? v : 0.0;
  throw_internal("activation " + act);
}

class Forward {
 public:
  Forward(const ForwardRequest& req, const Config& config, const std::string& type)
      : req_(req),
        config_(config),
        type_(type),
        tensors_(req.checkpoint, req.max_bytes, req.max_elements) {}

  Tensor<double> run() {
    Family family = Family::kLlama;
    if (type_ == "gpt2") {
      family = Family::kGpt2;
    } else if (type_ == "bert" || type_ == "roberta") {
      family = Family::kBert;
    } else if (type_ != "llama" && type_ != "mistral" && type_ != "qwen2") {
      throw_usage("the forward pass of " + type_ +
                  " is not implemented yet (llama, mistral, qwen2, gpt2, bert and roberta are); "
                  "give the hidden states entering the layer with --x FILE");
    }
    const int64_t layers = config_.count(family == Family::kGpt2 ? "n_layer" : "num_hidden_layers");
    if (req_.layer < 0 || req_.layer >= layers) {
      throw_usage("--layer " + std::to_string(req_.layer) + ": the model has " +
                  std::to_string(layers) + " layers (0 to " + std::to_string(layers - 1) + ")");
    }
    switch (family) {
      case Family::kLlama:
        return to_tensor(llama());
      case Family::kGpt2:
        return to_tensor(gpt2());
      case Family::kBert:
        return to_tensor(bert());
    }
    return {};
  }

 private:
  static Tensor<double> to_tensor(const Matrix& m) {
    Tensor<double> t(Shape{m.rows(), m.cols()});
    Eigen::Map<Matrix>(t.data(), m.rows(), m.cols()) = m;
    return t;
  }

  Tensor<double> tensor(const std::string& suffix) {
    const auto name = tensors_.find_suffix(suffix);
    if (!name) {
      throw_input(display_name(req_.checkpoint), "no tensor named " + suffix + " (or ending in ." +
                                                     suffix + ") for the " + type_ +
                                                     " forward pass");
    }
    return tensors_.read(*name);
  }
  Matrix matrix(const std::string& suffix) { return as_matrix(tensor(suffix), suffix); }
  Eigen::RowVectorXd vec(const std::string& suffix, int64_t n) {
    return as_vector(tensor(suffix), n, suffix);
  }
  std::string layer(const char* pattern, int64_t n) const {
    std::string s = pattern;
    s.replace(s.find('N'), 1, std::to_string(n));
    return s;
  }

  // Rows of an embedding table for the ids.
  Matrix embed(const std::string& suffix, const std::vector<int64_t>& rows) {
    const Matrix table = matrix(suffix);
    Matrix out(static_cast<Eigen::Index>(rows.size()), table.cols());
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i] < 0 || rows[i] >= table.rows()) {
        throw_usage("--ids: id " + std::to_string(rows[i]) + " is past " + suffix + "'s " +
                    std::to_string(table.rows()) + " rows");
      }
      out.row(static_cast<Eigen::Index>(i)) = table.row(rows[i]);
    }
    return out;
  }

  // The engine's attention of layer n on x, with its output projection.
  Matrix attention(int64_t n, const Matrix& x) {
    LayerRequest lr;
    lr.checkpoint = req_.checkpoint;
    lr.layer = n;
    lr.arch = req_.arch;
    lr.max_bytes = req_.max_bytes;
    lr.max_elements = req_.max_elements;
    CheckpointLayer l = load_checkpoint_layer(lr);
    InputDocument doc;
    const std::string source = display_name(req_.checkpoint) + " layer " + std::to_string(n);
    doc.source = source;
    doc.settings_place = source;
    doc.X = Input{to_tensor(x), "X"};
    doc.params = std::move(l.params);
    doc.settings = l.settings;
    const Problem p = build_problem(std::move(doc));
    ComputeRequest creq;
    creq.threads = req_.threads;
    const Result r = compute(p, creq);
    return as_matrix(r.output, source);
  }

  std::string act(const char* key, const char* fallback) const {
    std::string a = config_.text(key);
    if (a.empty()) a = fallback;
    if (a != "silu" && a != "swish" && a != "gelu" && a != "gelu_new" && a != "gelu_pytorch_tanh" &&
        a != "relu") {
      throw_input(config_.place(), std::string("\"") + key + "\" \"" + message_text(a) +
                                       "\" is not an activation attn computes (silu, gelu, "
                                       "gelu_new, gelu_pytorch_tanh, relu)");
    }
    return a;
  }

  Matrix llama() {
    const int64_t d = config_.count("hidden_size");
    const double eps = config_.positive("rms_norm_eps", 1e-6);
    const std::string a = act("hidden_act", "silu");
    if (config_.flag("mlp_bias", false)) {
      throw_input(config_.place(), "\"mlp_bias\" true is not implemented in the forward pass");
    }
    Matrix h = embed("embed_tokens.weight", req_.ids);
    for (int64_t n = 0; n < req_.layer; ++n) {
      const Matrix x = rms_norm(h, vec(layer("layers.N.input_layernorm.weight", n), d), eps);
      h += attention(n, x);
      const Matrix m =
          rms_norm(h, vec(layer("layers.N.post_attention_layernorm.weight", n), d), eps);
      const Matrix gate = m * matrix(layer("layers.N.mlp.gate_proj.weight", n)).transpose();
      const Matrix up = m * matrix(layer("layers.N.mlp.up_proj.weight", n)).transpose();
      const Matrix inner =
          gate.unaryExpr([&](double v) { return activation(a, v); }).cwiseProduct(up);
      h += inner * matrix(layer("layers.N.mlp.down_proj.weight", n)).transpose();
    }
    return rms_norm(h, vec(layer("layers.N.input_layernorm.weight", req_.layer), d), eps);
  }

  Matrix gpt2() {
    const int64_t d = config_.count("n_embd");
    const double eps = config_.positive("layer_norm_epsilon", 1e-5);
    const std::string a = act("activation_function", "gelu_new");
    const auto s = static_cast<int64_t>(req_.ids.size());
    std::vector<int64_t> positions(static_cast<size_t>(s));
    for (int64_t i = 0; i < s; ++i) positions[static_cast<size_t>(i)] = i;
    Matrix h = embed("wte.weight", req_.ids) + embed("wpe.weight", positions);
    auto ln = [&](const Matrix& x, const std::string& p) {
      return layer_norm(x, vec(p + ".weight", d), vec(p + ".bias", d), eps);
    };
    for (int64_t n = 0; n < req_.layer; ++n) {
      h += attention(n, ln(h, layer("h.N.ln_1", n)));
      const Matrix m = ln(h, layer("h.N.ln_2", n));
      // Conv1D: x · W + b, W stored [in][out].
      const Matrix fc = (m * matrix(layer("h.N.mlp.c_fc.weight", n))).rowwise() +
                        vec(layer("h.N.mlp.c_fc.bias", n), 4 * d);
      const Matrix act_fc = fc.unaryExpr([&](double v) { return activation(a, v); });
      h += (act_fc * matrix(layer("h.N.mlp.c_proj.weight", n))).rowwise() +
           vec(layer("h.N.mlp.c_proj.bias", n), d);
    }
    return ln(h, layer("h.N.ln_1", req_.layer));
  }

  Matrix bert() {
    const int64_t d = config_.count("hidden_size");
    const double eps = config_.positive("layer_norm_eps", 1e-12);
    const std::string a = act("hidden_act", "gelu");
    const auto s = static_cast<int64_t>(req_.ids.size());
    // RoBERTa counts positions from the padding id + 1.
    int64_t first = 0;
    if (type_ == "roberta") {
      const double pad = config_.number("pad_token_id", 1);
      if (!(pad >= 0 && pad < 1e9 && pad == std::floor(pad))) {
        throw_input(config_.place(), "\"pad_token_id\" must be a non-negative integer");
      }
      first = static_cast<int64_t>(pad) + 1;
    }
    std::vector<int64_t> positions(static_cast<size_t>(s)), types(static_cast<size_t>(s), 0);
    for (int64_t i = 0; i < s; ++i) positions[static_cast<size_t>(i)] = first + i;
    const std::string e = "embeddings.";
    Matrix h = embed(e + "word_embeddings.weight", req_.ids) +
               embed(e + "position_embeddings.weight", positions) +
               embed(e + "token_type_embeddings.weight", types);
    auto ln = [&](const Matrix& x, const std::string& p) {
      return layer_norm(x, vec(p + ".weight", d), vec(p + ".bias", d), eps);
    };
    h = ln(h, e + "LayerNorm");
    for (int64_t n = 0; n < req_.layer; ++n) {
      const std::string p = layer("encoder.layer.N.", n);
      h = ln(attention(n, h) + h, p + "attention.output.LayerNorm");
      const Tensor<double> wi = tensor(p + "intermediate.dense.weight");
      const Matrix inter =
          (h * as_matrix(wi, p + "intermediate.dense.weight").transpose()).rowwise() +
          vec(p + "intermediate.dense.bias", wi.dim(0));
      const Matrix act_i = inter.unaryExpr([&](double v) { return activation(a, v); });
      const Matrix out = (act_i * matrix(p + "output.dense.weight").transpose()).rowwise() +
                         vec(p + "output.dense.bias", d);
      h = ln(out + h, p + "output.LayerNorm");
    }
    return h;
  }

  const ForwardRequest& req_;
  const Config& config_;
  std::string type_;
  Tensors tensors_;
};

}  // namespace

Tensor<double> attention_input(const ForwardRequest& req) {
  if (req.ids.empty()) throw_usage("--ids: no token ids");
  std::string type;
  const Config config = detail::open_config(req.checkpoint, req.arch, type);
  return Forward(req, config, type).run();
}

}  // namespace attn
