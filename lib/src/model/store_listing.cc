// Every model of the two stores with what its headers say: the
// architecture, whether attn reads it, the parameters (the tensors'
// cells), the quantization and the size of the weights. Only headers are
// read: a GGUF blob is mapped and its header parsed, a snapshot's
// config.json and its safetensors files' headers read.
#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "attn/error.h"
#include "attn/json.h"
#include "attn/safetensors.h"
#include "io/element_types.h"
#include "io/gguf.h"
#include "model/architecture.h"
#include "model/gguf_model.h"
#include "model/model_store.h"
#include "model/store_internal.h"
#include "model/tensor_source.h"

namespace attn::model {

namespace {

// llama.cpp's file types (general.file_type, enum llama_ftype), named as
// Ollama's fs/ggml names them; nullptr for numbers no longer used.
const char* file_type_name(int64_t t) {
  static const char* const names[] = {
      "F32",      "F16",    "Q4_0",    "Q4_1",      "Q4_1_F16", nullptr,    nullptr,
      "Q8_0",     "Q5_0",   "Q5_1",    "Q2_K",      "Q3_K_S",   "Q3_K_M",   "Q3_K_L",
      "Q4_K_S",   "Q4_K_M", "Q5_K_S",  "Q5_K_M",    "Q6_K",     "IQ2_XXS",  "IQ2_XS",
      "Q2_K_S",   "IQ3_XS", "IQ3_XXS", "IQ1_S",     "IQ4_NL",   "IQ3_S",    "IQ3_M",
      "IQ2_S",    "IQ2_M",  "IQ4_XS",  "IQ1_M",     "BF16",     "Q4_0_4_4", "Q4_0_4_8",
      "Q4_0_8_8", "TQ1_0",  "TQ2_0",   "MXFP4_MOE", "NVFP4",    "Q1_0"};
  const auto n = static_cast<int64_t>(sizeof names / sizeof names[0]);
  return t >= 0 && t < n ? names[t] : nullptr;
}

// A sum of cells that no model reaches past, kept from overflowing.
int64_t add_cells(int64_t total, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    n = d > 0 && n > std::numeric_limits<int64_t>::max() / d ? std::numeric_limits<int64_t>::max()
                                                             : n * d;
  }
  return total > std::numeric_limits<int64_t>::max() - n ? std::numeric_limits<int64_t>::max()
                                                         : total + n;
}

// The type that holds the most bytes.
std::string main_type(const std::map<std::string, uint64_t>& bytes) {
  std::string best;
  uint64_t most = 0;
  for (const auto& [type, n] : bytes) {
    if (best.empty() || n > most) {
      best = type;
      most = n;
    }
  }
  return best;
}

void gguf_facts(const OpenedFile& blob, StoreEntry& e) {
  e.bytes = store::file_size(blob);
  const GgufFile f = GgufFile::parse(map_file(blob), blob.path());
  if (const GgufValue* a = f.find("general.architecture"); a && a->is_string()) {
    e.architecture = a->as_string();
    e.reads = !gguf_model_type(f).empty();
  }
  if (const GgufValue* l = f.find("general.size_label"); l && l->is_string()) {
    e.size_label = l->as_string();
  }
  std::map<std::string, uint64_t> bytes;
  e.parameters = 0;
  for (const GgufTensor& t : f.tensors()) {
    e.parameters = add_cells(e.parameters, t.shape);
    bytes[element_traits(t.type).name] += t.bytes;
  }
  const GgufValue* ft = f.find("general.file_type");
  const char* named = ft && ft->is_integer() ? file_type_name(ft->as_int()) : nullptr;
  e.quantization = named ? named : main_type(bytes);
}

// The config's word for the weights' type, as GGUF's types are written.
std::string dtype_name(const std::string& torch) {
  static const std::map<std::string, std::string> names = {
      {"float64", "F64"}, {"float32", "F32"}, {"float16", "F16"}, {"bfloat16", "BF16"}};
  const auto it = names.find(torch);
  return it == names.end() ? torch : it->second;
}

void snapshot_facts(const StoreModel& m, const OpenedFile& config_file, StoreEntry& e) {
  const json::Value c = json::parse(read_file(config_file, {}, 100'000'000), config_file.path());
  if (!c.is_object()) throw_input(config_file.path(), "must be a JSON object");
  const json::Value* type = c.find("model_type");
  if (type && type->is_string()) e.architecture = type->as_string();
  bool reads = !e.architecture.empty() && find_row(e.architecture) != nullptr;
  // A quantizer's method, else the config's dtype (transformers 4.56 calls
  // torch_dtype dtype), else the type most of the weights have.
  const json::Value* q = c.find("quantization_config");
  const json::Value* method = q && q->is_object() ? q->find("quant_method") : nullptr;
  if (method && method->is_string()) e.quantization = method->as_string();
  if (q && !q->is_null()) reads = false;
  for (const char* key : {"torch_dtype", "dtype"}) {
    const json::Value* d = c.find(key);
    if (e.quantization.empty() && d && d->is_string()) e.quantization = dtype_name(d->as_string());
  }
  std::vector<std::string> files;
  const std::string index_name = "model.safetensors.index.json";
  if (const std::optional<OpenedFile> index = m.open(index_name)) {
    files = detail::shard_names(read_file(*index, {}, 100'000'000), index->path());
  } else if (m.open("model.safetensors")) {
    files = {"model.safetensors"};
  } else {
    e.reads = false;
    e.problem =
        m.path() + ": no model.safetensors or model.safetensors.index.json in this directory";
    return;
  }
  std::map<std::string, uint64_t> bytes;
  e.parameters = 0;
  e.bytes = 0;
  for (const std::string& name : files) {
    const std::optional<OpenedFile> f = m.open(name);
    if (!f) {
      throw_input(store::join_path(m.path(), index_name),
                  "weight_map names \"" + message_text(name) +
                      "\", which is not a regular file in the checkpoint's directory");
    }
    e.bytes += store::file_size(*f);
    const SafetensorsFile s = SafetensorsFile::from_bytes(map_file(*f), f->path());
    for (const SafetensorsEntry& t : s.tensors()) {
      e.parameters = add_cells(e.parameters, t.shape);
      bytes[t.dtype] += t.end - t.begin;
      const bool floating = t.type == ElementType::kF64 || t.type == ElementType::kF32 ||
                            t.type == ElementType::kF16 || t.type == ElementType::kBF16;
      reads = reads && floating;
    }
  }
  if (e.quantization.empty()) e.quantization = main_type(bytes);
  e.reads = reads;
}

void list_ollama(const StoreRoots& roots, StoreListing& out) {
  std::set<std::string> seen;
  for (const std::string& root : roots.ollama) {
    const std::optional<OpenedFile> folder = store::open_folder(root);
    out.searched.push_back({"ollama", root, folder.has_value()});
    if (!folder) continue;
    std::vector<StoreEntry> here;
    for (const store::OllamaManifest& m : store::ollama_manifests(*folder)) {
      StoreEntry e;
      e.name = m.name.shortest();
      e.store = "ollama";
      e.path = store::join_path(root, m.rel);
      // A name in two stores is the first store's: the second's cannot be
      // reached by it.
      if (!seen.insert(e.name).second) continue;
      try {
        const std::optional<OpenedFile> manifest =
            store::open_in(*folder, m.rel, store::Want::kFile);
        if (!manifest) continue;  // gone since it was listed
        const store::OllamaModel om = store::ollama_model_of(*folder, *manifest, e.name);
        e.path = om.blob_path;
        gguf_facts(*om.blob, e);
      } catch (const Error& err) {
        e.reads = false;
        e.problem = err.what();
      }
      here.push_back(std::move(e));
    }
    for (StoreEntry& e : here) out.models.push_back(std::move(e));
  }
}

void list_hf(const StoreRoots& roots, StoreListing& out) {
  if (roots.hf.empty()) return;
  const std::optional<OpenedFile> hub = store::open_folder(roots.hf);
  out.searched.push_back({"hf", roots.hf, hub.has_value()});
  if (!hub) return;
  for (const std::string& folder : store::folder_names(*hub)) {
    const std::string repo_id = store::hf_repo_of_folder(folder);
    if (repo_id.empty()) continue;
    std::optional<OpenedFile> repo;
    try {
      repo = store::open_in(*hub, folder, store::Want::kDirectory);
    } catch (const Error&) {
      continue;
    }
    if (!repo) continue;
    // Each snapshot once, by the name that reaches it: main's, else another
    // ref's, else its commit.
    std::map<std::string, std::string> ref_of;
    for (const auto& [ref, commit] : store::hf_refs(*repo)) {
      if (!ref_of.count(commit) || ref == "main") ref_of[commit] = ref;
    }
    std::optional<OpenedFile> snapshots;
    try {
      snapshots = store::open_in(*repo, "snapshots", store::Want::kDirectory);
    } catch (const Error&) {
    }
    if (!snapshots) continue;
    for (const std::string& commit : store::folder_names(*snapshots)) {
      const auto ref = ref_of.find(commit);
      const std::string revision = ref != ref_of.end() ? ref->second : commit;
      StoreEntry e;
      e.name = "hf:" + repo_id + (revision == "main" ? "" : "@" + revision);
      e.store = "hf";
      e.path = store::join_path(repo->path(), "snapshots/" + commit);
      try {
        const StoreModel m = find_hf_model(e.name, roots);
        // A snapshot without config.json is no transformers directory (a
        // GGUF repository's, a tokenizer's): not a model attn lists.
        const std::optional<OpenedFile> config = m.open("config.json");
        if (!config) continue;
        snapshot_facts(m, *config, e);
      } catch (const Error& err) {
        e.reads = false;
        e.problem = err.what();
      }
      out.models.push_back(std::move(e));
    }
  }
}

}  // namespace

StoreListing list_store_models(const StoreRoots& roots) {
  StoreListing out;
  list_ollama(roots, out);
  list_hf(roots, out);
  return out;
}

}  // namespace attn::model
