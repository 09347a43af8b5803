// Hugging Face checkpoints: finding a layer's tensors in one or more
// safetensors files and turning the architecture's config.json into
// attention settings.
#include "attn/checkpoint.h"

#include <sys/stat.h>

#include <cmath>
#include <memory>
#include <optional>

#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "attn/safetensors.h"
#include "base/number_text.h"
#include "model/checkpoint_files.h"

namespace attn {

namespace {

using detail::Config;
using detail::is_directory;
using detail::is_file;
using detail::join;
using detail::parent;
using detail::Tensors;

enum class Family { kLlama, kGpt2, kBert };

struct Arch {
  const char* name;
  Family family;
};

constexpr Arch kArchs[] = {
    {"llama", Family::kLlama},  {"mistral", Family::kLlama},     {"mixtral", Family::kLlama},
    {"qwen2", Family::kLlama},  {"qwen3", Family::kLlama},       {"gemma", Family::kLlama},
    {"gemma2", Family::kLlama}, {"gemma3_text", Family::kLlama}, {"gpt2", Family::kGpt2},
    {"bert", Family::kBert},    {"roberta", Family::kBert},
};

// Architectures whose attention norms each head of Q and K (q_norm,
// k_norm) before RoPE; Gemma 3's norm scales by 1 + w.
bool has_qk_norm(const std::string& a) { return a == "qwen3" || a == "gemma3_text"; }

std::string arch_names() {
  std::string s;
  for (const Arch& a : kArchs) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

// Columns [from, from + n) of a [rows][cols] matrix, or elements of a
// vector; its origin says so.
Input columns(const Input& in, int64_t from, int64_t n) {
  const Tensor<double>& t = in.tensor;
  Input out{Tensor<double>(), in.place, in.origin};
  if (out.origin) {
    out.origin->first_column = from;
    out.origin->columns = n;
  }
  if (t.rank() == 1) {
    out.tensor = Tensor<double>(Shape{n}, Values<double>(t.data() + from, t.data() + from + n));
    return out;
  }
  const int64_t rows = t.dim(0), cols = t.dim(1);
  out.tensor = Tensor<double>(Shape{rows, n});
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < n; ++c) out.tensor[r * n + c] = t[r * cols + from + c];
  }
  return out;
}

class LayerReader {
 public:
  LayerReader(const LayerRequest& req, const Tensors& tensors, const Config& config, Arch arch,
              std::vector<detail::InPlaceWeight>* in_place)
      : req_(req), tensors_(tensors), config_(config), arch_(arch), in_place_(in_place) {}

  CheckpointLayer read() {
    out_.arch = arch_.name;
    switch (arch_.family) {
      case Family::kLlama:
        llama();
        break;
      case Family::kGpt2:
        gpt2();
        break;
      case Family::kBert:
        bert();
        break;
    }
    out_.title = std::string(arch_.name) + " layer " + std::to_string(req_.layer) + " (" +
                 display_name(req_.checkpoint) + ")";
    out_.description = "Attention of layer " + std::to_string(req_.layer) + " of " +
                       tensors_.files() + " (" + arch_.name + "); tensors read: " + read_ +
                       "; config: " + fields_ + ".";
    return std::move(out_);
  }

 private:
  // "model.layers.3.self_attn.q_proj.weight" for "layers.N.self_attn.q_proj.weight".
  std::optional<std::string> name_of(const std::string& pattern) const {
    std::string s = pattern;
    s.replace(s.find('N'), 1, std::to_string(req_.layer));
    return tensors_.find_suffix(s);
  }

  // The tensor, with its file as its origin.
  Input need(const std::string& pattern) {
    const auto name = name_of(pattern);
    if (!name) {
      std::string s = pattern;
      s.replace(s.find('N'), 1, std::to_string(req_.layer));
      throw_input(display_name(req_.checkpoint), "no tensor named " + s + " (or ending in ." + s +
                                                     ") for a " + arch_.name +
                                                     " layer; is the architecture right?");
    }
    read_ += (read_.empty() ? "" : ", ") + *name;
    return Input{tensors_.read(*name), "", tensors_.origin(*name)};
  }

  // A projection matrix, used whole: read into params, or named in
  // in_place_ when the caller multiplies it where it lies in the file.
  void matrix(const char* param, const std::string& pattern) {
    if (!in_place_) {
      put(param, need(pattern));
      return;
    }
    const auto name = name_of(pattern);
    if (!name) {
      need(pattern);  // throws: no such tensor
      return;
    }
    read_ += (read_.empty() ? "" : ", ") + *name;
    in_place_->push_back(detail::InPlaceWeight{param, *name, tensors_.shape(*name)});
  }

  // The shape of a parameter read so far, from params or in_place_.
  std::optional<Shape> shape_of(const std::string& param) const {
    for (const NamedInput& p : out_.params) {
      if (p.name == param) return p.input.tensor.shape();
    }
    if (in_place_) {
      for (const detail::InPlaceWeight& w : *in_place_) {
        if (w.param == param) return w.shape;
      }
    }
    return std::nullopt;
  }

  void maybe(const std::string& pattern, const char* param) {
    if (name_of(pattern)) put(param, need(pattern));
  }

  void put(const char* param, Input in) {
    in.place = param;
    out_.params.push_back(NamedInput{param, std::move(in)});
  }

  int64_t field(const char* key, int64_t fallback = 0, bool required = true) {
    note(key);
    return required ? config_.count(key) : config_.count(key, fallback);
  }

  void note(const char* key) {
    if (config_.has(key)) fields_ += (fields_.empty() ? "" : ", ") + std::string(key);
  }

  void check_layer(int64_t layers) {
    if (req_.layer < 0 || req_.layer >= layers) {
      throw_usage("--layer " + std::to_string(req_.layer) + ": the model has " +
                  std::to_string(layers) + " layers (0 to " + std::to_string(layers - 1) + ")");
    }
  }

  void llama() {
    RunSettings& s = out_.settings;
    const int64_t layers = field("num_hidden_layers");
    check_layer(layers);
    const int64_t heads = field("num_attention_heads");
    const int64_t hidden = field("hidden_size");
    const int64_t kv = field("num_key_value_heads", heads, false);
    const int64_t head_dim = field("head_dim", hidden / heads, false);
    if (heads % kv != 0) {
      throw_input(config_.place(), "num_attention_heads " + std::to_string(heads) +
                                       " is not a multiple of num_key_value_heads " +
                                       std::to_string(kv));
    }
    s.heads = heads;
    if (kv != heads) s.kv_heads = kv;
    s.rope = true;
    s.rope_layout = RopeLayout::kHalf;
    const bool is_sliding = sliding();
    rope(s, head_dim, is_sliding);
    s.causal = true;
    s.params_layout = ParamsLayout::kTorch;
    const std::string a = arch_.name;
    if (a == "gemma2" || a == "gemma3_text") {
      if (config_.has("query_pre_attn_scalar")) {
        note("query_pre_attn_scalar");
        s.scale =
            Scale{ScaleKind::kValue, 1.0 / std::sqrt(config_.positive("query_pre_attn_scalar"))};
      }
      if (config_.has("attn_logit_softcapping")) {
        note("attn_logit_softcapping");
        s.softcap = config_.positive("attn_logit_softcapping");
      }
    }
    if (is_sliding) {
      const int64_t w = field("sliding_window");
      s.window = std::pair<int64_t, int64_t>{w - 1, 0};
    }
    qk_norm(s, head_dim);
    matrix("W_q", "layers.N.self_attn.q_proj.weight");
    matrix("W_k", "layers.N.self_attn.k_proj.weight");
    matrix("W_v", "layers.N.self_attn.v_proj.weight");
    maybe("layers.N.self_attn.q_proj.bias", "b_q");
    maybe("layers.N.self_attn.k_proj.bias", "b_k");
    maybe("layers.N.self_attn.v_proj.bias", "b_v");
    matrix("W_o", "layers.N.self_attn.o_proj.weight");
    maybe("layers.N.self_attn.o_proj.bias", "b_o");
    check_width("W_q", heads * head_dim, "num_attention_heads × head_dim");
    check_width("W_k", kv * head_dim, "num_key_value_heads × head_dim");
    check_width("W_v", kv * head_dim, "num_key_value_heads × head_dim");
    check_inputs(hidden, "hidden_size", {"W_q", "W_k", "W_v"});
    check_output(hidden, "hidden_size", heads * head_dim);
  }

  // Qwen 3 and Gemma 3 norm each head of Q and K; any other architecture
  // holding q_norm weights is not the one named.
  void qk_norm(RunSettings& s, int64_t head_dim) {
    const std::string q = "layers.N.self_attn.q_norm.weight",
                      k = "layers.N.self_attn.k_norm.weight";
    if (!has_qk_norm(arch_.name)) {
      if (const auto name = name_of(q)) {
        throw_input(display_name(req_.checkpoint),
                    "holds " + *name + ", a Q/K norm, which " + arch_.name +
                        " attention does not have (qwen3 and gemma3_text do); is the "
                        "architecture right?");
      }
      return;
    }
    note("rms_norm_eps");
    s.qk_norm = config_.positive("rms_norm_eps", 1e-6);
    for (const auto& [pattern, param] : {std::pair{q, "q_norm"}, std::pair{k, "k_norm"}}) {
      Input in = need(pattern);
      Tensor<double>& w = in.tensor;
      if (w.rank() != 1 || w.dim(0) != head_dim) {
        throw_input(display_name(req_.checkpoint),
                    std::string(param) + " has shape " + shape_string(w.shape()) +
                        " but head_dim from the config is " + std::to_string(head_dim));
      }
      // Gemma 3's RMSNorm scales by (1 + w), in float64 as transformers
      // does it in float32: the same one addition.
      if (arch_.name == std::string("gemma3_text")) {
        for (int64_t i = 0; i < w.size(); ++i) w[i] = 1.0 + w[i];
        if (in.origin) in.origin->add = 1;
      }
      put(param, std::move(in));
    }
  }

  // RoPE's base and scaling for this layer: rope_theta and rope_scaling,
  // or v5's rope_parameters (one object, or one per layer type); Gemma 3's
  // sliding layers turn at rope_local_base_freq, unscaled.
  void rope(RunSettings& s, int64_t head_dim, bool is_sliding) {
    const int64_t max_pos =
        config_.has("max_position_embeddings") ? config_.count("max_position_embeddings") : 0;
    const int64_t original = config_.has("original_max_position_embeddings")
                                 ? config_.count("original_max_position_embeddings")
                                 : 0;
    double theta = 10000.0;
    double partial = 1.0;
    const json::Value* scaling = nullptr;
    std::string scaling_place = config_.place() + ": rope_scaling";
    if (const json::Value* params = config_.get("rope_parameters")) {
      note("rope_parameters");
      if (!params->is_object())
        throw_input(config_.place(), "\"rope_parameters\" must be an object");
      const json::Value* entry = params;
      scaling_place = config_.place() + ": rope_parameters";
      if (params->find("full_attention") || params->find("sliding_attention")) {
        const char* type = is_sliding ? "sliding_attention" : "full_attention";
        entry = params->find(type);
        if (!entry || !entry->is_object()) {
          throw_input(config_.place(), std::string("\"rope_parameters\" has no \"") + type +
                                           "\" object, and layer " + std::to_string(req_.layer) +
                                           " is " + type);
        }
        scaling_place += std::string(".") + type;
      }
      const Config e(*entry, scaling_place);
      theta = e.positive("rope_theta", theta);
      if (e.has("partial_rotary_factor")) partial = e.number("partial_rotary_factor");
      if (e.has("rope_type") || e.has("type")) scaling = entry;
    } else {
      note("rope_theta");
      theta = config_.positive("rope_theta", theta);
      if (config_.has("rope_scaling")) {
        note("rope_scaling");
        scaling = config_.get("rope_scaling");
      }
      if (arch_.name == std::string("gemma3_text") && is_sliding) {
        // transformers' Gemma 3: the local rotary embedding is a default one.
        note("rope_local_base_freq");
        theta = config_.positive("rope_local_base_freq", 10000.0);
        scaling = nullptr;
      }
    }
    s.rope_theta = theta;
    if (config_.has("partial_rotary_factor")) {
      note("partial_rotary_factor");
      partial = config_.number("partial_rotary_factor");
    }
    if (partial != 1.0) {
      if (!(partial > 0 && partial <= 1)) {
        throw_input(config_.place(),
                    "\"partial_rotary_factor\" must be in (0, 1], got " + format_shortest(partial));
      }
      // transformers: dim = int(head_dim * partial_rotary_factor).
      const auto dims = static_cast<int64_t>(static_cast<double>(head_dim) * partial);
      if (dims < 2 || dims % 2 != 0) {
        throw_input(config_.place(), "\"partial_rotary_factor\" " + format_shortest(partial) +
                                         " rotates " + std::to_string(dims) + " of head_dim " +
                                         std::to_string(head_dim) +
                                         " dimensions; RoPE rotates an even number, at least 2");
      }
      s.rope_dims = dims;
    }
    if (scaling) {
      if (max_pos) note("max_position_embeddings");
      s.rope_scaling = parse_rope_scaling(*scaling, scaling_place, max_pos, original,
                                          {"rope_theta", "partial_rotary_factor"});
    }
  }

  // The projections' input width (torch layout [out][in]) is the model's
  // hidden size.
  void check_inputs(int64_t hidden, const char* field, std::initializer_list<const char*> params) {
    for (const char* param : params) {
      const std::optional<Shape> t = shape_of(param);
      if (t && (t->size() != 2 || (*t)[1] != hidden)) {
        throw_input(display_name(req_.checkpoint),
                    std::string(param) + " has shape " + shape_string(*t) + " but " + field +
                        " from the config is " + std::to_string(hidden) + " columns");
      }
    }
  }

  // W_o (torch layout) maps the heads' width back to the hidden size.
  void check_output(int64_t hidden, const char* field, int64_t heads_width) {
    const std::optional<Shape> t = shape_of("W_o");
    if (t && (t->size() != 2 || (*t)[0] != hidden || (*t)[1] != heads_width)) {
      throw_input(display_name(req_.checkpoint),
                  "W_o has shape " + shape_string(*t) + " but the config gives [" +
                      std::to_string(hidden) + "][" + std::to_string(heads_width) + "] (" + field +
                      ", heads × head_dim)");
    }
  }

  // Whether this layer attends in a sliding window.
  bool sliding() {
    if (const json::Value* types = config_.get("layer_types")) {
      note("layer_types");
      if (!types->is_array() || static_cast<int64_t>(types->size()) <= req_.layer) {
        throw_input(config_.place(), "\"layer_types\" must list every layer");
      }
      // Every entry is checked, not only this layer's: a misspelt one
      // elsewhere says the file is not what the model was trained with.
      for (size_t i = 0; i < types->size(); ++i) {
        const json::Value t = types->element(i);
        if (!t.is_string() ||
            (t.as_string() != "sliding_attention" && t.as_string() != "full_attention")) {
          throw_input(config_.place(), "\"layer_types\"[" + std::to_string(i) + "] is " +
                                           json::describe(t) +
                                           "; expected \"full_attention\" or "
                                           "\"sliding_attention\"");
        }
      }
      return types->element(static_cast<size_t>(req_.layer)).as_string() == "sliding_attention";
    }
    if (!config_.has("sliding_window")) return false;
    const std::string a = arch_.name;
    if (a == "mistral" || a == "mixtral") return true;
    if (a == "gemma2") return req_.layer % 2 == 0;
    if (a == "gemma3_text") {
      // transformers: sliding unless (i + 1) is a multiple of the pattern.
      note("sliding_window_pattern");
      return (req_.layer + 1) % config_.count("sliding_window_pattern", 6) != 0;
    }
    if (a == "qwen2" || a == "qwen3") {
      note("use_sliding_window");
      note("max_window_layers");
      return config_.flag("use_sliding_window", false) &&
             req_.layer >= config_.count("max_window_layers", 0);
    }
    return false;
  }

  void check_width(const char* param, int64_t want, const char* what) {
    const std::optional<Shape> t = shape_of(param);
    // torch layout: [out][in]
    if (t && (t->size() != 2 || (*t)[0] != want)) {
      throw_input(display_name(req_.checkpoint),
                  std::string(param) + " has shape " + shape_string(*t) + " but " + what +
                      " from the config is " + std::to_string(want) + " rows");
    }
  }

  void gpt2() {
    RunSettings& s = out_.settings;
    const int64_t layers = field("n_layer");
    check_layer(layers);
    const int64_t heads = field("n_head");
    const int64_t hidden = field("n_embd");
    if (hidden % heads != 0) {
      throw_input(config_.place(), "n_embd is not a multiple of n_head");
    }
    s.heads = heads;
    s.causal = true;
    s.params_layout = ParamsLayout::kMath;
    note("scale_attn_weights");
    note("scale_attn_by_inverse_layer_idx");
    const bool scaled = config_.flag("scale_attn_weights", true);
    const bool by_layer = config_.flag("scale_attn_by_inverse_layer_idx", false);
    if (!scaled || by_layer) {
      double f = scaled ? 1.0 / std::sqrt(static_cast<double>(hidden / heads)) : 1.0;
      if (by_layer) f /= static_cast<double>(req_.layer + 1);
      s.scale = Scale{ScaleKind::kValue, f};
    }
    // c_attn is GPT-2's Conv1D: [in][3·out] in math layout, Q, K, V side by side.
    const Input wi = need("h.N.attn.c_attn.weight");
    const Tensor<double>& w = wi.tensor;
    if (w.rank() != 2 || w.dim(0) != hidden || w.dim(1) != 3 * hidden) {
      throw_input(display_name(req_.checkpoint),
                  "c_attn.weight has shape " + shape_string(w.shape()) + "; expected [" +
                      std::to_string(hidden) + "][" + std::to_string(3 * hidden) + "] (n_embd)");
    }
    put("W_q", columns(wi, 0, hidden));
    put("W_k", columns(wi, hidden, hidden));
    put("W_v", columns(wi, 2 * hidden, hidden));
    if (name_of("h.N.attn.c_attn.bias")) {
      const Input bi = need("h.N.attn.c_attn.bias");
      const Tensor<double>& b = bi.tensor;
      if (b.rank() != 1 || b.dim(0) != 3 * hidden) {
        throw_input(display_name(req_.checkpoint), "c_attn.bias has shape " +
                                                       shape_string(b.shape()) + "; expected [" +
                                                       std::to_string(3 * hidden) + "]");
      }
      put("b_q", columns(bi, 0, hidden));
      put("b_k", columns(bi, hidden, hidden));
      put("b_v", columns(bi, 2 * hidden, hidden));
    }
    matrix("W_o", "h.N.attn.c_proj.weight");
    maybe("h.N.attn.c_proj.bias", "b_o");
  }

  void bert() {
    RunSettings& s = out_.settings;
    const int64_t layers = field("num_hidden_layers");
    check_layer(layers);
    const int64_t heads = field("num_attention_heads");
    s.heads = heads;
    const int64_t hidden = field("hidden_size");
    if (hidden % heads != 0) {
      throw_input(config_.place(), "hidden_size is not a multiple of num_attention_heads");
    }
    note("position_embedding_type");
    const std::string pe = config_.text("position_embedding_type");
    if (!pe.empty() && pe != "absolute") {
      throw_input(config_.place(), "position_embedding_type \"" + message_text(pe) +
                                       "\" adds learned relative scores attn does not compute; "
                                       "only \"absolute\" is supported");
    }
    note("is_decoder");
    s.causal = config_.flag("is_decoder", false);
    s.params_layout = ParamsLayout::kTorch;
    const std::string p = "encoder.layer.N.attention.";
    matrix("W_q", p + "self.query.weight");
    maybe(p + "self.query.bias", "b_q");
    matrix("W_k", p + "self.key.weight");
    maybe(p + "self.key.bias", "b_k");
    matrix("W_v", p + "self.value.weight");
    maybe(p + "self.value.bias", "b_v");
    matrix("W_o", p + "output.dense.weight");
    maybe(p + "output.dense.bias", "b_o");
    check_width("W_q", hidden, "hidden_size");
    check_width("W_k", hidden, "hidden_size");
    check_width("W_v", hidden, "hidden_size");
    check_inputs(hidden, "hidden_size", {"W_q", "W_k", "W_v"});
    check_output(hidden, "hidden_size", hidden);
  }

  const LayerRequest& req_;
  const Tensors& tensors_;
  const Config& config_;
  Arch arch_;
  std::vector<detail::InPlaceWeight>* in_place_;
  CheckpointLayer out_;
  std::string read_, fields_;
};

}  // namespace

namespace detail {

Config open_config(const std::string& checkpoint, const std::string& arch_flag,
                   std::string& model_type) {
  const bool dir = is_directory(checkpoint);
  if (!dir && !is_file(checkpoint)) {
    struct stat st {};
    if (::stat(checkpoint.c_str(), &st) == 0) {
      throw_input(checkpoint,
                  "not a checkpoint: --checkpoint takes a directory or a .safetensors file, "
                  "and this is neither (a device or a pipe?)");
    }
    throw_file(checkpoint, "cannot open: no such file or directory");
  }
  const std::string config_path = join(dir ? checkpoint : parent(checkpoint), "config.json");
  json::Value cfg = json::Value::object();
  std::string place = config_path;
  if (is_file(config_path)) {
    cfg = json::parse(read_file(config_path, {}, 100'000'000), config_path);
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
    throw_input(place, "has no \"model_type\"; give --arch (" + arch_names() + ")");
  }
  bool known = false;
  for (const Arch& a : kArchs) known = known || model_type == a.name;
  if (!known) {
    throw_usage("architecture \"" + message_text(model_type) + "\" is not one attn reads (" +
                arch_names() + ")");
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

CheckpointLayer read_layer(const LayerRequest& req, const Tensors& tensors, const Config& config,
                           const std::string& model_type, std::vector<InPlaceWeight>* in_place) {
  for (const Arch& a : kArchs) {
    if (model_type == a.name) return LayerReader(req, tensors, config, a, in_place).read();
  }
  throw_internal("read_layer: model type " + model_type + " was not checked by open_config");
}

}  // namespace detail

CheckpointLayer load_checkpoint_layer(const LayerRequest& req) {
  std::string type;
  const Config config = detail::open_config(req.checkpoint, req.arch, type);
  const Tensors tensors(req.checkpoint, req.max_bytes, req.max_elements);
  return detail::read_layer(req, tensors, config, type, nullptr);
}

std::vector<std::string> architecture_names() {
  std::vector<std::string> names;
  for (const Arch& a : kArchs) names.emplace_back(a.name);
  return names;
}

const std::vector<ArchitectureInfo>& architectures() {
  static const std::vector<ArchitectureInfo> list = {
      {"llama, mistral, mixtral, qwen2, qwen3, gemma, gemma2, gemma3_text",
       "model.layers.N.self_attn.{q,k,v,o}_proj.weight (and .bias where present); "
       "model.layers.N.self_attn.{q,k}_norm.weight (qwen3, gemma3_text)",
       "num_hidden_layers, num_attention_heads, num_key_value_heads, hidden_size, head_dim, "
       "rope_theta, rope_scaling (linear, dynamic, llama3, yarn, longrope) or rope_parameters, "
       "max_position_embeddings, original_max_position_embeddings, partial_rotary_factor, "
       "sliding_window, layer_types, use_sliding_window and max_window_layers (qwen2, qwen3), "
       "rms_norm_eps (the q/k norm), query_pre_attn_scalar and attn_logit_softcapping (gemma2, "
       "gemma3_text), rope_local_base_freq and sliding_window_pattern (gemma3_text)"},
      {"gpt2",
       "h.N.attn.c_attn.{weight,bias} (Q, K, V side by side), h.N.attn.c_proj.{weight,bias}",
       "n_layer, n_head, n_embd, scale_attn_weights, scale_attn_by_inverse_layer_idx"},
      {"bert, roberta",
       "encoder.layer.N.attention.self.{query,key,value}.{weight,bias}, "
       "encoder.layer.N.attention.output.dense.{weight,bias}",
       "num_hidden_layers, num_attention_heads, hidden_size, position_embedding_type (absolute), "
       "is_decoder"},
  };
  return list;
}

}  // namespace attn
