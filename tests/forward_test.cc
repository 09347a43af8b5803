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

using test::model;

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

using test::max_diff;

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

TEST(ForwardCli, IdsGiveTheWeightsOfTheLayersInputAndTheTokensAsLabels) {
  for (const std::string name : {"tiny-llama", "tiny-gemma2", "tiny-gpt2", "tiny-bert"}) {
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
  // Each tiny model has a tokenizer.json of its family's structure
  // (data/models/make_tiny_tokenizers.py) that gives its reference ids.
  const std::vector<std::pair<std::string, std::string>> sentences = {
      {"tiny-llama", "The cat sat on the mat"},
      {"tiny-gemma2", "The cat sat on the mat"},
      {"tiny-gpt2", "The cat sat on the mat."},
      {"tiny-bert", "The cat sat on mat"}};
  for (const auto& [name, text] : sentences) {
    const auto r = run_attn(
        {"run", "--checkpoint", model(name), "--layer", "1", "--text", text, "-f", "json", "-w"});
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    std::vector<std::string> want;
    for (const nlohmann::json& t : nlohmann::json::parse(read_text(model(name + "/tokens.json")))) {
      const std::string tk = t.get<std::string>();
      std::string shown;
      // As the tokens read: SentencePiece's ▁ and GPT-2's Ġ are spaces.
      for (size_t i = 0; i < tk.size();) {
        if (tk.compare(i, 3, "▁") == 0) {
          shown += ' ';
          i += 3;
        } else if (tk.compare(i, 2, "Ġ") == 0) {
          shown += ' ';
          i += 2;
        } else {
          shown += tk[i++];
        }
      }
      want.push_back(shown);
    }
    EXPECT_EQ(j["labels"]["queries"], want) << name;
    const auto from_x = run_attn({"run", "--checkpoint", model(name), "--layer", "1", "--x",
                                  model(name + "/x_layer1.npy"), "-f", "json", "-w"});
    ASSERT_EQ(from_x.code, 0) << from_x.err;
    const auto a = flat(j["weights"]);
    const auto b = flat(nlohmann::json::parse(from_x.out)["weights"]);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12) << name;
  }
}

Tensor<double> load(const std::string& path, int max_rank = 5) {
  return test::load_npy(path, max_rank);
}

TEST(ForwardCli, LayerAllIsTheStackOfEveryLayerAndHiddenOutItsStates) {
  for (const std::string name : {"tiny-llama", "tiny-gemma2", "tiny-gpt2", "tiny-bert"}) {
    const std::string stack = test::temp_dir() + "/" + name + "-stack.npy";
    const std::string hidden = test::temp_dir() + "/" + name + "-hidden.npy";
    const auto r = run_attn({"run", "--checkpoint", model(name), "--layer", "all", "--ids",
                             ids_flag(name), "-o", stack, "--hidden-out", hidden});
    ASSERT_EQ(r.code, 0) << r.err;
    const Tensor<double> s = load(stack);
    // [layers][batch][heads][q][k], as torch.stack(output_attentions); the
    // reference holds float32 roundings of PyTorch's float64 weights.
    const Tensor<double> ref = load(model(name + "/attentions.npy"));
    EXPECT_LT(max_diff(s, ref), 1e-7) << name;
    // And each layer is what one layer's run gives, to the last bits.
    for (int64_t layer : {0, 1}) {
      const auto one =
          run_attn({"run", "--checkpoint", model(name), "--layer", std::to_string(layer), "--ids",
                    ids_flag(name), "-f", "json", "-w"});
      ASSERT_EQ(one.code, 0) << one.err;
      const std::vector<double> w = flat(nlohmann::json::parse(one.out)["weights"]);
      const int64_t per_layer = s.size() / s.dim(0);
      ASSERT_EQ(static_cast<int64_t>(w.size()), per_layer);
      for (int64_t i = 0; i < per_layer; ++i) {
        EXPECT_NEAR(s[layer * per_layer + i], w[static_cast<size_t>(i)], 1e-12) << name;
      }
    }
    const Tensor<double> h = load(hidden);
    EXPECT_EQ(h.shape(), (Shape{3, 1, 7, 32})) << name;
    if (name == "tiny-bert") {
      // BERT's hidden_states[1] is what enters layer 1, the reference's x.
      const Tensor<double> x1 = load(model("tiny-bert/x_layer1.npy"), 4);
      double m = 0;
      for (int64_t i = 0; i < x1.size(); ++i) m = std::max(m, std::fabs(h[7 * 32 + i] - x1[i]));
      EXPECT_LT(m, 1e-12);
    }
  }
  // The JSON stack carries the labels into the model view and reads back.
  const auto j = run_attn({"run", "--checkpoint", model("tiny-llama"), "--layer", "all", "--ids",
                           ids_flag("tiny-llama"), "-f", "json"});
  ASSERT_EQ(j.code, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["weights_axes"],
            (std::vector<std::string>{"layers", "batch", "heads", "queries", "keys"}));
  const std::string f = test::write_temp("stack.json", j.out);
  const auto drawn = run_attn({"heatmap", f, "-o", test::temp_dir() + "/stack.svg"});
  EXPECT_EQ(drawn.code, 0) << drawn.err;
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
       "--ids: id 99 is past " + llama + "/model.safetensors:model.embed_tokens.weight's 40 rows"},
      {{"run", "--checkpoint", llama, "--ids", "1,2", "--x", llama + "/x_layer0.npy"},
       2,
       "--ids computes the layer's input; give it or --x (or a document), not both"},
      {{"run", "--checkpoint", model("tiny-llama-bf16"), "--text", "hi"},
       4,
       model("tiny-llama-bf16") +
           ": no tokenizer.json in this directory; give --tokenizer FILE|DIR (the model's own "
           "tokenizer.json), or the token ids with --ids"},
      {{"run", "--checkpoint", llama + "/model.safetensors", "--text", "hi"},
       2,
       "--checkpoint " + llama +
           "/model.safetensors is a file of weights, without a tokenizer: give the model's "
           "directory (--checkpoint DIR) or --tokenizer FILE|DIR"},
      {{"run", "--checkpoint", llama, "The cat sat"},
       2,
       "input The cat sat: no such file; to run the model on a sentence, give it with --text "
       "\"The cat sat\" (or token ids with --ids)"},
      {{"run", "--tokenizer", llama, "--x", llama + "/x_layer0.npy"},
       2,
       "--tokenizer needs --checkpoint DIR (the model whose tokens it reads)"},
      {{"run", "--checkpoint", llama, "--ids", "1,2", "--long"},
       2,
       "--long is a CSV table: give -f csv or -o FILE.csv"},
      {{"run", "--checkpoint", llama, "--ids", "1,2", "--layer", "5"},
       2,
       "--layer 5: the model has 2 layers (0 to 1)"},
      {{"run", "--checkpoint", llama, "--layer", "all", "--x", llama + "/x_layer0.npy"},
       2,
       "--layer all runs the whole model: give --text TEXT or --ids I,J,..."},
      {{"run", "--checkpoint", llama, "--layer", "all", "--ids", "1,2", "--trace"},
       2,
       "--trace goes with one layer (--layer N); with --layer all write the stack with -o "
       "FILE.npy and draw it with attn heatmap FILE.npy (the model view)"},
      {{"run", "--checkpoint", llama, "--x", llama + "/x_layer0.npy", "--hidden-out", "h.npy"},
       2,
       "--hidden-out needs --text or --ids (and --checkpoint): the model's hidden states come "
       "from its forward pass"},
      {{"run", "--checkpoint", llama, "--ids", "1,2", "--hidden-out", "h.json"},
       2,
       "--hidden-out h.json: the hidden states are written as .npy"},
  };
  for (const Case& c : cases) {
    const auto r = run_attn(c.args);
    EXPECT_EQ(r.code, c.code) << c.err;
    EXPECT_EQ(r.err, "attn: error: " + c.err + "\n");
  }
}

TEST(ForwardCli, AnIdPastTheTableFromTheTokenizerBlamesTheTokenizer) {
  // A checkpoint whose tokenizer.json is not its model's: the id comes
  // from --text, so the message names the tokenizer, not --ids.
  const std::string dir = test::temp_dir() + "/other-tokenizer";
  fs::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors"}) {
    fs::copy_file(model(std::string("tiny-llama/") + f), dir + "/" + f,
                  fs::copy_options::overwrite_existing);
  }
  nlohmann::json t = nlohmann::json::parse(read_text(model("tiny-llama/tokenizer.json")));
  t["added_tokens"].push_back({{"id", 99},
                               {"content", "zz"},
                               {"single_word", false},
                               {"lstrip", false},
                               {"rstrip", false},
                               {"normalized", false},
                               {"special", false}});
  std::ofstream(dir + "/tokenizer.json") << t.dump();
  const auto r = run_attn({"run", "--checkpoint", dir, "--text", "zz"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --text (tokenized by " + dir + "/tokenizer.json): id 99 is past " +
                       dir + "/model.safetensors:model.embed_tokens.weight's 40 rows\n");
}

TEST(ForwardCli, ATextLongerThanThePositionTableSaysSo) {
  std::string ids = "1";
  for (int i = 1; i < 70; ++i) ids += ",1";
  const auto r = run_attn({"run", "--checkpoint", model("tiny-gpt2"), "--ids", ids, "-f", "json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: the text has 70 tokens; wpe.weight has rows for 64 positions (the "
            "model's longest input)\n");
}

}  // namespace
}  // namespace attn
