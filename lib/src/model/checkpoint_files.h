// The files of a Hugging Face checkpoint as the layer reader and the
// forward pass read them: its safetensors files (one, or shards named by
// an index) with where each tensor is, and its config.json's fields with
// their checks. Private to the engine.
#pragma once

#include <sys/stat.h>

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "attn/safetensors.h"
#include "attn/tensor_origin.h"
#include "base/number_text.h"

namespace attn::detail {

inline bool is_directory(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

inline bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

inline std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

inline std::string parent(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

// The safetensors files of a checkpoint and where each tensor is.
class Tensors {
 public:
  Tensors(const std::string& path, int64_t max_bytes, int64_t max_elements)
      : max_bytes_(max_bytes), max_elements_(max_elements) {
    if (!is_directory(path)) {
      add(path);
      return;
    }
    const std::string index = join(path, "model.safetensors.index.json");
    const std::string single = join(path, "model.safetensors");
    if (is_file(index)) {
      // Shards: {"weight_map": {"tensor name": "file name"}}.
      const std::string text = read_file(index, {}, 100'000'000);
      const json::Value v = json::parse(text, index);
      const json::Value* map = v.is_object() ? v.find("weight_map") : nullptr;
      if (!map || !map->is_object()) throw_input(index, "has no \"weight_map\" object");
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
        if (file.find('/') != std::string::npos || file == "." || file == "..") {
          throw_input(index, "weight_map names \"" + message_text(file) +
                                 "\"; shards must be files in the checkpoint's directory");
        }
        // A FIFO or device would block or never end: shards are files.
        if (!is_file(join(path, file))) {
          throw_input(index, "weight_map names \"" + message_text(file) +
                                 "\", which is not a regular file in the checkpoint's directory");
        }
        if (!opened_.count(file)) add_as(join(path, file), file);
      }
    } else if (is_file(single)) {
      add(single);
    } else {
      throw_input(display_name(path),
                  "no model.safetensors or model.safetensors.index.json in this directory");
    }
  }

  // The tensor whose name is `suffix` or ends in "." + suffix; nullopt
  // when none. Two candidates (a model holding two stacks) is an error.
  std::optional<std::string> find_suffix(const std::string& suffix) const {
    std::optional<std::string> found;
    for (const auto& [name, where] : where_) {
      if (name == suffix ||
          (name.size() > suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
           name[name.size() - suffix.size() - 1] == '.')) {
        if (found) {
          throw_input(where_.at(name).first->name(), "two tensors end in " + suffix + ": \"" +
                                                         message_text(*found) + "\" and \"" +
                                                         message_text(name) + "\"");
        }
        found = name;
      }
    }
    return found;
  }

  Tensor<double> read(const std::string& name) const {
    const auto& [file, entry] = where_.at(name);
    return file->read(*entry, CellKind::kFinite, max_bytes_, max_elements_);
  }

  // The tensor's cells where they lie in the mapped file, its bytes and
  // (with `whole`, when all of it is to be decoded) its cells checked
  // against the limits first.
  BinaryArray view(const std::string& name, bool whole = true) const {
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
  TensorOrigin origin(const std::string& name) const {
    TensorOrigin o;
    o.format = TensorOrigin::Format::kSafetensors;
    o.path = paths_.at(where_.at(name).first);
    o.tensor = name;
    return o;
  }

  // "model.safetensors:model.norm.weight", for messages.
  std::string place(const std::string& name) const {
    return where_.at(name).first->name() + ":" + message_text(name);
  }

  const Shape& shape(const std::string& name) const { return where_.at(name).second->shape; }

  std::string files() const {
    std::string s;
    for (const auto& [label, f] : opened_) s += (s.empty() ? "" : ", ") + f->name();
    return s;
  }

 private:
  void add(const std::string& path) { add_as(path, path); }
  void add_as(const std::string& path, const std::string& key) {
    auto f = std::make_shared<SafetensorsFile>(SafetensorsFile::open(path));
    for (const SafetensorsEntry& e : f->tensors()) where_[e.name] = {f.get(), &e};
    paths_[f.get()] = path;
    opened_[key] = f;
  }

  int64_t max_bytes_;
  int64_t max_elements_;
  std::map<std::string, std::shared_ptr<SafetensorsFile>> opened_;
  std::map<std::string, std::pair<const SafetensorsFile*, const SafetensorsEntry*>> where_;
  std::map<const SafetensorsFile*, std::string> paths_;  // as opened
};

// config.json fields with their place in messages.
class Config {
 public:
  Config(json::Value v, std::string place) : v_(std::move(v)), place_(std::move(place)) {}
  bool has(const char* key) const {
    const json::Value* f = v_.find(key);
    return f && !f->is_null();
  }
  const json::Value* get(const char* key) const {
    const json::Value* f = v_.find(key);
    return f && !f->is_null() ? f : nullptr;
  }
  double number(const char* key) const {
    const json::Value* f = get(key);
    if (!f) throw_input(place_, std::string("has no \"") + key + "\"");
    if (!f->is_number()) throw_input(place_, std::string("\"") + key + "\" must be a number");
    return f->as_number();
  }
  double number(const char* key, double fallback) const {
    return has(key) ? number(key) : fallback;
  }
  // A number > 0 (and finite): a base, a scale, a cap. 0 or a negative one
  // would not fail later but give other numbers than the model's.
  double positive(const char* key) const {
    const double x = number(key);
    if (!(x > 0 && std::isfinite(x))) {
      throw_input(place_, std::string("\"") + key + "\" must be a positive number, got " +
                              format_shortest(x));
    }
    return x;
  }
  double positive(const char* key, double fallback) const {
    return has(key) ? positive(key) : fallback;
  }
  int64_t count(const char* key) const {
    const double x = number(key);
    if (!(x >= 1 && x <= 1e9 && x == std::floor(x))) {
      throw_input(place_, std::string("\"") + key + "\" must be a positive integer");
    }
    return static_cast<int64_t>(x);
  }
  int64_t count(const char* key, int64_t fallback) const {
    return has(key) ? count(key) : fallback;
  }
  bool flag(const char* key, bool fallback) const {
    const json::Value* f = get(key);
    if (!f) return fallback;
    if (!f->is_bool()) throw_input(place_, std::string("\"") + key + "\" must be true or false");
    return f->as_bool();
  }
  // A string field; "" when absent or null, an error when of another type.
  std::string text(const char* key) const {
    const json::Value* f = get(key);
    if (!f) return "";
    if (!f->is_string()) {
      throw_input(place_,
                  std::string("\"") + key + "\" must be a string, got " + json::describe(*f));
    }
    return f->as_string();
  }
  const std::string& place() const { return place_; }

 private:
  json::Value v_;
  std::string place_;
};

// The config.json of a checkpoint (a directory, or beside a .safetensors
// file), or an empty one for --arch; model_type is set from the file or
// --arch. Errors as load_checkpoint_layer documents.
Config open_config(const std::string& checkpoint, const std::string& arch_flag,
                   std::string& model_type);

// A projection matrix read_layer left where it lies in the checkpoint: the
// parameter it is (W_q, W_k, W_v, W_o), its tensor's name and shape.
struct InPlaceWeight {
  std::string param, tensor;
  Shape shape;
};

// load_checkpoint_layer on a checkpoint already open: its tensors, its
// config and the model type open_config gave. With `in_place`, the
// projection matrices the layer uses whole are not read into params but
// listed there (their shapes checked as before), for the forward pass to
// multiply them where they are mapped; GPT-2's c_attn, cut into W_q, W_k
// and W_v, is still read.
CheckpointLayer read_layer(const LayerRequest& req, const Tensors& tensors, const Config& config,
                           const std::string& model_type, std::vector<InPlaceWeight>* in_place);

}  // namespace attn::detail
