// A checkpoint's config.json as the architecture table reads it: its
// fields with their checks and their place in messages, and the file's
// finding beside the weights. Private to the engine.
#pragma once

#include <sys/stat.h>

#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/json.h"
#include "base/number_text.h"
#include "base/path.h"
#include "model/checkpoint_files.h"

namespace attn::detail {

inline bool is_directory(const std::string& p) { return path::is_directory(p); }
inline bool is_file(const std::string& p) { return path::is_regular_file(p); }
inline std::string join(const std::string& dir, const std::string& name) {
  return path::join(dir, name);
}
inline std::string parent(const std::string& p) { return path::directory_of(p); }

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
  // A whole number >= 0 (a layer index, a count that may be 0).
  int64_t whole(const char* key, int64_t fallback) const {
    if (!has(key)) return fallback;
    const double x = number(key);
    if (!(x >= 0 && x <= 1e9 && x == std::floor(x))) {
      throw_input(place_, std::string("\"") + key + "\" must be a non-negative integer");
    }
    return static_cast<int64_t>(x);
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
// --arch. With `open`, the checkpoint is a directory whose config.json it
// opens. Errors as load_checkpoint_layer documents.
Config open_config(const std::string& checkpoint, const std::string& arch_flag,
                   std::string& model_type, const OpenCheckpointFile& open = {});

}  // namespace attn::detail
