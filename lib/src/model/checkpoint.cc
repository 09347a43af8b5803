// One attention layer of a checkpoint as a problem for the engine: its
// projection weights as params (or, where the engine cannot project them,
// its heads computed from X) and its settings, from the architecture
// table's reading of config.json; and the config's opening.
#include "attn/checkpoint.h"

#include <cmath>
#include <optional>

#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "base/number_text.h"
#include "base/path.h"
#include "model/attention_block.h"
#include "model/config_json.h"
#include "model/forward_internal.h"
#include "model/model.h"

namespace attn {

namespace {

using detail::Config;
using detail::is_directory;
using detail::is_file;
using detail::join;
using detail::parent;
using model::At;
using model::Matrix;
using model::ModelConfig;
using model::Role;

// Whether the engine computes the layer's Q, K and V from X through W_q,
// W_k and W_v: plain (or fused) projections, RMS Q/K norms shared by the
// heads, nothing between.
bool engine_projects(const ModelConfig& c) {
  if (c.qkv == model::QkvLayout::kLatent || c.clip > 0) return false;
  switch (c.qk_norm) {
    case model::QkNorm::kNone:
      return true;
    case model::QkNorm::kPerHead:
      return c.qk_norm_kind == model::NormKind::kRms || c.qk_norm_kind == model::NormKind::kRmsUnit;
    default:
      return false;
  }
}

class LayerReader {
 public:
  LayerReader(const model::Model& m, int64_t n) : m_(m), c_(m.config()), n_(n) {}

  CheckpointLayer read() {
    out_.arch = c_.model_type;
    settings();
    if (engine_projects(c_)) {
      projections();
    } else {
      out_.heads_from_x = true;
    }
    put_weight("W_o", "b_o", {Role::kO, n_});
    out_.title =
        c_.model_type + " layer " + std::to_string(n_) + " (" + display_name(m_.name()) + ")";
    out_.description = "Attention of layer " + std::to_string(n_) + " of " +
                       m_.weights().tensors().files() + " (" + c_.model_type +
                       "); tensors read: " + read_ + "; config: " + c_.fields + ".";
    if (out_.heads_from_x) {
      out_.description += " Q, K and V are the layer's own projections of X (" + why_heads() +
                          "), given to the attention as computed.";
    }
    const std::string particular = particulars();
    if (!particular.empty()) out_.description += " This layer: " + particular + ".";
    return std::move(out_);
  }

  // What this layer does that the family's others may not, or that its
  // family does and others do not: the trace's header says it.
  std::string particulars() const {
    const model::LayerPlan& plan = c_.plan[static_cast<size_t>(n_)];
    std::vector<std::string> p;
    if (c_.qkv == model::QkvLayout::kLatent) {
      p.push_back("latent attention (Q through rank " +
                  (c_.q_lora_rank ? std::to_string(c_.q_lora_rank) : std::string("none")) +
                  ", K and V from a latent of " + std::to_string(c_.kv_lora_rank) + ", " +
                  std::to_string(c_.rope_dim) + " rotary features of each head's " +
                  std::to_string(c_.head_dim) + " first, the rotary key shared by the heads)");
    }
    if (c_.positions == model::Positions::kRotary && !plan.rope) {
      p.push_back("no RoPE (a NoPE layer" +
                  std::string(c_.row->no_rope_key ? std::string(", ") + c_.row->no_rope_key : "") +
                  ")");
    }
    if (plan.sliding) p.push_back("a sliding window of " + std::to_string(c_.window) + " keys");
    if (m_.has(Role::kSinks)) p.push_back("a sink logit per head (sinks)");
    if (c_.clip > 0) p.push_back("Q, K and V clipped to ±" + format_shortest(c_.clip));
    std::string s;
    for (const std::string& x : p) s += (s.empty() ? "" : "; ") + x;
    return s;
  }

 private:
  std::string why_heads() const {
    if (c_.qkv == model::QkvLayout::kLatent) return "multi-head latent attention";
    if (c_.clip > 0) return "clipped to ±" + format_shortest(c_.clip);
    return "Q/K norms the engine does not compute";
  }

  void settings() {
    const model::LayerPlan& plan = c_.plan[static_cast<size_t>(n_)];
    RunSettings& s = out_.settings;
    s.heads = c_.heads;
    if (c_.kv_heads != c_.heads) s.kv_heads = c_.kv_heads;
    s.causal = c_.causal;
    if (c_.positions == model::Positions::kRotary && plan.rope) {
      s.rope = true;
      s.rope_theta = plan.rope_theta;
      s.rope_layout = c_.rope_layout;
      if (c_.rope_dims != c_.head_dim) s.rope_dims = c_.rope_dims;
      s.rope_scaling = plan.scaling;
    }
    if (plan.sliding) s.window = std::pair<int64_t, int64_t>{c_.window - 1, 0};
    if (c_.softcap > 0) s.softcap = c_.softcap;
    if (std::abs(plan.scale * std::sqrt(static_cast<double>(c_.head_dim)) - 1) > 1e-15) {
      s.scale = Scale{ScaleKind::kValue, plan.scale};
    }
    if (m_.has(Role::kSinks)) {
      const model::Vec v = m_.vector({Role::kSinks, n_});
      s.sinks = std::vector<double>(v.data(), v.data() + v.size());
      note(m_.weights().weight_name({Role::kSinks, n_}));
    }
    // The weights keep the file's layout; GPT-2's Conv1D is already math's.
    s.params_layout = c_.conv1d ? ParamsLayout::kMath : ParamsLayout::kTorch;
  }

  void note(const std::string& name) { read_ += (read_.empty() ? "" : ", ") + name; }

  Input input(const std::string& name) {
    note(name);
    const detail::TensorSource& t = m_.weights().tensors();
    return Input{t.read(name), "", t.origin(name)};
  }

  void put(const char* param, Input in) {
    in.place = param;
    out_.params.push_back(NamedInput{param, std::move(in)});
  }

  void put_weight(const char* w, const char* b, const At& at) {
    put(w, input(m_.weights().weight_name(at)));
    if (const auto bias = m_.weights().bias_name(at)) put(b, input(*bias));
  }

  // Rows (torch layout) or columns (Conv1D) `starts[i] .. + width` of a
  // fused weight, side by side; a bias's elements the same way.
  static Input cut(const Input& in, const std::vector<int64_t>& starts, int64_t width,
                   bool columns) {
    const Tensor<double>& t = in.tensor;
    const auto parts = static_cast<int64_t>(starts.size());
    Input out{Tensor<double>(), in.place, std::nullopt};
    if (t.rank() == 1 || columns) {
      const int64_t rows = t.rank() == 1 ? 1 : t.dim(0), cols = t.dim(t.rank() - 1);
      out.tensor = t.rank() == 1 ? Tensor<double>(Shape{parts * width})
                                 : Tensor<double>(Shape{rows, parts * width});
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t p = 0; p < parts; ++p) {
          for (int64_t j = 0; j < width; ++j) {
            out.tensor[r * parts * width + p * width + j] =
                t[r * cols + starts[static_cast<size_t>(p)] + j];
          }
        }
      }
      // One block of columns keeps its origin: --emit-pytorch loads it
      // and slices as attn did (GPT-2's c_attn).
      if (in.origin && parts > 0 && (t.rank() == 1 || columns)) {
        bool contiguous = true;
        for (int64_t p = 1; p < parts; ++p) {
          contiguous = contiguous &&
                       starts[static_cast<size_t>(p)] == starts[static_cast<size_t>(p - 1)] + width;
        }
        if (contiguous) {
          out.origin = in.origin;
          out.origin->first_column = starts[0];
          out.origin->columns = parts * width;
        }
      }
      return out;
    }
    const int64_t cols = t.dim(1);
    out.tensor = Tensor<double>(Shape{parts * width, cols});
    for (int64_t p = 0; p < parts; ++p) {
      for (int64_t j = 0; j < width; ++j) {
        const int64_t from = (starts[static_cast<size_t>(p)] + j) * cols;
        std::copy(t.data() + from, t.data() + from + cols,
                  out.tensor.data() + (p * width + j) * cols);
      }
    }
    return out;
  }

  void projections() {
    if (c_.qkv == model::QkvLayout::kSeparate) {
      put_weight("W_q", "b_q", {Role::kQ, n_});
      put_weight("W_k", "b_k", {Role::kK, n_});
      put_weight("W_v", "b_v", {Role::kV, n_});
    } else {
      const At at{Role::kQkv, n_};
      const Input w = input(m_.weights().weight_name(at));
      const model::FusedColumns f = model::fused_columns(c_);
      put("W_q", cut(w, f.q, c_.head_dim, c_.conv1d));
      put("W_k", cut(w, f.k, c_.head_dim, c_.conv1d));
      put("W_v", cut(w, f.v, c_.v_head_dim, c_.conv1d));
      if (const auto b = m_.weights().bias_name(at)) {
        const Input bias = input(*b);
        put("b_q", cut(bias, f.q, c_.head_dim, true));
        put("b_k", cut(bias, f.k, c_.head_dim, true));
        put("b_v", cut(bias, f.v, c_.v_head_dim, true));
      }
    }
    if (c_.qk_norm == model::QkNorm::kPerHead) {
      out_.settings.qk_norm = c_.qk_eps;
      for (const auto& [role, param] :
           {std::pair{Role::kQNorm, "q_norm"}, {Role::kKNorm, "k_norm"}}) {
        Input in = input(m_.weights().weight_name({role, n_}));
        // Gemma 3's RMSNorm scales by (1 + w), in float64 as transformers
        // does it in float32: the same one addition.
        if (c_.qk_norm_kind == model::NormKind::kRmsUnit) {
          Tensor<double>& w = in.tensor;
          for (int64_t i = 0; i < w.size(); ++i) w[i] = 1.0 + w[i];
          if (in.origin) in.origin->add = 1;
        }
        put(param, std::move(in));
      }
    }
  }

  const model::Model& m_;
  const ModelConfig& c_;
  int64_t n_;
  CheckpointLayer out_;
  std::string read_;
};

// The checkpoint's config and the tensors of the layer's attention.
model::Model open_model(const LayerRequest& req) {
  return model::Model(req.checkpoint, req.arch, req.max_bytes, req.max_elements, DType::kF64, 0,
                      req.layer);
}

}  // namespace

namespace detail {

Config open_config(const std::string& checkpoint, const std::string& arch_flag,
                   std::string& model_type, const OpenCheckpointFile& open) {
  const bool dir = open || is_directory(checkpoint);
  if (!dir && !is_file(checkpoint)) {
    if (path::exists(checkpoint)) {
      throw_input(checkpoint,
                  "not a checkpoint: --checkpoint takes a directory, a .safetensors file or a "
                  ".gguf file, and this is none of them (a device or a pipe?)");
    }
    // "olama:llama3.2": a store's name mistyped, more likely than a file.
    const size_t colon = checkpoint.find(':');
    const bool like_name = colon != std::string::npos && colon > 0 && checkpoint.find('/') > colon;
    throw_file(checkpoint, std::string("cannot open: no such file or directory") +
                               (like_name ? "; ollama:NAME and hf:ORG/NAME name the models of "
                                            "stores (attn models lists them)"
                                          : ""));
  }
  const std::string config_path = join(dir ? checkpoint : parent(checkpoint), "config.json");
  json::Value cfg = json::Value::object();
  std::string place = config_path;
  std::optional<std::string> text;
  if (open) {
    if (const std::optional<OpenedFile> f = open("config.json")) {
      text = read_file(*f, {}, 100'000'000);
    }
  } else if (is_file(config_path)) {
    text = read_file(config_path, {}, 100'000'000);
  }
  if (text) {
    cfg = json::parse(*text, config_path);
    if (!cfg.is_object()) throw_input(config_path, "must be a JSON object");
  } else if (arch_flag.empty()) {
    throw_usage("--checkpoint " + checkpoint + ": no config.json at " + config_path +
                "; put the model's config.json there (or give --arch and the settings as flags)");
  } else {
    place = "--arch " + arch_flag + " (no config.json)";
  }
  Config config(std::move(cfg), place);
  model_type = arch_flag.empty() ? config.text("model_type") : arch_flag;
  if (model_type.empty()) {
    throw_input(place, "has no \"model_type\"; give --arch (" + model::row_names() + ")");
  }
  if (!model::find_row(model_type)) {
    throw_usage("architecture \"" + message_text(model_type) + "\" is not one attn reads (" +
                model::row_names() + ")");
  }
  // --arch is for checkpoints without a config: over one, it would read the
  // weights as another architecture without a word.
  if (!arch_flag.empty()) {
    const std::string written = config.text("model_type");
    if (!written.empty() && written != arch_flag) {
      throw_usage("--arch " + arch_flag + ": " + config_path + " says model_type \"" +
                  message_text(written) +
                  "\"; drop --arch (it names the architecture of a checkpoint that has no "
                  "config.json)");
    }
  }
  return config;
}

}  // namespace detail

CheckpointLayer load_checkpoint_layer(const LayerRequest& req) {
  const model::Model m = open_model(req);
  return LayerReader(m, req.layer).read();
}

LayerHeads checkpoint_layer_heads(const LayerRequest& req, const Tensor<double>& x) {
  const model::Model m = open_model(req);
  const ModelConfig& c = m.config();
  if (x.rank() != 2 || x.dim(1) != c.hidden) {
    throw_input(display_name(req.checkpoint),
                "layer " + std::to_string(req.layer) + " takes X of [tokens][" +
                    std::to_string(c.hidden) + "] (hidden_size), got shape " +
                    shape_string(x.shape()));
  }
  const Matrix in = Eigen::Map<const Matrix>(x.data(), x.dim(0), x.dim(1));
  model::Heads h = model::project_heads(m, req.layer, in);
  const std::string place = display_name(req.checkpoint) + " layer " + std::to_string(req.layer);
  return LayerHeads{Input{model::to_tensor(h.q), place + " Q"},
                    Input{model::to_tensor(h.k), place + " K"},
                    Input{model::to_tensor(h.v), place + " V"}};
}

std::vector<std::string> architecture_names() {
  std::vector<std::string> names;
  for (const model::Row& r : model::rows()) names.emplace_back(r.model_type);
  return names;
}

namespace {

// A row's layer tensors, as "model.layers.N.{input_layernorm, ...}".
std::string tensor_list(const model::Row& r) {
  std::string prefix, list;
  for (const model::TensorName& t : r.tensors) {
    const size_t at = t.path.find("{L}.");
    if (at == std::string::npos || t.path.empty()) continue;
    prefix = t.path.substr(0, at) + "N.";
    std::string rest = t.path.substr(at + 4);
    for (size_t e = rest.find("{E}"); e != std::string::npos; e = rest.find("{E}"))
      rest.replace(e, 3, "E");
    for (size_t h = rest.find("{H}"); h != std::string::npos; h = rest.find("{H}"))
      rest.replace(h, 3, "H");
    list += (list.empty() ? "" : ", ") + rest;
  }
  return prefix + "{" + list + "}";
}

std::string field_list(const model::Row& r) {
  std::string s;
  auto add = [&](const char* k) {
    if (k && *k && s.find(k) == std::string::npos) s += (s.empty() ? "" : ", ") + std::string(k);
  };
  for (const model::Key* k :
       {&r.layers, &r.hidden, &r.heads, &r.kv_heads, &r.intermediate, &r.eps, &r.act, &r.vocab}) {
    add(k->name);
  }
  if (r.reads_head_dim) add("head_dim");
  if (r.positions == model::Positions::kRotary) {
    add(r.rope_theta.name);
    add(r.partial_rotary.name);
    add("rope_scaling");
  }
  for (const char* k :
       {r.attention_bias_key, r.output_bias_key, r.mlp_bias_key, r.clip_key, r.softcap_key,
        r.residual_multiplier_key, r.logit_key, r.no_rope_key, r.norm_topk_key}) {
    add(k);
  }
  if (r.sliding != model::Sliding::kNever) add("sliding_window");
  if (r.reads_layer_types) add("layer_types");
  if (r.router != model::Router::kNone) {
    add(r.experts.name);
    add(r.top_k.name);
  }
  add("tie_word_embeddings");
  return s;
}

}  // namespace

const std::vector<ArchitectureInfo>& architectures() {
  static const std::vector<ArchitectureInfo> list = [] {
    std::vector<ArchitectureInfo> out;
    for (const model::Row& r : model::rows()) {
      out.push_back({r.model_type, tensor_list(r), field_list(r)});
    }
    return out;
  }();
  return list;
}

}  // namespace attn
