// Real-model inputs through the program: FILE.safetensors:NAME and
// FILE.npz:NAME anywhere a matrix goes; `attn run --checkpoint DIR --layer
// N` against the layer outputs a PyTorch re-implementation of each
// architecture computed for the tiny models in data/models
// (data/models/make_tiny_models.py); config.json values checked where they
// are read, checkpoints that are devices, FIFOs or links elsewhere; and
// stacks of attention weights drawn as the model view. The files as the
// library reads them: model_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/npy.h"
#include "attn/output.h"
#include "attn/safetensors.h"
#include "model_util.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::load_npy5;
using test::max_diff;
using test::model;
using test::model_copy;
using test::Piece;
using test::read_text;
using test::run_attn;
using test::safetensors_bytes;
using test::source_path;
using test::temp_dir;
using test::tiny;
using test::write_temp;

Tensor<double> load_npy(const std::string& path) {
  return parse_npy(read_text(path), path, CellKind::kExtended).values;
}

std::string out_npy() {
  static int n = 0;
  return temp_dir() + "/model_out_" + std::to_string(n++) + ".npy";
}

TEST(TensorReferences, SafetensorsAndNpzMembersAreMatrixInputs) {
  const std::string x = model("tiny-llama/x_layer0.npy");
  const std::string o1 = out_npy(), o2 = out_npy(), o3 = out_npy();
  ASSERT_EQ(run_attn({"run", "--x", x, "-o", o1}).code, 0);
  // The same X as one tensor of a safetensors file and of an .npz archive.
  const Tensor<double> xv = load_npy(x);
  std::string raw(static_cast<size_t>(xv.size()) * 8, '\0');
  std::memcpy(raw.data(), xv.data(), raw.size());
  const std::string st = temp_dir() + "/inputs.safetensors";
  std::ofstream(st, std::ios::binary) << safetensors_bytes(
      {{"hidden", "F64", {7, 32}, raw}, {"other", "F64", {1}, std::string(8, '\0')}});
  test::Run r = run_attn({"run", "--x", st + ":hidden", "-o", o2});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_text(o1), read_text(o2));
  // Without a name, a file of two tensors asks for one.
  r = run_attn({"run", "--x", st});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("holds 2 tensors; choose one as " + st + ":NAME (hidden, other)"),
            std::string::npos)
      << r.err;
  // Expected numbers from a safetensors tensor: X is not the output, so
  // --check reads it and reports the difference.
  r = run_attn({"run", "--x", st + ":hidden", "--expect", st + ":hidden"});
  EXPECT_EQ(r.code, 1) << r.err;
  r = run_attn({"run", "--x", model("tiny-llama/attentions.npz") + ":attentions", "-o", o3});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("rank 5"), std::string::npos) << r.err;
}

struct ModelCase {
  const char* dir;
  int layer;
};

class TinyModel : public ::testing::TestWithParam<ModelCase> {};

TEST_P(TinyModel, LayerOutputMatchesPyTorch) {
  const ModelCase c = GetParam();
  const std::string dir = model(c.dir);
  const std::string l = std::to_string(c.layer);
  const std::string out = out_npy();
  const test::Run r = run_attn(
      {"run", "--checkpoint", dir, "--layer", l, "--x", dir + "/x_layer" + l + ".npy", "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  // The references were computed in float64 from the stored weights (F32
  // or BF16), so the only differences are the order of the sums.
  EXPECT_LT(max_diff(load_npy(out), load_npy(dir + "/attn_out_layer" + l + ".npy")), 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Models, TinyModel,
                         ::testing::Values(ModelCase{"tiny-llama", 0}, ModelCase{"tiny-llama", 1},
                                           ModelCase{"tiny-llama-bf16", 0},
                                           ModelCase{"tiny-llama-bf16", 1},
                                           ModelCase{"tiny-gpt2", 0}, ModelCase{"tiny-gpt2", 1},
                                           ModelCase{"tiny-bert", 0}, ModelCase{"tiny-bert", 1}),
                         [](const auto& info) {
                           std::string n = std::string(info.param.dir) + "_layer" +
                                           std::to_string(info.param.layer);
                           for (char& ch : n) {
                             if (ch == '-') ch = '_';
                           }
                           return n;
                         });

TEST(Checkpoint, Bf16WeightsStayWithinTheirRoundingOfTheF32Layer) {
  // The BF16 model is the F32 one rounded (8 significant bits, relative
  // error <= 2^-9 per weight). Its layer output on the same X differs from
  // the F32 output, but by no more than a few times that relative error.
  const std::string x = model("tiny-llama/x_layer0.npy");
  const std::string a = out_npy(), b = out_npy();
  ASSERT_EQ(run_attn({"run", "--checkpoint", model("tiny-llama"), "--x", x, "-o", a}).code, 0);
  ASSERT_EQ(run_attn({"run", "--checkpoint", model("tiny-llama-bf16"), "--x", x, "-o", b}).code, 0);
  const Tensor<double> f32 = load_npy(a), bf16 = load_npy(b);
  double scale = 0;
  for (double v : f32.values()) scale = std::max(scale, std::fabs(v));
  const double d = max_diff(f32, bf16);
  EXPECT_GT(d, 0.0);  // the rounding is really there
  EXPECT_LT(d, 16 * std::ldexp(1.0, -9) * scale);
}

TEST(Checkpoint, TokensBecomeTheLabels) {
  const std::string dir = model("tiny-gpt2");
  const test::Run r = run_attn({"run", "--checkpoint", dir, "--x", dir + "/x_layer0.npy",
                                "--tokens", dir + "/tokens.json", "-w"});
  ASSERT_EQ(r.code, 0) << r.err;
  // The table shows them as they read (Ġcat is cat); JSON keeps them as given.
  EXPECT_NE(r.out.find("\ncat "), std::string::npos) << r.out;
  const test::Run j = run_attn({"run", "--checkpoint", dir, "--x", dir + "/x_layer0.npy",
                                "--tokens", dir + "/tokens.json", "-f", "json"});
  EXPECT_NE(j.out.find("\"Ġcat\""), std::string::npos) << j.out;
}

// --weights-out of a checkpoint's layer is what transformers'
// output_attentions[layer] is, [batch][heads][q][k] with a batch of one,
// whether X came from --text, --ids or a 2-D --x; --head keeps the batch.
TEST(Checkpoint, WeightsOutHasHuggingFacesBatchAxis) {
  const std::string dir = model("tiny-llama");
  const Tensor<double> hf = load_npy5(dir + "/attentions.npy");  // [2][1][4][7][7]
  Tensor<double> layer1(Shape{1, 4, 7, 7});
  std::copy(hf.data() + layer1.size(), hf.data() + 2 * layer1.size(), layer1.data());
  const std::string text = out_npy(), ids = out_npy(), x = out_npy(), head = out_npy();
  ASSERT_EQ(run_attn({"run", "--checkpoint", dir, "--text", "hello world", "--layer", "0",
                      "--weights-out", text, "-o", "/dev/null"})
                .code,
            0);
  EXPECT_EQ(load_npy(text).shape(), (Shape{1, 4, 3, 3}));
  ASSERT_EQ(run_attn({"run", "--checkpoint", dir, "--ids", "1,17,29,8,33,12,24", "--layer", "1",
                      "--weights-out", ids, "-o", "/dev/null"})
                .code,
            0);
  ASSERT_EQ(run_attn({"run", "--checkpoint", dir, "--x", dir + "/x_layer1.npy", "--layer", "1",
                      "--weights-out", x, "-o", "/dev/null"})
                .code,
            0);
  for (const std::string& f : {ids, x}) {
    const Tensor<double> w = load_npy(f);
    ASSERT_EQ(w.shape(), layer1.shape()) << f;
    EXPECT_LT(max_diff(w, layer1), 1e-6) << f;
  }
  ASSERT_EQ(run_attn({"run", "--checkpoint", dir, "--x", dir + "/x_layer1.npy", "--layer", "1",
                      "--head", "2", "--weights-out", head, "-o", "/dev/null"})
                .code,
            0);
  EXPECT_EQ(load_npy(head).shape(), (Shape{1, 7, 7}));  // w[:, 2]
}

TEST(Checkpoint, MistakesSayWhatWasLookedFor) {
  const std::string x = model("tiny-llama/x_layer0.npy");
  test::Run r = run_attn({"run", "--checkpoint", model("tiny-llama"), "--layer", "2", "--x", x});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--layer 2: the model has 2 layers (0 to 1)"), std::string::npos) << r.err;
  // --arch over a config.json that says otherwise is refused, not obeyed.
  r = run_attn({"run", "--checkpoint", model("tiny-llama"), "--arch", "gpt2", "--x", x});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --arch gpt2: " + model("tiny-llama") +
                       "/config.json says model_type \"llama\"; drop --arch (it names the "
                       "architecture of a checkpoint that has no config.json)\n");
  // An architecture attn does not read names itself and the ones it does.
  r = run_attn({"run", "--checkpoint", model("tiny-llama"), "--arch", "bloom", "--x", x});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("architecture \"bloom\" is not one attn reads (llama, mistral, "),
            std::string::npos)
      << r.err;
  r = run_attn({"run", "--layer", "1", "--x", x});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--layer needs --checkpoint"), std::string::npos) << r.err;

  // A copy of the model with its config and tensors changed.
  const std::string dir = temp_dir() + "/llama_copy";
  fs::create_directories(dir);
  fs::copy_file(model("tiny-llama/model.safetensors"), dir + "/model.safetensors",
                fs::copy_options::overwrite_existing);
  std::string config = read_text(model("tiny-llama/config.json"));
  const std::string scaled = config;
  std::ofstream(dir + "/config.json")
      << config.replace(config.find("\"rope_theta\""), 0,
                        "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0},\n  ");
  r = run_attn({"run", "--checkpoint", dir, "--x", x});
  EXPECT_EQ(r.code, 3);
  // Llama 3.1's scaling without its other fields is refused by name.
  EXPECT_NE(r.err.find("rope_scaling \"original_max_position_embeddings\" is missing (llama3 "
                       "scaling needs it)"),
            std::string::npos)
      << r.err;
  std::ofstream(dir + "/config.json") << scaled;
  fs::remove(dir + "/model.safetensors");
  r = run_attn({"run", "--checkpoint", dir, "--x", x});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("no model.safetensors or model.safetensors.index.json"), std::string::npos)
      << r.err;
  // PyTorch's pickled weights: the file found and the line that converts it.
  std::ofstream(dir + "/pytorch_model.bin") << "not read";
  r = run_attn({"run", "--checkpoint", dir, "--x", x});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("has pytorch_model.bin but no model.safetensors, and attn reads "
                       "safetensors only; convert it: python3 -c \"import torch; from "
                       "safetensors.torch import save_file; save_file({k: v.contiguous().clone() "
                       "for k, v in torch.load('" +
                       dir + "/pytorch_model.bin').items()}, '" + dir + "/model.safetensors')\""),
            std::string::npos)
      << r.err;
  fs::remove(dir + "/pytorch_model.bin");
  // An index may only name shards beside it.
  std::ofstream(dir + "/model.safetensors.index.json")
      << R"({"weight_map": {"model.layers.0.self_attn.q_proj.weight": "../../etc/passwd"}})";
  r = run_attn({"run", "--checkpoint", dir, "--x", x});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("shards must be files in the checkpoint's directory"), std::string::npos)
      << r.err;
  // A tensor the architecture needs and the file lacks is named.
  fs::remove(dir + "/model.safetensors.index.json");
  const SafetensorsFile full = SafetensorsFile::open(model("tiny-llama/model.safetensors"));
  std::vector<Piece> keep;
  for (const SafetensorsEntry& e : full.tensors()) {
    if (e.name.find("layers.0.self_attn.k_proj") != std::string::npos) continue;
    const BinaryArray v = full.view(e);
    keep.push_back(
        {e.name, e.dtype, e.shape,
         std::string(reinterpret_cast<const char*>(v.data), static_cast<size_t>(e.end - e.begin))});
  }
  std::ofstream(dir + "/model.safetensors", std::ios::binary) << safetensors_bytes(keep);
  r = run_attn({"run", "--checkpoint", dir, "--x", x});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("no tensor named layers.0.self_attn.k_proj.weight"), std::string::npos)
      << r.err;
}

TEST(Checkpoint, OneSafetensorsFileWithConfigBesideIt) {
  const std::string dir = model("tiny-bert");
  const std::string a = out_npy(), b = out_npy();
  ASSERT_EQ(
      run_attn({"run", "--checkpoint", dir, "--x", dir + "/x_layer1.npy", "--layer", "1", "-o", a})
          .code,
      0);
  ASSERT_EQ(run_attn({"run", "--checkpoint", dir + "/model.safetensors", "--x",
                      dir + "/x_layer1.npy", "--layer", "1", "-o", b})
                .code,
            0);
  EXPECT_EQ(read_text(a), read_text(b));
}

TEST(StackCli, EveryFileKindDrawsTheSameModelView) {
  const std::string dir = model("tiny-llama");
  const std::string t = dir + "/tokens.json";
  // JSON too: json.dump(np.stack(attentions).tolist()), bare or in a document.
  std::string array;
  append_json_tensor(array, load_npy5(dir + "/attentions.npy"), DType::kF64, 0);
  const std::string bare = temp_dir() + "/attentions.json", doc = temp_dir() + "/doc.json";
  std::ofstream(bare) << array;
  std::ofstream(doc) << "{\"attentions\": " << array << "}";
  std::vector<std::string> pngs;
  for (const std::string& in :
       {dir + "/attentions.npy", dir + "/attentions.npz:attentions",
        dir + "/attentions.safetensors:attentions", dir + "/attentions.safetensors", bare, doc}) {
    const std::string out = temp_dir() + "/mv" + std::to_string(pngs.size()) + ".svg";
    std::vector<std::string> args = {"heatmap", in,           "--tokens", t,
                                     "--title", "tiny llama", "-o",       out};
    if (in == doc) args.insert(args.end(), {"--key", "attentions"});
    const test::Run r = run_attn(args);
    ASSERT_EQ(r.code, 0) << in << ": " << r.err;
    pngs.push_back(read_text(out));
  }
  for (const std::string& p : pngs) EXPECT_EQ(p, pngs[0]);
  EXPECT_NE(pngs[0].find(">mean<"), std::string::npos);     // the heads' names, once
  EXPECT_NE(pngs[0].find(">L1<"), std::string::npos);       // the layers'
  EXPECT_NE(pngs[0].find("L1 mean: "), std::string::npos);  // a cell's tooltip
  // SentencePiece's ▁ left out of the tokens as shown.
  EXPECT_NE(pngs[0].find(">cat<"), std::string::npos);
  EXPECT_EQ(pngs[0].find("▁"), std::string::npos);
}

TEST(StackCli, ChoicesAndMistakes) {
  const std::string dir = model("tiny-gpt2");
  const std::string in = dir + "/attentions.npy", out = temp_dir() + "/stack.png";
  EXPECT_EQ(run_attn({"heatmap", in, "--layer", "1", "--head", "3", "-o", out}).code, 0);
  test::Run r = run_attn({"heatmap", in, "--layer", "2", "-o", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--layer 2: out of range; the stack has 2 layers (0 to 1)"),
            std::string::npos)
      << r.err;
  r = run_attn({"heatmap", dir + "/x_layer0.npy", "--layer", "0", "-o", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not a stack of attention weights"), std::string::npos) << r.err;
  r = run_attn({"heatmap", in, "--tokens", model("tiny-llama/ids.json"), "-o", out});
  EXPECT_EQ(r.code, 3);  // ids are numbers, not tokens
  r = run_attn({"heatmap", in, "--labels", "a,b", "-o", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--labels: 2 labels for 7 queries"), std::string::npos) << r.err;
  r = run_attn({"heatmap", in, "--stack", "heads", "-o", out});
  EXPECT_EQ(r.code, 2);
  // Rank 4 [layers][heads][q][k] with --stack layers is the same figure.
  const Tensor<double> s = load_npy5(in);
  Tensor<double> four(Shape{2, 4, 7, 7}, s.values());
  const std::string four_path = temp_dir() + "/four.npy";
  std::ofstream(four_path, std::ios::binary) << format_npy(four, DType::kF64);
  const std::string a = temp_dir() + "/a.svg", b = temp_dir() + "/b.svg";
  ASSERT_EQ(run_attn({"heatmap", in, "--title", "t", "-o", a}).code, 0);
  r = run_attn({"heatmap", four_path, "--stack", "layers", "--title", "t", "-o", b});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string sa = read_text(a), sb = read_text(b);
  // The subtitles name the shapes; the panels are the same.
  sa.erase(sa.find("stack ["), sa.find(" [layers]") - sa.find("stack ["));
  sb.erase(sb.find("stack ["), sb.find(" [layers]") - sb.find("stack ["));
  EXPECT_EQ(sa, sb);
}

// A rank-4 array is [batch][heads][q][k] or a squeezed stack
// [layers][heads][q][k]. What says which: an attn result's recorded axes,
// --stack, --layer (only a stack has layers); else the default, batch,
// which stderr names with the flag that reads the other way.
TEST(StackCli, RankFourReadingIsSaidOrChosen) {
  const std::string in = model("tiny-gpt2/attentions.npy");
  const Tensor<double> s = load_npy5(in);
  Tensor<double> four(Shape{2, 4, 7, 7}, s.values());
  const std::string four_path = temp_dir() + "/squeezed.npy";
  std::ofstream(four_path, std::ios::binary) << format_npy(four, DType::kF64);
  const std::string out = temp_dir() + "/four.svg";
  test::Run r = run_attn({"heatmap", four_path, "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "attn: warning: " + four_path +
                       ": [2][4][7][7] drawn as [batch][heads][q][k]; --stack layers draws it as "
                       "[layers][heads][q][k], a stack of layers\n");
  EXPECT_NE(read_text(out).find(">batch 1, head 3<"), std::string::npos);
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--stack", "batch"}, {"-q"}, {"--stack", "layers"}}) {
    std::vector<std::string> args = {"heatmap", four_path, "-o", out};
    args.insert(args.end(), flags.begin(), flags.end());
    r = run_attn(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "") << flags[0];
  }
  // --layer N: the array has layers.
  const std::string a = temp_dir() + "/layer1a.svg", b = temp_dir() + "/layer1b.svg";
  r = run_attn({"heatmap", four_path, "--layer", "1", "-o", a});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(run_attn({"heatmap", four_path, "--stack", "layers", "--layer", "1", "-o", b}).code, 0);
  EXPECT_EQ(read_text(a), read_text(b));
  r = run_attn({"heatmap", four_path, "--stack", "batch", "--layer", "1", "-o", a});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not a stack of attention weights"), std::string::npos) << r.err;
  // A first axis of 1 draws the same either way; a result says its axes.
  Tensor<double> one(Shape{1, 4, 7, 7},
                     Values<double>(s.values().begin(), s.values().begin() + 4 * 49));
  const std::string one_path = temp_dir() + "/one_layer.npy";
  std::ofstream(one_path, std::ios::binary) << format_npy(one, DType::kF64);
  r = run_attn({"heatmap", one_path, "-o", out});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string result = temp_dir() + "/multihead.json";
  ASSERT_EQ(run_attn({"run", "--example", "multihead", "-w", "-f", "json", "-o", result}).code, 0);
  r = run_attn({"heatmap", result, "-o", out});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(StackCli, JsonResultsCarryTheirLabelsIntoTheirFigure) {
  const std::string dir = model("tiny-gpt2");
  const std::string json = temp_dir() + "/labelled.json", svg = temp_dir() + "/labelled.svg";
  test::Run r = run_attn({"run", "--checkpoint", dir, "--x", dir + "/x_layer0.npy", "--tokens",
                          dir + "/tokens.json", "-w", "-o", json});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = read_text(json);
  EXPECT_EQ(text.rfind("{\n  \"labels\": {\"queries\": [\"The\", \"Ġcat\"", 0), 0u) << text;
  r = run_attn({"heatmap", json, "--head", "1", "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(read_text(svg).find(">mat<"), std::string::npos);  // Ġ: a space, left out
  r = run_attn({"heatmap", json, "--head", "1", "--token-style", "raw", "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(read_text(svg).find(">Ġmat<"), std::string::npos);
  // The same file is a valid --expect: its labels are not numbers to compare.
  r = run_attn({"run", "--checkpoint", dir, "--x", dir + "/x_layer0.npy", "-w", "--expect", json});
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(Checkpoint, ConfigValuesAreCheckedWhereTheyAreRead) {
  struct Case {
    std::string model;
    nlohmann::json patch;
    std::string message;  // after "attn: error: DIR/config.json: "
  };
  const std::vector<Case> cases = {
      {"tiny-llama",
       {{"partial_rotary_factor", -1}},
       "\"partial_rotary_factor\" must be in (0, 1], got -1"},
      {"tiny-llama",
       {{"partial_rotary_factor", -0.5}},
       "\"partial_rotary_factor\" must be in (0, 1], got -0.5"},
      {"tiny-llama",
       {{"partial_rotary_factor", 1e300}},
       "\"partial_rotary_factor\" must be in (0, 1], got 1e+300"},
      {"tiny-llama",
       {{"partial_rotary_factor", -1e300}},
       "\"partial_rotary_factor\" must be in (0, 1], got -1e+300"},
      {"tiny-llama",
       {{"partial_rotary_factor", 0}},
       "\"partial_rotary_factor\" must be in (0, 1], got 0"},
      {"tiny-llama",
       {{"partial_rotary_factor", 0.01}},
       "\"partial_rotary_factor\" 0.01 rotates 0 of head_dim 8 dimensions; RoPE rotates an even "
       "number, at least 2"},
      {"tiny-llama", {{"rope_theta", 0}}, "\"rope_theta\" must be a positive number, got 0"},
      {"tiny-llama", {{"rope_theta", -1}}, "\"rope_theta\" must be a positive number, got -1"},
      {"tiny-llama",
       {{"model_type", "gemma2"}, {"query_pre_attn_scalar", -8}},
       "\"query_pre_attn_scalar\" must be a positive number, got -8"},
      {"tiny-llama",
       {{"model_type", "gemma2"}, {"query_pre_attn_scalar", 0}},
       "\"query_pre_attn_scalar\" must be a positive number, got 0"},
      {"tiny-llama",
       {{"model_type", "gemma2"}, {"attn_logit_softcapping", 0}},
       "\"attn_logit_softcapping\" must be a positive number, got 0"},
      {"tiny-llama",
       {{"model_type", "gemma2"}, {"attn_logit_softcapping", -50}},
       "\"attn_logit_softcapping\" must be a positive number, got -50"},
      {"tiny-llama",
       {{"layer_types", {"foo", "full_attention"}}},
       "\"layer_types\"[0] is \"foo\"; expected \"full_attention\" or \"sliding_attention\""},
      {"tiny-bert",
       {{"position_embedding_type", 5}},
       "\"position_embedding_type\" must be a string, got 5"},
  };
  int i = 0;
  for (const Case& c : cases) {
    const std::string m = model_copy(c.model, "config" + std::to_string(i++), c.patch);
    const auto r = run_attn(
        {"run", "--checkpoint", m, "--layer", "0", "--x", m + "/x_layer0.npy", "-o", "/dev/null"});
    EXPECT_EQ(r.code, 3) << c.patch.dump() << ": " << r.err;
    EXPECT_EQ(r.err, "attn: error: " + m + "/config.json: " + c.message + "\n") << c.patch.dump();
  }
  // A hidden size the tensors do not have.
  const std::string m = model_copy("tiny-llama", "hidden", {{"hidden_size", 64}});
  const auto r = run_attn({"run", "--checkpoint", m, "--layer", "0", "--x", m + "/x_layer0.npy"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + m +
                       "/model.safetensors:model.layers.0.self_attn.q_proj.weight: has shape "
                       "[32][32] but the config gives [32][64] for the query projection (llama: " +
                       m + "/config.json)\n");
  const std::string b = model_copy("tiny-bert", "bert_hidden", {{"hidden_size", 64}});
  const auto rb = run_attn({"run", "--checkpoint", b, "--layer", "0", "--x", b + "/x_layer0.npy"});
  EXPECT_EQ(rb.code, 3) << rb.err;
  EXPECT_NE(rb.err.find("encoder.layer.0.attention.self.query.weight: has shape [32][32] but the "
                        "config gives [64][64] for the query projection (bert: "),
            std::string::npos)
      << rb.err;
}

TEST(Checkpoint, CheckpointDevicesFifosAndForeignLinks) {
  const auto z = run_attn(
      {"run", "--checkpoint", "/dev/zero", "--layer", "0", "--x", tiny("tiny-llama/x_layer0.npy")});
  EXPECT_EQ(z.code, 3);
  EXPECT_EQ(z.err,
            "attn: error: /dev/zero: not a checkpoint: --checkpoint takes a directory, a "
            ".safetensors file or a .gguf file, and this is none of them (a device or a pipe?)\n");

  const std::string dir = temp_dir() + "/sharded";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(tiny("tiny-llama/config.json"), dir + "/config.json");
  fs::copy_file(tiny("tiny-llama/model.safetensors"), dir + "/shard1.safetensors");
  std::ofstream(dir + "/model.safetensors.index.json")
      << R"({"weight_map": {"model.layers.0.self_attn.q_proj.weight": "shard2.safetensors",)"
      << R"( "model.layers.0.self_attn.k_proj.weight": "shard1.safetensors"}})";
  ASSERT_EQ(::mkfifo((dir + "/shard2.safetensors").c_str(), 0600), 0);
  const auto f =
      run_attn({"run", "--checkpoint", dir, "--layer", "0", "--x", tiny("tiny-llama/x_layer0.npy")},
               "", {}, {"timeout", "20"});
  EXPECT_EQ(f.code, 3) << "a FIFO shard must be refused, not waited for: " << f.err;
  EXPECT_EQ(f.err, "attn: error: " + dir +
                       "/model.safetensors.index.json: weight_map names \"shard2.safetensors\", "
                       "which is not a regular file in the checkpoint's directory\n");

  // A shard linked to a text file: the message does not echo its bytes.
  fs::remove(dir + "/shard2.safetensors");
  const std::string secret = write_temp("secret.txt", "root:x:0:0:secret words\n");
  fs::create_symlink(secret, dir + "/shard2.safetensors");
  const auto s = run_attn(
      {"run", "--checkpoint", dir, "--layer", "0", "--x", tiny("tiny-llama/x_layer0.npy")});
  EXPECT_EQ(s.code, 3);
  const uint64_t first8 = 0x303a783a746f6f72ull;  // "root:x:0" as the header length
  EXPECT_EQ(s.err.find(std::to_string(first8)), std::string::npos) << s.err;
  EXPECT_EQ(s.err.find("root"), std::string::npos) << s.err;
}

}  // namespace
}  // namespace attn
