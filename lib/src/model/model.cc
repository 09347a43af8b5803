#include "model/model.h"

#include <optional>

#include "attn/error.h"
#include "attn/file_io.h"
#include "model/gguf_model.h"
#include "model/matmul.h"
#include "model/model_store.h"

namespace attn::model {

namespace {

const Row& row_of(const std::string& type) {
  const Row* r = find_row(type);
  if (!r) throw_internal("model: model type " + type + " was not checked by open_config");
  return *r;
}

}  // namespace

Model::Parts Model::open(const std::string& checkpoint, const std::string& arch, int64_t max_bytes,
                         int64_t max_elements, bool attention_only) {
  const bool store = is_store_name(checkpoint);
  const std::optional<StoreModel> s =
      store ? std::optional<StoreModel>(find_store_model(checkpoint)) : std::nullopt;
  if (s ? s->gguf() : is_gguf(checkpoint) && detail::is_file(checkpoint)) {
    if (!arch.empty()) {
      throw_usage("--arch " + arch + ": " + display_name(checkpoint) +
                  " is a GGUF file, which names its architecture (general.architecture); drop "
                  "--arch");
    }
    GgufModel g =
        s ? open_gguf_model(s->blob(), max_bytes) : open_gguf_model(checkpoint, max_bytes);
    const detail::Config config(std::move(g.config), g.place);
    ModelConfig c = read_model_config(row_of(g.model_type), config, attention_only);
    if (g.adjust) g.adjust(c);
    std::unique_ptr<detail::TensorSource> source = gguf_source(g, c, max_bytes, max_elements);
    return Parts{std::move(c), std::move(source)};
  }
  // A snapshot's files are opened beneath its store's folder.
  detail::OpenCheckpointFile files;
  if (s) files = [&s](const std::string& name) { return s->open(name); };
  const std::string& dir = s ? s->path() : checkpoint;
  std::string type;
  const detail::Config config = detail::open_config(dir, arch, type, files);
  ModelConfig c = read_model_config(row_of(type), config, attention_only);
  return Parts{std::move(c), detail::open_safetensors(dir, max_bytes, max_elements, files)};
}

Model::Model(const std::string& checkpoint, const std::string& arch, int64_t max_bytes,
             int64_t max_elements, DType dtype, int threads, int64_t attention_of)
    : Model(checkpoint, open(checkpoint, arch, max_bytes, max_elements, attention_of >= 0), dtype,
            threads, attention_of) {}

Model::Model(const std::string& checkpoint, Parts parts, DType dtype, int threads,
             int64_t attention_of)
    : name_(checkpoint),
      config_(std::move(parts.config)),
      tensors_(std::move(parts.tensors)),
      weights_(*tensors_, config_, display_name(checkpoint), attention_of),
      dtype_(dtype),
      threads_(threads) {
  // (A layer out of range had no tensor checked: its roles are layer n's.)
  if (attention_of >= config_.layers) {
    throw_usage("--layer " + std::to_string(attention_of) + ": the model has " +
                std::to_string(config_.layers) + " layers (0 to " +
                std::to_string(config_.layers - 1) + ")");
  }
}

Matrix Model::linear(const Matrix& x, const At& at) const { return std::move(linears(x, {at})[0]); }

std::vector<Matrix> Model::linears(const Matrix& x, const std::vector<At>& ats) const {
  std::vector<BinaryArray> views;
  views.reserve(ats.size());
  std::vector<detail::NamedWeight> named;
  for (const At& at : ats) {
    const std::string& name = weights_.weight_name(at);
    views.push_back(weights_.view(name));
    named.push_back({&views.back(), !config_.conv1d, weights_.place(name)});
  }
  std::vector<Matrix> out = detail::multiply(x, named, dtype_, threads_);
  for (size_t i = 0; i < ats.size(); ++i) {
    if (const auto b = weights_.bias_name(ats[i])) add_row(out[i], weights_.vector(*b));
  }
  return out;
}

Matrix Model::norm(Role role, int64_t layer, const Matrix& x) const {
  if (!config_.has(role)) return x;
  const TensorSpec& spec = config_.tensor(role);
  if (spec.path.empty()) return norm_rows(config_.norm, x, nullptr, nullptr, config_.eps);
  const At at{role, layer};
  const Vec w = vector(at);
  const auto b = weights_.bias_name(at);
  const Vec bias = b ? weights_.vector(*b) : Vec();
  return norm_rows(config_.norm, x, &w, b ? &bias : nullptr, config_.eps);
}

}  // namespace attn::model
