// A GGUF model run from text, end to end through the attn program: the
// file's own tokenizer spells the sentence, the model's every layer is
// computed, and the result is held to three things made without attn's
// GGUF path. data/models/tiny-qwen2-text (data/models/make_tiny_text_gguf.py)
// is a tiny Qwen2 whose model.gguf carries a byte-level BPE vocabulary
// (pre "qwen2") and whose directory holds the same weights as safetensors
// with the tokenizer.json that vocabulary was made from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn {
namespace {

using test::run_attn;
using test::source_path;

std::string dir() { return source_path("data/models/tiny-qwen2-text"); }

struct Case {
  std::string text;
  std::vector<int64_t> ids;
};

// The texts and llama_tokenize's ids on model.gguf (add_special).
std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& c : nlohmann::json::parse(test::read_text(dir() + "/llamacpp_text.json"))) {
    out.push_back({c["text"].get<std::string>(), c["ids"].get<std::vector<int64_t>>()});
  }
  return out;
}

double max_diff(const Tensor<double>& a, const Tensor<double>& b) {
  EXPECT_EQ(a.shape(), b.shape());
  if (a.shape() != b.shape()) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// Every layer's weights of `checkpoint` on `text`, as attn writes them.
Tensor<double> stack(const std::string& checkpoint, const std::string& text,
                     const std::string& name) {
  const std::string out = test::temp_dir() + "/" + name + ".npy";
  const auto r =
      run_attn({"run", "--checkpoint", checkpoint, "--text", text, "--layer", "all", "-o", out});
  EXPECT_EQ(r.code, 0) << r.err;
  return test::load_npy(out);
}

TEST(GgufText, TheFilesTokenizerSpellsTheTextAsLlamaCppDoes) {
  const auto all = cases();
  ASSERT_EQ(all.size(), 2u);
  for (const Case& c : all) {
    const auto r =
        run_attn({"tokenize", "--tokenizer", dir() + "/model.gguf", "-f", "json", c.text});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["ids"].get<std::vector<int64_t>>(), c.ids) << c.text;
  }
}

// --text on the GGUF file gives the attention of the transformers directory
// of the same weights run from the same text through its tokenizer.json
// (float64: equal to 1e-12), and llama.cpp's own softmax on the file within
// float32's rounding.
TEST(GgufText, ARunFromTextEqualsTheDirectoryAndLlamaCpp) {
  int i = 0;
  for (const Case& c : cases()) {
    const Tensor<double> gguf = stack(dir() + "/model.gguf", c.text, "gguf" + std::to_string(i));
    const Tensor<double> hf = stack(dir(), c.text, "hf" + std::to_string(i));
    ASSERT_EQ(gguf.shape().size(), 5u);
    EXPECT_EQ(gguf.shape()[3], static_cast<int64_t>(c.ids.size())) << c.text;
    EXPECT_LT(max_diff(gguf, hf), 1e-12) << c.text;
    const auto cpp =
        test::load_npy(dir() + "/llamacpp_attentions_text" + std::to_string(i) + ".npy");
    EXPECT_LT(max_diff(gguf, cpp), 5e-6) << c.text;
    ++i;
  }
}

// Ids past the file's vocabulary are refused naming the file's own tensor,
// and the same ids given as --ids give the same attention as the text.
TEST(GgufText, IdsAndTextAgree) {
  const Case c = cases()[0];
  std::string ids;
  for (int64_t id : c.ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  const std::string out = test::temp_dir() + "/ids.npy";
  const auto r = run_attn(
      {"run", "--checkpoint", dir() + "/model.gguf", "--ids", ids, "--layer", "all", "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(max_diff(test::load_npy(out), stack(dir() + "/model.gguf", c.text, "text")), 0.0);
  const auto past =
      run_attn({"run", "--checkpoint", dir() + "/model.gguf", "--ids", "1,588", "--layer", "all"});
  EXPECT_EQ(past.code, 2) << past.err;
  EXPECT_NE(
      past.err.find("--ids: id 588 is past " + dir() + "/model.gguf:token_embd.weight's 588 rows"),
      std::string::npos)
      << past.err;
}

}  // namespace
}  // namespace attn
