// The forward pass from token ids, through the library (attn/checkpoint.h):
// a layer's attention input against the float64 PyTorch re-implementation
// of each architecture's forward in data/models/make_tiny_models.py
// (x_layerN.npy: what enters layer N's attention); Qwen 3, Gemma 3, Gemma
// and Mixtral, and RoPE scaling as config.json writes it, against those of
// data/models/make_tiny_modern.py (every layer's attention weights and
// hidden states), in float64 and float32. Through the program (attn run
// --checkpoint DIR --ids|--text): forward_cli_test.cc.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/npy.h"
#include "model_util.h"
#include "test_util.h"

namespace attn {
namespace {

using test::checkpoint;
using test::ids_in;
using test::ids_of;
using test::load;
using test::max_diff;
using test::model;
using test::read_text;

class ForwardPass : public ::testing::TestWithParam<std::string> {};

TEST_P(ForwardPass, EveryLayersInputMatchesPyTorch) {
  const std::string name = GetParam();
  for (int64_t layer : {0, 1}) {
    ForwardRequest r;
    r.checkpoint = model(name);
    r.ids = ids_of(name);
    r.layer = layer;
    const Tensor<double> x = attention_input(r);
    const std::string ref = model(name + "/x_layer" + std::to_string(layer) + ".npy");
    const Tensor<double> want = parse_npy(read_text(ref), ref, CellKind::kFinite).values;
    // Layer 1's input has been through layer 0's attention, residual, norms
    // and MLP: float64 all the way, so only rounding separates the two.
    EXPECT_LT(max_diff(x, want), 1e-12) << name << " layer " << layer;
  }
}

INSTANTIATE_TEST_SUITE_P(TinyModels, ForwardPass,
                         ::testing::Values("tiny-llama", "tiny-gemma2", "tiny-gpt2", "tiny-bert"));

void expect_matches_reference(const std::string& ckpt, const std::string& refs,
                              const std::string& what) {
  ForwardRequest r;
  r.checkpoint = ckpt;
  r.ids = ids_in(refs);
  const ModelAttention m = model_attention(r);
  const Tensor<double> att = load(refs + "/attentions.npy");
  const Tensor<double> hidden = load(refs + "/hidden.npy");
  ASSERT_EQ(m.weights.shape(), att.shape()) << what;
  ASSERT_EQ(m.hidden.shape(), hidden.shape()) << what;
  // Float64 through every layer: only rounding separates the two.
  EXPECT_LT(max_diff(m.weights, att), 1e-12) << what;
  EXPECT_LT(max_diff(m.hidden, hidden), 1e-12) << what;
}

class ModernModel : public ::testing::TestWithParam<std::string> {};

TEST_P(ModernModel, EveryLayerMatchesPyTorch) {
  expect_matches_reference(model(GetParam()), model(GetParam()), GetParam());
}

INSTANTIATE_TEST_SUITE_P(TinyModels, ModernModel,
                         ::testing::Values("tiny-qwen3", "tiny-gemma3", "tiny-gemma",
                                           "tiny-mixtral"));

class RopeScalingCase : public ::testing::TestWithParam<std::string> {};

TEST_P(RopeScalingCase, MatchesPyTorchAndChangesTheAttention) {
  const std::string refs = model("rope-scaling/" + GetParam());
  const std::string ckpt = checkpoint("rope-" + GetParam(), read_text(refs + "/config.json"),
                                      model("tiny-llama/model.safetensors"));
  expect_matches_reference(ckpt, refs, GetParam());
  // The scaling is not a no-op on these seven tokens: the unscaled
  // model's weights differ.
  ForwardRequest r;
  r.checkpoint = model("tiny-llama");
  r.ids = ids_in(refs);
  const Tensor<double> plain = model_attention(r).weights;
  EXPECT_GT(max_diff(plain, load(refs + "/attentions.npy")), 1e-3) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Kinds, RopeScalingCase,
                         ::testing::Values("linear", "dynamic", "llama3", "yarn", "longrope",
                                           "v5"));

// --dtype f32: the products and the attention in float32 (OpenBLAS's sgemm,
// the f32 kernels), the same stack within float32's rounding, and the
// forward reports each layer.
TEST(ForwardF32, TheStackWithinFloatRoundingAndProgressPerLayer) {
  for (const std::string name : {"tiny-qwen3", "tiny-mixtral", "tiny-gemma3"}) {
    ForwardRequest r;
    r.checkpoint = model(name);
    r.ids = ids_in(r.checkpoint);
    r.dtype = DType::kF32;
    std::vector<std::pair<int64_t, int64_t>> reports;
    r.progress = [&](int64_t done, int64_t total) { reports.emplace_back(done, total); };
    const ModelAttention m = model_attention(r);
    const double d = max_diff(m.weights, load(r.checkpoint + "/attentions.npy"));
    EXPECT_LT(d, 1e-5) << name;
    EXPECT_GT(d, 0) << name << ": float32 rounds somewhere";
    EXPECT_LT(max_diff(m.hidden, load(r.checkpoint + "/hidden.npy")), 1e-4) << name;
    const std::vector<std::pair<int64_t, int64_t>> want = {{0, 2}, {1, 2}, {2, 2}};
    EXPECT_EQ(reports, want) << name;
  }
}

}  // namespace
}  // namespace attn
