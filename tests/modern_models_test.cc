// Qwen 3, Gemma 3, Gemma and Mixtral, and RoPE scaling as config.json
// writes it, against the float64 PyTorch re-implementations of
// data/models/make_tiny_modern.py: every layer's attention weights and
// hidden states. Also the engine's qk_norm key and rope.scaling, and the
// refusals of what attn does not compute.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/npy.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::max_diff;
using test::read_text;
using test::run_attn;
using test::source_path;

using test::model;

Tensor<double> load(const std::string& path) { return test::load_npy(path); }

std::vector<int64_t> ids_in(const std::string& dir) {
  return nlohmann::json::parse(read_text(dir + "/ids.json")).get<std::vector<int64_t>>();
}

// A checkpoint directory of `config` (a JSON text) beside `weights`.
std::string checkpoint(const std::string& name, const std::string& config,
                       const std::string& weights) {
  const fs::path dir = fs::path(test::temp_dir()) / ("ckpt-" + name);
  fs::create_directories(dir);
  fs::remove(dir / "model.safetensors");
  fs::create_symlink(weights, dir / "model.safetensors");
  test::write_temp("ckpt-" + name + "/config.json", config);
  return dir.string();
}

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

// The one-layer path reads the same settings: --checkpoint --layer 1 on the
// reference's x gives the stack's layer 1.
TEST(ModernModelCli, OneLayerFromItsInputIsTheStacksLayer) {
  const std::string dir = model("tiny-gemma3");
  const Tensor<double> hidden = load(dir + "/hidden.npy");
  ForwardRequest r;
  r.checkpoint = dir;
  r.ids = ids_in(dir);
  r.layer = 1;
  const Tensor<double> x = attention_input(r);
  EXPECT_EQ(x.shape(), (Shape{7, 32}));
  std::string ids;
  for (int64_t id : r.ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  const auto one = run_attn({"run", "--checkpoint", dir, "--layer", "1", "--ids", ids, "-f", "json",
                             "-w", "--trace", "--trace-format", "json"});
  ASSERT_EQ(one.code, 0) << one.err;
  // The trace shows the q/k norm before RoPE.
  const std::string& out = one.out;
  const size_t norm = out.find("\"qk_norm_q\""), rope = out.find("\"rope_q\"");
  ASSERT_NE(norm, std::string::npos);
  ASSERT_NE(rope, std::string::npos);
  EXPECT_LT(norm, rope);
}

TEST(ModernModelCli, RefusesWhatItDoesNotCompute) {
  const std::string qwen_weights = model("tiny-qwen3/model.safetensors");
  const nlohmann::json qwen = nlohmann::json::parse(read_text(model("tiny-qwen3/config.json")));
  struct Case {
    std::string name;
    nlohmann::json config;
    std::string weights;
    std::string err;
  };
  // The config with top-level fields replaced.
  auto with = [&](nlohmann::json c, const nlohmann::json& fields) {
    for (const auto& [key, value] : fields.items()) c[key] = value;
    return c;
  };
  const std::vector<Case> cases = {
      {"llama-with-qk-norm", with(qwen, {{"model_type", "llama"}}), qwen_weights,
       "holds model.layers.0.self_attn.k_norm.weight, a key norm, which llama layers do not "
       "have (qwen3, qwen3_moe, gemma3_text, olmo2, cohere do); is the architecture right?"},
      {"ntk", with(qwen, {{"rope_scaling", {{"rope_type", "ntk"}, {"factor", 2}}}}), qwen_weights,
       "rope_scaling type \"ntk\" is not one attn computes (linear, dynamic, llama3, yarn, "
       "longrope, default)"},
      {"unknown-key",
       with(qwen, {{"rope_scaling", {{"rope_type", "linear"}, {"factor", 2}, {"beta_fast", 4}}}}),
       qwen_weights,
       "rope_scaling \"beta_fast\" is not a field of linear scaling that attn reads; remove it "
       "or check the type"},
      {"no-factor", with(qwen, {{"rope_scaling", {{"rope_type", "linear"}}}}), qwen_weights,
       "rope_scaling \"factor\" is missing (linear scaling needs it)"},
      {"llama3-order",
       with(qwen, {{"rope_scaling",
                    {{"rope_type", "llama3"},
                     {"factor", 8},
                     {"low_freq_factor", 4},
                     {"high_freq_factor", 1},
                     {"original_max_position_embeddings", 16}}}}),
       qwen_weights, "rope_scaling \"high_freq_factor\" must be larger than low_freq_factor"},
      {"longrope-length",
       with(qwen, {{"rope_scaling",
                    {{"rope_type", "longrope"},
                     {"factor", 2},
                     {"short_factor", {1, 1}},
                     {"long_factor", {1, 1}}}}}),
       qwen_weights,
       "rope_scaling \"short_factor\" has 2 values; 12 rotated features need one per pair, 6"},
  };
  for (const Case& c : cases) {
    const std::string dir = checkpoint(c.name, c.config.dump(), c.weights);
    const auto r = run_attn({"run", "--checkpoint", dir, "--ids", "1,2,3", "-f", "json"});
    EXPECT_EQ(r.code, 3) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(c.err), std::string::npos) << c.name << ": " << r.err;
  }
}

// The engine's keys: qk_norm with its weights is the RMSNorm of each head's
// rows, and rope.scaling the frequencies of the kind named.
TEST(ModernKeys, QkNormIsAnRmsNormOfEachHeadsRows) {
  const std::string q = "[[1, 2, -1, 0.5], [0.3, -2, 4, 1], [2, 2, 0, -1]]";
  const std::string k = "[[0.5, -1, 2, 1], [1, 1, 1, 1], [-3, 0.2, 0.1, 2]]";
  const std::string v = "[[1, 0], [0, 1], [1, 1]]";
  const Result normed = test::compute_json(
      R"({"Q": )" + q + R"(, "K": )" + k + R"(, "V": )" + v +
      R"(, "heads": 2, "qk_norm": 1e-6, "params": {"q_norm": [1.5, 0.5], "k_norm": [1, 2]}})");
  // The same by hand: each head's two features normed, then weighed.
  auto norm = [](std::vector<double> row, const std::vector<double>& w) {
    for (int h = 0; h < 2; ++h) {
      const double a = row[2 * h], b = row[2 * h + 1];
      const double inv = 1.0 / std::sqrt((a * a + b * b) / 2 + 1e-6);
      row[2 * h] = a * inv * w[0];
      row[2 * h + 1] = b * inv * w[1];
    }
    return row;
  };
  const nlohmann::json qj = nlohmann::json::parse(q), kj = nlohmann::json::parse(k);
  nlohmann::json qn = nlohmann::json::array(), kn = nlohmann::json::array();
  for (const auto& r : qj) qn.push_back(norm(r.get<std::vector<double>>(), {1.5, 0.5}));
  for (const auto& r : kj) kn.push_back(norm(r.get<std::vector<double>>(), {1, 2}));
  const Result by_hand = test::compute_json(R"({"Q": )" + qn.dump() + R"(, "K": )" + kn.dump() +
                                            R"(, "V": )" + v + R"(, "heads": 2})");
  EXPECT_LT(max_diff(*normed.weights, *by_hand.weights), 1e-15);
  EXPECT_LT(max_diff(normed.output, by_hand.output), 1e-15);

  EXPECT_EQ(test::problem_error(R"({"Q": )" + q + R"(, "K": )" + k + R"(, "V": )" + v +
                                R"(, "params": {"q_norm": [1, 1, 1, 1]}})"),
            "t.json: params.q_norm: params.q_norm weighs the Q/K norm, which is off; set "
            "qk_norm to its epsilon (e.g. 1e-6) to turn it on");
  EXPECT_EQ(test::problem_error(R"({"Q": )" + q + R"(, "K": )" + k + R"(, "V": )" + v +
                                R"(, "qk_norm": 1e-6, "params": {"k_norm": [1, 1]}})"),
            "t.json: params.k_norm: length 2 does not match the head width 4 (the Q/K norm "
            "weighs each feature of a head)");
}

TEST(ModernKeys, RopeScalingLinearIsPositionsOverTheFactor) {
  // Linear scaling by 4 at positions 0, 4, 8 is plain RoPE at 0, 1, 2.
  const std::string q = "[[1, 2, -1, 0.5], [0.3, -2, 4, 1], [2, 2, 0, -1]]";
  const std::string v = "[[1, 0], [0, 1], [1, 1]]";
  const Result scaled =
      test::compute_json(R"({"Q": )" + q + R"(, "K": )" + q + R"(, "V": )" + v +
                         R"(, "rope": {"scaling": {"rope_type": "linear", "factor": 2}}})");
  const Result plain = test::compute_json(R"({"Q": )" + q + R"(, "K": )" + q + R"(, "V": )" + v +
                                          R"(, "rope": {"theta": 10000}})");
  EXPECT_GT(max_diff(*scaled.weights, *plain.weights), 1e-6);
  // By hand: the angle of pair p at position t is t·theta^(-2p/4)/2.
  const Problem p =
      test::problem(R"({"Q": )" + q + R"(, "K": )" + q + R"(, "V": )" + v +
                    R"(, "rope": {"scaling": {"rope_type": "linear", "factor": 2}}})");
  ASSERT_TRUE(p.rope.has_value());
  ASSERT_EQ(p.rope->inv_freq.size(), 2u);
  EXPECT_DOUBLE_EQ(p.rope->inv_freq[0], 0.5);
  EXPECT_DOUBLE_EQ(p.rope->inv_freq[1], 0.01 / 2);
  EXPECT_EQ(test::problem_error(R"({"Q": )" + q + R"(, "K": )" + q + R"(, "V": )" + v +
                                R"(, "rope": {"scaling": {"rope_type": "dynamic", "factor": 2}}})"),
            "t.json: rope.scaling: rope_scaling \"max_position_embeddings\" is missing: dynamic "
            "scaling grows the base past the model's max_position_embeddings");
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

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

namespace attn {
namespace {

// --layer all --heatmap FILE draws the model view of the stack it computed,
// with the tokens as labels, as attn heatmap draws the stack's file.
TEST(ModelView, LayerAllDrawsEveryLayersHeads) {
  const std::string dir = model("tiny-llama");
  const std::string svg = test::temp_dir() + "/model-view.svg";
  const std::string npy = test::temp_dir() + "/model-view.npy";
  const auto r = run_attn({"run", "--checkpoint", dir, "--text", "The cat sat on the mat",
                           "--layer", "all", "--heatmap", svg, "-o", npy});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const std::string drawn = read_text(svg);
  std::string why;
  EXPECT_TRUE(test::well_formed_xml(drawn, &why)) << why;
  // Layers and heads named on the margins, the tokens as read (the
  // word's space left out), each cell's tooltip naming its panel.
  for (const char* panel :
       {">L0<", ">L1<", ">H3<", ">mean<", ">cat<", "L1 H3: ", "&apos;cat&apos;"}) {
    EXPECT_NE(drawn.find(panel), std::string::npos) << panel;
  }
  // The cells are the stack's, as attn heatmap draws them from its file.
  const std::string again = test::temp_dir() + "/model-view-2.svg";
  const auto h =
      run_attn({"heatmap", npy, "-o", again, "--labels", "<s>,▁The,▁cat,▁sat,▁on,▁the,▁mat"});
  ASSERT_EQ(h.code, 0) << h.err;
  auto cells = [](const std::string& svg) {
    std::vector<std::string> titles;
    for (size_t at = svg.find("<title>L"); at != std::string::npos;
         at = svg.find("<title>L", at + 1)) {
      // "L1 H3: query 2 '...', key 1 '...': 0.25": the panel and the value.
      const std::string t = svg.substr(at, svg.find("</title>", at) - at);
      titles.push_back(t.substr(0, t.find(':')) + t.substr(t.rfind(':')));
    }
    return titles;
  };
  const std::vector<std::string> mine = cells(drawn);
  EXPECT_EQ(mine.size(), 2u * 5u * 49u);
  EXPECT_TRUE(mine == cells(read_text(again)));
  // A figure alone prints nothing; --of other than weights is one layer's.
  const auto only = run_attn({"run", "--checkpoint", dir, "--ids", "1,2,3", "--layer", "all",
                              "--heatmap", test::temp_dir() + "/only.png"});
  EXPECT_EQ(only.code, 0) << only.err;
  EXPECT_EQ(only.out, "");
  const auto scores = run_attn({"run", "--checkpoint", dir, "--ids", "1,2,3", "--layer", "all",
                                "--heatmap", test::temp_dir() + "/s.png", "--of", "scores"});
  EXPECT_EQ(scores.code, 2);
  EXPECT_EQ(scores.err,
            "attn: error: --layer all keeps every layer's weights only; --of scores goes with "
            "one layer (--layer N)\n");
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// A layer run from token ids traces from them: the ids, the embeddings, the
// hidden states entering the layer and its input norm, then the engine's
// steps from X on.
TEST(TraceFromIds, StartsFromTheTokenIds) {
  const std::string dir = model("tiny-llama");
  const auto r = run_attn({"run", "--checkpoint", dir, "--text", "The cat sat", "--layer", "1",
                           "--trace", "--head", "0"});
  ASSERT_EQ(r.code, 0) << r.err;
  size_t at = 0;
  for (const char* step :
       {"1. Token ids  [4][1]", "the text through ", "2. Embeddings  [4][32]",
        "E[id], the rows of model.embed_tokens.weight",
        "3. Hidden states entering layer 1  [4][32]", "H = layer_0(H⁰)", "4. Layer 1's input norm",
        "RMSNorm: h / √(mean(h²) + ε) · w, ε = 1e-06", "5. Input X  [4][32]", "6. Projection Q"}) {
    const size_t next = r.out.find(step, at);
    ASSERT_NE(next, std::string::npos) << step << "\n" << r.out.substr(0, 3000);
    at = next;
  }
  // Layer 0 has no hidden states before it; Gemma scales its embeddings.
  const auto g = run_attn({"run", "--checkpoint", model("tiny-gemma2"), "--ids", "2,17,29",
                           "--layer", "0", "--trace", "--head", "1"});
  ASSERT_EQ(g.code, 0) << g.err;
  EXPECT_EQ(g.out.find("Hidden states entering"), std::string::npos);
  EXPECT_NE(g.out.find("E[id] · √hidden_size"), std::string::npos);
  EXPECT_NE(g.out.find("Gemma's RMSNorm: h / √(mean(h²) + ε) · (1 + w)"), std::string::npos);
  // Every trace format words them.
  for (const char* format : {"json", "markdown", "latex"}) {
    const auto f = run_attn({"run", "--checkpoint", dir, "--ids", "1,17,29", "--layer", "1",
                             "--trace", "--trace-format", format});
    ASSERT_EQ(f.code, 0) << format << ": " << f.err;
    EXPECT_NE(f.out.find("Embeddings"), std::string::npos) << format;
  }
  // The LaTeX of a model's layer (RoPE's θ, the q/k norm, the steps from
  // the ids) compiles.
  if (std::system("command -v pdflatex >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "pdflatex is not installed (apt-get install texlive-latex-base)";
  }
  const auto tex = run_attn({"run", "--checkpoint", model("tiny-gemma3"), "--ids", "1,17,29",
                             "--layer", "1", "--trace", "--trace-format", "latex", "--head", "0"});
  ASSERT_EQ(tex.code, 0) << tex.err;
  const std::string tex_dir = test::temp_dir() + "/model_tex";
  fs::create_directories(tex_dir);
  test::write_temp("model_tex/t.tex",
                   "\\documentclass{article}\n\\usepackage{amsmath}\n"
                   "\\begin{document}\n" +
                       tex.out + "\n\\end{document}\n");
  const int rc = std::system(("cd " + tex_dir +
                              " && pdflatex -interaction=nonstopmode -halt-on-error t.tex "
                              ">pdflatex.log 2>&1")
                                 .c_str());
  EXPECT_EQ(rc, 0) << read_text(tex_dir + "/pdflatex.log").substr(0, 4000);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

TEST(TextFile, IsTheTextOfTheFile) {
  const std::string dir = model("tiny-llama");
  const std::string file = test::write_temp("sentence.txt", "The cat sat on the mat\n");
  const auto a = run_attn(
      {"run", "--checkpoint", dir, "--text-file", file, "--layer", "1", "-f", "json", "-w"});
  const auto b = run_attn({"run", "--checkpoint", dir, "--text", "The cat sat on the mat",
                           "--layer", "1", "-f", "json", "-w"});
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  const auto piped =
      run_attn({"run", "--checkpoint", dir, "--text-file", "-", "--layer", "1", "-f", "json", "-w"},
               "The cat sat on the mat\n");
  EXPECT_EQ(piped.out, b.out);
  const auto both = run_attn({"run", "--checkpoint", dir, "--text-file", file, "--text", "x"});
  EXPECT_EQ(both.code, 2);
  EXPECT_EQ(both.err, "attn: error: give --text or --text-file, not both\n");
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// -o FILE.npy with --layer all is written while the stack grows (a layer
// at a time, on a thread of its own) and renamed over FILE at the end with
// the other outputs: the same bytes as the stack written whole
// (--weights-out), and nothing replaced, nothing left behind, when another
// output fails after the layers were computed.
TEST(ModelView, TheStackIsWrittenWhileItGrowsAllOrNone) {
  const std::string dir = test::temp_dir() + "/streamed_stack";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string m = model("tiny-llama");
  const std::string a = dir + "/a.npy", b = dir + "/b.npy";
  for (const char* dtype : {"f64", "f32"}) {
    const auto r = run_attn({"run", "--checkpoint", m, "--text", "The cat sat", "--layer", "all",
                             "--dtype", dtype, "-o", a, "--weights-out", b});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_text(a), read_text(b)) << dtype;
  }
  auto leftovers = [&] {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      n += e.path().filename().string().rfind(".attn-", 0) == 0;
    }
    return n;
  };
  EXPECT_EQ(leftovers(), 0);
  // The figure cannot be written: the stack's file stays as it was.
  const std::string full = dir + "/full.svg";
  fs::create_symlink("/dev/full", full);
  std::ofstream(a, std::ios::trunc) << "old";
  const auto f = run_attn({"run", "--checkpoint", m, "--text", "The cat sat", "--layer", "all",
                           "-o", a, "--heatmap", full});
  EXPECT_EQ(f.code, 4) << f.err;
  EXPECT_EQ(read_text(a), "old");
  EXPECT_EQ(leftovers(), 0);
}

}  // namespace
}  // namespace attn
