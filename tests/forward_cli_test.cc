// attn run --checkpoint DIR --ids|--text|--text-file: the forward pass
// through the program, whose weights equal those of the layer's input given
// with --x; --layer all and --hidden-out against PyTorch's stack; traces
// that start from the token ids; the settings of a config.json that attn
// does not compute refused; and the mistakes of these flags. The forward
// pass through the library: forward_test.cc.
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
#include "model_util.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::checkpoint;
using test::ids_in;
using test::ids_of;
using test::load;
using test::max_diff;
using test::model;
using test::read_text;
using test::run_attn;
using test::source_path;

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
  for (const auto& [name, text] : test::tiny_sentences()) {
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
