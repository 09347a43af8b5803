// Helpers of the tests of checkpoints and the forward pass, shared by the
// library's tests (forward_test.cc, model_test.cc, tokenizer_test.cc) and the program's
// (forward_cli_test.cc, model_cli_test.cc, files_cli_test.cc): the tiny
// models' reference ids and arrays, and checkpoint directories made from
// them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "attn/tensor.h"
#include "test_util.h"

namespace attn::test {

// The token ids of a directory's ids.json (a tiny model's reference input).
inline std::vector<int64_t> ids_in(const std::string& dir) {
  return nlohmann::json::parse(read_text(dir + "/ids.json")).get<std::vector<int64_t>>();
}

// The reference ids of the tiny model data/models/NAME.
inline std::vector<int64_t> ids_of(const std::string& name) { return ids_in(model(name)); }

// Tiny models with a tokenizer.json of their family's structure
// (data/models/make_tiny_tokenizers.py), and the sentence whose ids and
// tokens are their references (ids.json, tokens.json).
inline const std::vector<std::pair<std::string, std::string>>& tiny_sentences() {
  static const std::vector<std::pair<std::string, std::string>> sentences = {
      {"tiny-llama", "The cat sat on the mat"},
      {"tiny-gemma2", "The cat sat on the mat"},
      {"tiny-gpt2", "The cat sat on the mat."},
      {"tiny-bert", "The cat sat on mat"}};
  return sentences;
}

// An .npy file of rank up to max_rank (a model's stacks are 5-D).
inline Tensor<double> load(const std::string& path, int max_rank = 5) {
  return load_npy(path, max_rank);
}
inline Tensor<double> load_npy5(const std::string& path) { return load_npy(path, 5); }

// A checkpoint directory of `config` (a JSON text) beside `weights`.
inline std::string checkpoint(const std::string& name, const std::string& config,
                              const std::string& weights) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(temp_dir()) / ("ckpt-" + name);
  fs::create_directories(dir);
  fs::remove(dir / "model.safetensors");
  fs::create_symlink(weights, dir / "model.safetensors");
  write_temp("ckpt-" + name + "/config.json", config);
  return dir.string();
}

// A tiny model's directory or file ("tiny-llama/x_layer0.npy").
inline std::string tiny(const std::string& name) { return source_path("data/models/" + name); }

// A copy of a tiny model in a fresh directory, its config.json patched.
inline std::string model_copy(const std::string& model, const std::string& dir_name,
                              const nlohmann::json& patch = nlohmann::json::object()) {
  namespace fs = std::filesystem;
  const std::string dir = temp_dir() + "/" + dir_name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors", "x_layer0.npy"}) {
    fs::copy_file(tiny(model) + "/" + f, dir + "/" + f);
  }
  nlohmann::json config = nlohmann::json::parse(read_text(dir + "/config.json"));
  config.merge_patch(patch);
  std::ofstream(dir + "/config.json") << config.dump();
  return dir;
}

}  // namespace attn::test
