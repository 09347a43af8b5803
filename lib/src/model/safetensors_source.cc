#include <algorithm>
#include <map>

#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "attn/safetensors.h"
#include "base/number_text.h"
#include "model/config_json.h"
#include "model/tensor_source.h"

namespace attn::detail {

std::optional<std::string> TensorSource::find_suffix(const std::string& suffix) const {
  std::optional<std::string> found;
  for (const std::string& name : names()) {
    if (name == suffix || (name.size() > suffix.size() &&
                           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
                           name[name.size() - suffix.size() - 1] == '.')) {
      if (found) {
        throw_input(place(name), "two tensors end in " + suffix + ": \"" + message_text(*found) +
                                     "\" and \"" + message_text(name) + "\"");
      }
      found = name;
    }
  }
  return found;
}

namespace {

// The safetensors files of a checkpoint and where each tensor is.
class SafetensorsSource final : public TensorSource {
 public:
  SafetensorsSource(const std::string& path, int64_t max_bytes, int64_t max_elements,
                    const OpenCheckpointFile& open)
      : max_bytes_(max_bytes), max_elements_(max_elements) {
    if (open) {
      from_files(path, open);
      return;
    }
    if (!is_directory(path)) {
      add(path);
      return;
    }
    const std::string index = join(path, "model.safetensors.index.json");
    const std::string single = join(path, "model.safetensors");
    if (is_file(index)) {
      for (const std::string& file : shard_names(read_file(index, {}, 100'000'000), index)) {
        // A FIFO or device would block or never end: shards are files.
        if (!is_file(join(path, file))) not_a_shard(index, file);
        add_as(join(path, file), file);
      }
    } else if (is_file(single)) {
      add(single);
    } else {
      no_weights(path);
    }
  }

  Tensor<double> read(const std::string& name) const override {
    const auto& [file, entry] = where_.at(name);
    return file->read(*entry, CellKind::kFinite, max_bytes_, max_elements_);
  }

  // The tensor's cells where they lie in the mapped file, its bytes and
  // (with `whole`, when all of it is to be decoded) its cells checked
  // against the limits first.
  BinaryArray view(const std::string& name, bool whole) const override {
    const auto& [file, entry] = where_.at(name);
    const std::string place = file->name() + ":" + message_text(name);
    if (whole) {
      if (static_cast<int64_t>(entry->end - entry->begin) > max_bytes_) {
        throw_input(place, std::to_string(entry->end - entry->begin) +
                               " bytes; the limit is --max-input-bytes " +
                               std::to_string(max_bytes_));
      }
      if (shape_size(entry->shape) > max_elements_) {
        throw_input(place, std::to_string(shape_size(entry->shape)) +
                               " cells; the limit is --max-elements " +
                               std::to_string(max_elements_));
      }
    }
    return file->view(*entry);
  }

  // Where the tensor is: its file, as opened, and its name.
  TensorOrigin origin(const std::string& name) const override {
    TensorOrigin o;
    o.format = MatrixFormat::kSafetensors;
    o.path = paths_.at(where_.at(name).first);
    o.tensor = name;
    return o;
  }

  // "model.safetensors:model.norm.weight", for messages.
  std::string place(const std::string& name) const override {
    return where_.at(name).first->name() + ":" + message_text(name);
  }

  const Shape& shape(const std::string& name) const override {
    return where_.at(name).second->shape;
  }
  ElementType type(const std::string& name) const override { return where_.at(name).second->type; }
  bool contains(const std::string& name) const override { return where_.count(name) > 0; }
  const std::vector<std::string>& names() const override { return names_; }

  std::string files() const override {
    std::string s;
    for (const auto& [label, f] : opened_) s += (s.empty() ? "" : ", ") + f->name();
    return s;
  }

 private:
  // The directory's files as `open` opens them, read from what it opened.
  void from_files(const std::string& dir, const OpenCheckpointFile& open) {
    const std::string index = join(dir, "model.safetensors.index.json");
    if (const std::optional<OpenedFile> f = open("model.safetensors.index.json")) {
      for (const std::string& file : shard_names(read_file(*f, {}, 100'000'000), index)) {
        const std::optional<OpenedFile> shard = open(file);
        if (!shard) not_a_shard(index, file);
        add_opened(*shard, file);
      }
    } else if (const std::optional<OpenedFile> single = open("model.safetensors")) {
      add_opened(*single, "model.safetensors");
    } else {
      no_weights(dir);
    }
  }

  [[noreturn]] static void not_a_shard(const std::string& index, const std::string& file) {
    throw_input(index, "weight_map names \"" + message_text(file) +
                           "\", which is not a regular file in the checkpoint's directory");
  }

  [[noreturn]] static void no_weights(const std::string& dir) {
    // PyTorch's pickled weights are not read (unpickling runs code):
    // the message names the file found and the line that converts it.
    const std::string bin = join(dir, "pytorch_model.bin");
    if (is_file(bin)) {
      throw_input(display_name(dir),
                  "has pytorch_model.bin but no model.safetensors, and attn reads safetensors "
                  "only; convert it: python3 -c \"import torch; from safetensors.torch import "
                  "save_file; save_file({k: v.contiguous().clone() for k, v in torch.load('" +
                      message_text(bin) + "').items()}, '" +
                      message_text(join(dir, "model.safetensors")) +
                      "')\" (or transformers' save_pretrained(DIR, safe_serialization=True))");
    }
    if (is_file(join(dir, "pytorch_model.bin.index.json"))) {
      throw_input(display_name(dir),
                  "has pytorch_model.bin.index.json (PyTorch shards) but no safetensors, and "
                  "attn reads safetensors only; convert it with transformers: "
                  "AutoModel.from_pretrained(DIR).save_pretrained(DIR, "
                  "safe_serialization=True)");
    }
    throw_input(display_name(dir),
                "no model.safetensors or model.safetensors.index.json in this directory");
  }

  void add(const std::string& path) { add_as(path, path); }
  void add_opened(const OpenedFile& f, const std::string& key) {
    if (opened_.count(key)) return;
    add_file(std::make_shared<SafetensorsFile>(SafetensorsFile::from_bytes(map_file(f), f.path())),
             f.path(), key);
  }
  void add_as(const std::string& path, const std::string& key) {
    if (opened_.count(key)) return;
    add_file(std::make_shared<SafetensorsFile>(SafetensorsFile::open(path)), path, key);
  }
  void add_file(const std::shared_ptr<SafetensorsFile>& f, const std::string& path,
                const std::string& key) {
    for (const SafetensorsEntry& e : f->tensors()) {
      if (!where_.count(e.name)) names_.push_back(e.name);
      where_[e.name] = {f.get(), &e};
    }
    paths_[f.get()] = path;
    opened_[key] = f;
  }

  int64_t max_bytes_;
  int64_t max_elements_;
  std::map<std::string, std::shared_ptr<SafetensorsFile>> opened_;
  std::map<std::string, std::pair<const SafetensorsFile*, const SafetensorsEntry*>> where_;
  std::map<const SafetensorsFile*, std::string> paths_;  // as opened
  std::vector<std::string> names_;
};

}  // namespace

std::unique_ptr<TensorSource> open_safetensors(const std::string& path, int64_t max_bytes,
                                               int64_t max_elements,
                                               const OpenCheckpointFile& open) {
  return std::make_unique<SafetensorsSource>(path, max_bytes, max_elements, open);
}

std::vector<std::string> shard_names(std::string_view text, const std::string& index) {
  // {"weight_map": {"tensor name": "file name"}}.
  const json::Value v = json::parse(text, index);
  const json::Value* map = v.is_object() ? v.find("weight_map") : nullptr;
  if (!map || !map->is_object()) throw_input(index, "has no \"weight_map\" object");
  std::vector<std::string> files;
  for (const json::Member& m : map->members()) {
    if (!m.value.is_string()) {
      throw_input(index, "weight_map \"" + message_text(m.key) + "\" is not a file name");
    }
    const std::string& file = m.value.as_string();
    if (file.find('\0') != std::string::npos) {
      throw_input(index, "weight_map names \"" + message_text(file) +
                             "\", which holds a NUL byte; no file name can hold one");
    }
    // Shards are files beside the index, never paths elsewhere.
    if (file.find('/') != std::string::npos || file == "." || file == ".." || file.empty()) {
      throw_input(index, "weight_map names \"" + message_text(file) +
                             "\"; shards must be files in the checkpoint's directory");
    }
    if (std::find(files.begin(), files.end(), file) == files.end()) files.push_back(file);
  }
  return files;
}

}  // namespace attn::detail
