// The checkpoint config's fuzz entry: config.json bytes read through the
// architecture table beside a tiny checkpoint's weights (the one of the
// config's model_type, from data/models), then one layer's attention and
// the whole forward pass on three token ids when the config passes.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/json.h"
#include "fuzz_entry.h"

namespace attn::fuzz {

namespace {

const std::string kModels = std::string(ATTN_SOURCE_DIR) + "/data/models";

// The tiny checkpoint of each model_type (the first directory that has it).
const std::map<std::string, std::string>& weights_by_type() {
  static const std::map<std::string, std::string> m = [] {
    std::map<std::string, std::string> out;
    for (const char* dir :
         {"tiny-llama",          "tiny-mistral",    "tiny-mixtral",   "tiny-qwen2",
          "tiny-qwen3",          "tiny-qwen2-moe",  "tiny-qwen3-moe", "tiny-gemma",
          "tiny-gemma2-softcap", "tiny-gemma3",     "tiny-granite",   "tiny-smollm3",
          "tiny-olmo",           "tiny-olmo2",      "tiny-phi3",      "tiny-phi",
          "tiny-stablelm",       "tiny-starcoder2", "tiny-cohere",    "tiny-gpt-neox",
          "tiny-falcon",         "tiny-opt",        "tiny-gpt-oss",   "tiny-deepseek-v3",
          "tiny-gpt2-ninner",    "tiny-bert-f64",   "tiny-roberta"}) {
      std::ifstream f(kModels + "/" + dir + "/config.json");
      std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      try {
        const json::Value v = json::parse(text, dir);
        if (const json::Value* t = v.find("model_type"); t && t->is_string()) {
          out.emplace(t->as_string(), kModels + "/" + dir + "/model.safetensors");
        }
      } catch (const Error&) {
      }
    }
    return out;
  }();
  return m;
}

// A scratch checkpoint directory, made once per process.
const std::string& scratch() {
  static const std::string dir = [] {
    char pattern[] = "/tmp/attn_fuzz_config_XXXXXX";
    const char* made = ::mkdtemp(pattern);
    if (!made) std::abort();
    return std::string(made);
  }();
  return dir;
}

}  // namespace

void checkpoint_config(std::string_view data) {
  const std::string dir = scratch();
  {
    std::ofstream f(dir + "/config.json", std::ios::binary | std::ios::trunc);
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  // The weights of the config's model_type (tiny-llama's for another).
  std::string type;
  try {
    const json::Value v = json::parse(data, "config.json");
    if (const json::Value* t = v.is_object() ? v.find("model_type") : nullptr;
        t && t->is_string()) {
      type = t->as_string();
    }
  } catch (const Error&) {
  }
  const auto& known = weights_by_type();
  const auto it = known.find(type);
  const std::string weights = it != known.end() ? it->second : known.at("llama");
  const std::string link = dir + "/model.safetensors";
  ::unlink(link.c_str());
  if (::symlink(weights.c_str(), link.c_str()) != 0) std::abort();
  // The input's length picks the path, so an input always takes the same.
  const bool f32 = data.size() % 2 == 1;
  try {
    LayerRequest lr;
    lr.checkpoint = dir;
    lr.layer = static_cast<int64_t>(data.size() % 3);
    load_checkpoint_layer(lr);
  } catch (const Error&) {
  }
  try {
    ForwardRequest fr;
    fr.checkpoint = dir;
    fr.ids = {2, 17, 29};
    fr.dtype = f32 ? DType::kF32 : DType::kF64;
    fr.threads = 1;
    fr.keep_logits = true;
    model_attention(fr);
  } catch (const Error&) {
  }
}

}  // namespace attn::fuzz
