// The forward pass from token ids to a layer's attention input, against the
// float64 PyTorch re-implementation of each architecture's forward in
// data/models/make_tiny_models.py (x_layerN.npy: what enters layer N's
// attention), and `attn run --checkpoint DIR --ids|--text` through the
// program.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/checkpoint.h"
#include "attn/error.h"
#include "attn/npy.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::read_text;
using test::run_attn;
using test::source_path;

std::string model(const std::string& rel) { return source_path("data/models/" + rel); }

std::vector<int64_t> ids_of(const std::string& name) {
  return nlohmann::json::parse(read_text(model(name + "/ids.json"))).get<std::vector<int64_t>>();
}

std::string ids_flag(const std::string& name) {
  std::string s;
  for (int64_t id : ids_of(name)) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

// The numbers of a nested JSON array, row-major.
std::vector<double> flat(const nlohmann::json& j) {
  std::vector<double> out;
  if (j.is_number()) {
    out.push_back(j.get<double>());
    return out;
  }
  for (const nlohmann::json& e : j) {
    const std::vector<double> v = flat(e);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

double max_diff(const Tensor<double>& a, const Tensor<double>& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double m = 0;
  for (int64_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    m = std::max(m, std::fabs(a[i] - b[i]));
  }
  return m;
}

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
                         ::testing::Values("tiny-llama", "tiny-gpt2", "tiny-bert"));

TEST(ForwardCli, IdsGiveTheWeightsOfTheLayersInputAndTheTokensAsLabels) {
  for (const std::string name : {"tiny-llama", "tiny-gpt2", "tiny-bert"}) {
    const auto from_ids = run_attn({"run", "--checkpoint", model(name), "--layer", "1", "--ids",
                                    ids_flag(name), "-f", "json", "-w"});
    const auto from_x = run_attn({"run", "--checkpoint", model(name), "--layer", "1", "--x",
                                  model(name + "/x_layer1.npy"), "-f", "json", "-w"});
    ASSERT_EQ(from_ids.code, 0) << from_ids.err;
    ASSERT_EQ(from_x.code, 0) << from_x.err;
    const auto a = flat(nlohmann::json::parse(from_ids.out)["weights"]),
               b = flat(nlohmann::json::parse(from_x.out)["weights"]);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12) << name;
  }
}

TEST(ForwardCli, TextRunsTheCheckpointsTokenizerFirst) {
  // tiny-llama with a tokenizer.json over its own seven tokens.
  const std::string dir = test::temp_dir() + "/tiny-llama-text";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors"}) {
    fs::copy_file(model(std::string("tiny-llama/") + f), dir + "/" + f);
  }
  const auto tokens = nlohmann::json::parse(read_text(model("tiny-llama/tokens.json")));
  const std::vector<int64_t> ids = ids_of("tiny-llama");
  nlohmann::json vocab = nlohmann::json::object();
  for (size_t i = 0; i < ids.size(); ++i) vocab[tokens[i].get<std::string>()] = ids[i];
  const nlohmann::json tok = {
      {"version", "1.0"},
      {"added_tokens", {{{"id", 1}, {"content", "<s>"}, {"special", true}, {"normalized", false}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Metaspace"},
        {"replacement", "▁"},
        {"prepend_scheme", "always"},
        {"split", true}}},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single",
         {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
      {"model", {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", "<s>"}}}};
  std::ofstream(dir + "/tokenizer.json") << tok.dump();
  const auto r = run_attn({"run", "--checkpoint", dir, "--layer", "1", "--text",
                           "The cat sat on the mat", "-f", "json", "-w"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["labels"]["queries"],
            (std::vector<std::string>{"<s>", " The", " cat", " sat", " on", " the", " mat"}));
  const auto from_x = run_attn({"run", "--checkpoint", model("tiny-llama"), "--layer", "1", "--x",
                                model("tiny-llama/x_layer1.npy"), "-f", "json", "-w"});
  ASSERT_EQ(from_x.code, 0) << from_x.err;
  const auto a = flat(j["weights"]);
  const auto b = flat(nlohmann::json::parse(from_x.out)["weights"]);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12);
}

TEST(ForwardCli, MistakesNameWhatIsMissing) {
  const std::string llama = model("tiny-llama");
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"run", "--checkpoint", llama, "--layer", "0"},
       2,
       "--checkpoint " + llama +
           " --layer 0: no input; give --text TEXT or --ids I,J,... (the layers before it run "
           "first), or the hidden states entering the layer with --x FILE"},
      {{"run", "--ids", "1,2"}, 2, "--ids needs --checkpoint DIR (the model that reads it)"},
      {{"run", "--checkpoint", llama, "--ids", "1,2", "--text", "x"},
       2,
       "give --text or --ids, not both"},
      {{"run", "--checkpoint", llama, "--ids", "1,x"},
       2,
       "--ids: expected token ids such as 1,2,3, got 'x'"},
      {{"run", "--checkpoint", llama, "--ids", "1,99"},
       2,
       "--ids: id 99 is past embed_tokens.weight's 40 rows"},
      {{"run", "--checkpoint", llama, "--ids", "1,2", "--x", llama + "/x_layer0.npy"},
       2,
       "--ids computes the layer's input; give it or --x (or a document), not both"},
      {{"run", "--checkpoint", llama, "--text", "hi"},
       4,
       llama + ": no tokenizer.json in this directory"},
      {{"run", "--checkpoint", llama, "--ids", "1,2", "--layer", "5"},
       2,
       "--layer 5: the model has 2 layers (0 to 1)"},
  };
  for (const Case& c : cases) {
    const auto r = run_attn(c.args);
    EXPECT_EQ(r.code, c.code) << c.err;
    EXPECT_EQ(r.err, "attn: error: " + c.err + "\n");
  }
}

}  // namespace
}  // namespace attn
