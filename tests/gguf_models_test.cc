// Models from GGUF files: the tiny checkpoints as llama.cpp's converter
// writes them (data/models/make_tiny_gguf.py), read through the
// architecture table, give the attention of the transformers directory of
// the same weights where the file keeps what the config says; where it
// does not (a sliding window llama.cpp ignores and the converter drops),
// they give the model the file describes, as llama.cpp runs it. Quantized
// files give the exact attention of their dequantized weights
// (data/models/make_quant_references.py), and llama.cpp's own numbers on
// them differ by about 3e-2 (it quantizes activations in its products).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/checkpoint.h"
#include "attn/error.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::max_diff;
using test::model;
using test::read_text;

std::vector<int64_t> ids_of(const std::string& dir) {
  return nlohmann::json::parse(read_text(dir + "/ids.json")).get<std::vector<int64_t>>();
}

ModelAttention run(const std::string& checkpoint, const std::vector<int64_t>& ids,
                   DType dtype = DType::kF64) {
  ForwardRequest r;
  r.checkpoint = checkpoint;
  r.ids = ids;
  r.dtype = dtype;
  r.keep_logits = true;
  return model_attention(r);
}

double relative(const Tensor<double>& a, const Tensor<double>& b) {
  double top = 1;
  for (int64_t i = 0; i < b.size(); ++i) top = std::max(top, std::abs(b[i]));
  return max_diff(a, b) / top;
}

// The directories whose GGUF keeps every setting the transformers config
// gives: the same attention to float64's rounding.
const std::vector<std::string> kSame = {
    "tiny-llama",
    "tiny-llama-bias",
    "tiny-granite",
    "tiny-qwen3",
    "tiny-olmo",
    "tiny-qwen3-moe-sparse",
    "tiny-qwen2-moe-sparse",
    "tiny-olmo2",
    "tiny-cohere",
    "tiny-phi",
    "tiny-phi3",
    "tiny-phi3-long",
    "tiny-falcon",
    "tiny-gpt2-ninner",
    "tiny-stablelm-parallel",
    "tiny-gpt-neox",
};

class GgufFamily : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufFamily, GivesTheAttentionOfItsTransformersDirectory) {
  const std::string dir = model(GetParam());
  const std::vector<int64_t> ids = ids_of(dir);
  const ModelAttention from_gguf = run(dir + "/model.gguf", ids);
  const ModelAttention from_dir = run(dir, ids);
  ASSERT_EQ(from_gguf.weights.shape(), from_dir.weights.shape());
  EXPECT_LT(max_diff(from_gguf.weights, from_dir.weights), 1e-12);
  EXPECT_LT(relative(from_gguf.hidden, from_dir.hidden), 1e-12);
  EXPECT_LT(relative(from_gguf.logits, from_dir.logits), 1e-12);
  EXPECT_EQ(from_gguf.model_type, from_dir.model_type);
}

INSTANTIATE_TEST_SUITE_P(TinyCheckpoints, GgufFamily, ::testing::ValuesIn(kSame),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string s = i.param.substr(5);
                           for (char& c : s) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return s;
                         });

// Gemma's converter stores each norm weight as 1 + w in float32 (what
// transformers computes in float32 anyway): the same attention but for
// that rounding.
TEST(GgufNorms, GemmasNormsStoredAsOnePlusWeightAreFloat32sRoundingAway) {
  const std::string dir = model("tiny-gemma");
  const ModelAttention from_gguf = run(dir + "/model.gguf", ids_of(dir));
  const ModelAttention from_dir = run(dir, ids_of(dir));
  const double d = max_diff(from_gguf.weights, from_dir.weights);
  EXPECT_LT(d, 1e-6);
  EXPECT_GT(d, 0);
}

// What the file does not say is what llama.cpp does: a window the
// converter drops (Mistral's, Qwen 2's, StarCoder2's), SmolLM3's NoPE
// layers every fourth, Gemma 2's score scale without
// query_pre_attn_scalar and Gemma 3's pattern of 6, gpt-oss's YaRN with
// its ends rounded, DeepSeek's mscale equal to mscale_all_dim. attn then
// computes the model the file describes: llama.cpp's own attention on it
// (data/models/*/llamacpp_attentions.npy, float32) is within float32's
// rounding, and its GELU's table where the model has one.
TEST(GgufLlamaCpp, WhatTheFileLeavesOutIsWhatLlamaCppDoes) {
  const std::pair<const char*, double> cases[] = {
      {"tiny-mistral", 5e-6},    {"tiny-qwen2", 5e-6},          {"tiny-smollm3", 5e-6},
      {"tiny-mixtral", 5e-6},    {"tiny-gpt-oss", 5e-6},        {"tiny-deepseek-v3-nobias", 5e-6},
      {"tiny-starcoder2", 1e-3}, {"tiny-gemma2-softcap", 1e-3}, {"tiny-gemma3", 1e-3},
  };
  for (const auto& [name, tolerance] : cases) {
    const std::string dir = model(name);
    const ModelAttention m = run(dir + "/model.gguf", ids_of(dir));
    EXPECT_LT(max_diff(m.weights, test::load_npy(dir + "/llamacpp_attentions.npy")), tolerance)
        << name;
  }
}

// A quantized file's attention is that of its weights dequantized as ggml
// dequantizes them, computed in float64; llama.cpp's is within 5e-2 of it.
TEST(GgufQuantized, GivesTheExactAttentionOfItsDequantizedWeights) {
  const std::string dir = model("tiny-llama-wide-quant");
  const std::vector<int64_t> ids = ids_of(dir);
  for (const char* q : {"Q8_0", "Q4_K_M", "Q4_0"}) {
    const std::string base = dir + "/model-" + q;
    const ModelAttention m = run(base + ".gguf", ids);
    EXPECT_LT(max_diff(m.weights, test::load_npy(base + ".attentions.npy")), 1e-10) << q;
    EXPECT_LT(relative(m.hidden, test::load_npy(base + ".hidden.npy")), 1e-10) << q;
    EXPECT_LT(relative(m.logits, test::load_npy(base + ".logits.npy")), 1e-10) << q;
    const double cpp =
        max_diff(m.weights, test::load_npy(dir + "/llamacpp_attentions-" + q + ".npy"));
    EXPECT_LT(cpp, 5e-2) << q;
    // float32 products of the same cells: within float32's rounding.
    const ModelAttention f = run(base + ".gguf", ids, DType::kF32);
    EXPECT_LT(max_diff(f.weights, m.weights), 1e-4) << q;
  }
}

}  // namespace
}  // namespace attn
