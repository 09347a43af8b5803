// Tables for scripts and a model's stack in every output form: the long
// CSV, labelled plain CSV, --precision in JSON and CSV, --layer all as a
// table, CSV, .npz (with its tokens, read back by attn heatmap and attn
// diff) and a figure alone; a layer run from text shows its weights; the
// token files attn tokenize writes; --tokenizer; --emit-pytorch of a
// model's layer.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::model;
using test::read_text;
using test::run_attn;
using test::temp_dir;
using test::write_temp;

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < s.size()) {
    const size_t nl = s.find('\n', at);
    out.push_back(s.substr(at, nl - at));
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return out;
}

TEST(LongCsv, ARowPerCellWithTheTokensAndMaskedCellsNan) {
  const auto r = run_attn({"run", "--example", "sweet", "--causal", "-f", "csv", "--long"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> l = lines(r.out);
  ASSERT_EQ(l.size(), 17u);  // the header and 4 × 4 cells
  EXPECT_EQ(l[0], "layer,batch,head,query,key,query_token,key_token,weight");
  EXPECT_EQ(l[1], "0,0,0,0,0,cat,cat,1");
  EXPECT_EQ(l[2], "0,0,0,0,1,cat,milk,nan");
  EXPECT_EQ(l[5], "0,0,0,1,0,milk,cat,0.26894142136999516");
}

TEST(LongCsv, KeepsTheNumberOfTheHeadItShows) {
  const auto r = run_attn({"run", "--example", "multihead", "-f", "csv", "--long", "--head", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.out)[1].rfind("0,0,2,0,0,the,the,", 0), 0u) << r.out;
}

TEST(LongCsv, TokensAreCsvFields) {
  const std::string tokens = write_temp("csv_tokens.json", R"(["a,b", "say \"hi\"", " c"])");
  const std::string x = write_temp("csv_x.json", "[[1, 0], [0, 1], [1, 1]]");
  const auto r = run_attn({"run", x, "--tokens", tokens, "-f", "csv", "--long"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.out)[2].rfind(R"(0,0,0,0,1,"a,b","say ""hi""",)", 0), 0u) << r.out;
}

TEST(LongCsv, IsACsvTable) {
  const auto r = run_attn({"run", "--example", "sweet", "--long"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --long is a CSV table: give -f csv or -o FILE.csv\n");
}

TEST(PlainCsv, LabelsTheRowsAndColumns) {
  const auto r = run_attn({"run", "--example", "sweet", "-f", "csv", "-w"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> l = lines(r.out);
  EXPECT_EQ(l[0], "# output [4][4]");
  EXPECT_EQ(l[1], "token,d0,d1,d2,d3");
  EXPECT_EQ(l[2], "cat,0,1.25,2.75,0");
  EXPECT_EQ(l[6], "# weights [4][4]");
  EXPECT_EQ(l[7], "token,cat,milk,it,sweet");
  EXPECT_EQ(l[8], "cat,0.25,0.25,0.25,0.25");
}

TEST(Precision, RoundsJsonAndCsvOnlyWhenGiven) {
  auto r = run_attn({"run", "--example", "sweet", "-f", "csv"});
  EXPECT_NE(r.out.find("milk,0,0.5548933934734476,3.4451066065265525,0"), std::string::npos);
  r = run_attn({"run", "--example", "sweet", "-f", "csv", "--precision", "3"});
  EXPECT_NE(r.out.find("milk,0,0.555,3.445,0"), std::string::npos) << r.out;
  r = run_attn({"run", "--example", "sweet", "-f", "json", "--precision", "2"});
  EXPECT_NE(r.out.find("[0, 0.55, 3.45, 0]"), std::string::npos) << r.out;
}

TEST(JsonLabels, KeepTheTokensAndAddThemAsTheyRead) {
  const std::string dir = model("tiny-gpt2");
  const auto r = run_attn({"run", "--checkpoint", dir, "--x", dir + "/x_layer0.npy", "--tokens",
                           dir + "/tokens.json", "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(R"("labels": {"queries": ["The", "Ġcat",)"), std::string::npos);
  EXPECT_NE(r.out.find(R"("labels_readable": {"queries": ["The", "cat",)"), std::string::npos);
}

TEST(ModelStack, IsATableByDefault) {
  const auto r = run_attn(
      {"run", "--checkpoint", model("tiny-llama"), "--text", "The cat sat", "--layer", "all"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> l = lines(r.out);
  EXPECT_EQ(l[0], "llama, every layer (" + model("tiny-llama") + ")");
  EXPECT_EQ(l[2], "weights (layer 0, head 0)  [4][4]");
  EXPECT_EQ(l[3], "        <s>     The     cat     sat");
  EXPECT_NE(r.out.find("weights (layer 1, head 3)  [4][4]"), std::string::npos);
}

TEST(ModelStack, CsvIsTheLongTable) {
  const auto r = run_attn({"run", "--checkpoint", model("tiny-llama"), "--text", "The cat sat",
                           "--layer", "all", "-f", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> l = lines(r.out);
  ASSERT_EQ(l.size(), 1u + 2 * 4 * 4 * 4);
  EXPECT_EQ(l[0], "layer,batch,head,query,key,query_token,key_token,weight");
  EXPECT_EQ(l[1], "0,0,0,0,0,<s>,<s>,1");
  EXPECT_EQ(l[2], "0,0,0,0,1,<s>,\" The\",nan");  // causal: masked
  EXPECT_EQ(l.back().rfind("1,0,3,3,3,\" sat\",\" sat\",", 0), 0u) << l.back();
}

TEST(ModelStack, NpzKeepsTheTokensForHeatmapAndDiff) {
  const std::string npz = temp_dir() + "/stack_tokens.npz";
  const std::string svg = temp_dir() + "/stack_tokens.svg";
  auto r = run_attn({"run", "--checkpoint", model("tiny-llama"), "--text", "The cat sat", "--layer",
                     "all", "-o", npz, "--hidden-out", temp_dir() + "/h.npy"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string bytes = read_text(npz);
  for (const char* member : {"weights.npy", "tokens.npy", "ids.npy", "hidden.npy"}) {
    EXPECT_NE(bytes.find(member), std::string::npos) << member;
  }
  r = run_attn({"heatmap", npz, "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(read_text(svg).find(">cat<"), std::string::npos);
  r = run_attn({"diff", npz, npz, "--layer", "1", "--head", "0"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("[2][1][4][4][4], layer 1, head 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("<s>"), std::string::npos) << r.out;  // the tokens label the rows
}

TEST(ModelStack, DrawsAloneWithTheOutputToDevNull) {
  const std::string html = temp_dir() + "/stack_view.html";
  fs::remove(html);
  const auto r = run_attn({"run", "--checkpoint", model("tiny-llama"), "--text", "The cat sat",
                           "--layer", "all", "-o", "/dev/null", "--heatmap", html});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(html));
}

TEST(DiffTable, NamesTokensAsTheyRead) {
  const std::string dir = model("tiny-gpt2");
  const std::string a = temp_dir() + "/gpt2_l0.json", b = temp_dir() + "/gpt2_l1.json";
  for (const auto& [layer, out] : {std::pair<std::string, std::string>{"0", a}, {"1", b}}) {
    const auto r = run_attn({"run", "--checkpoint", dir, "--layer", layer, "--x",
                             dir + "/x_layer" + layer + ".npy", "--tokens", dir + "/tokens.json",
                             "-f", "json", "-w", "-o", out});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  auto r = run_attn({"diff", a, b, "--head", "0"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\n   0.9637  cat    The  "), std::string::npos) << r.out;
  r = run_attn({"diff", a, b, "--head", "0", "-f", "csv"});
  EXPECT_NE(r.out.find("Ġcat"), std::string::npos) << r.out;  // CSV keeps them as given
}

TEST(TextRun, ShowsTheWeightsByDefault) {
  auto r = run_attn({"run", "--checkpoint", model("tiny-llama"), "--text", "The cat sat"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("output  ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("weights (head 0)  [4][4]\n        <s>     The     cat     sat\n"),
            std::string::npos)
      << r.out;
  // -w shows the output above them.
  r = run_attn({"run", "--checkpoint", model("tiny-llama"), "--text", "The cat sat", "-w"});
  EXPECT_NE(r.out.find("output  [4][32]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("weights (head 0)"), std::string::npos) << r.out;
}

TEST(TextRun, TheTokenizerOfAModelWithoutOne) {
  const auto r = run_attn({"run", "--checkpoint", model("tiny-mistral"), "--text", "The cat sat",
                           "--tokenizer", model("tiny-llama")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("        <s>     The     cat     sat\n"), std::string::npos) << r.out;
}

TEST(TextRun, AQueryIsFoundByHowItsTokenReads) {
  const auto r = run_attn({"run", "--checkpoint", model("tiny-llama"), "--text", "The cat sat",
                           "--trace", "--query", "cat"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("showing: query 2 (cat)"), std::string::npos) << r.out;
}

TEST(TokenFiles, TakeWhatAttnTokenizePrints) {
  const std::string dir = model("tiny-gpt2");
  const std::string text = "The cat sat on the mat.";
  for (const char* format : {"json", "text"}) {
    const auto t = run_attn({"tokenize", "--checkpoint", dir, text, "-f", format});
    ASSERT_EQ(t.code, 0) << t.err;
    const std::string tokens = write_temp(std::string("tokenized.") + format, t.out);
    const auto r = run_attn({"run", "--checkpoint", dir, "--x", dir + "/x_layer0.npy", "--tokens",
                             tokens, "-w", "--head", "0"});
    ASSERT_EQ(r.code, 0) << format << ": " << r.err;
    EXPECT_NE(r.out.find("weights (head 0)  [7][7]\n        The     cat     sat      on     the    "
                         " mat       .\n"),
              std::string::npos)
        << format << ": " << r.out;
  }
  const std::string two = write_temp("two_texts.json", R"([{"text": "a", "tokens": ["a"]},
    {"text": "b", "tokens": ["b"]}])");
  const auto r =
      run_attn({"run", "--checkpoint", dir, "--x", dir + "/x_layer0.npy", "--tokens", two});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + two +
                       ": holds the tokens of 2 texts (attn tokenize of several); give the file "
                       "of one text\n");
}

TEST(EmitPytorch, AModelsLayerIsCheckedWithTransformers) {
  const std::string dir = temp_dir() + "/it's a model";
  fs::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors", "tokenizer.json"}) {
    fs::copy_file(model(std::string("tiny-llama/") + f), dir + "/" + f,
                  fs::copy_options::overwrite_existing);
  }
  const std::string program = temp_dir() + "/check_layer.py";
  const std::string numbers = temp_dir() + "/check_layer.npy";
  fs::remove(numbers);
  for (const char* dtype : {"f64", "f32"}) {
    const auto r = run_attn({"run", "--checkpoint", dir, "--text", "The cat sat", "--layer", "1",
                             "--dtype", dtype, "--emit-pytorch", "-o", program});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string p = read_text(program);
    EXPECT_NE(p.find("CHECKPOINT = '" + temp_dir() + "/it\\'s a model'\n"), std::string::npos) << p;
    EXPECT_NE(p.find("NUMBERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "
                     "'check_layer.npy')\n"),
              std::string::npos)
        << p;
    EXPECT_NE(p.find("LAYER = 1\nIDS = [1, 17, 29, 8]\n"), std::string::npos) << p;
    EXPECT_NE(p.find(std::string("DTYPE = torch.float") + (dtype[1] == '3' ? "32" : "64")),
              std::string::npos);
    EXPECT_NE(p.find("AutoModel.from_pretrained(CHECKPOINT, attn_implementation=\"eager\", "
                     "dtype=DTYPE)"),
              std::string::npos);
    EXPECT_NE(p.find("output_attentions=True"), std::string::npos);
    EXPECT_EQ(p.find("X = "), std::string::npos);  // the layer's input is not written out
    EXPECT_LT(p.size(), 4000u);
    EXPECT_TRUE(fs::exists(numbers));
    // Every string is a Python literal: the program compiles.
    EXPECT_EQ(std::system(("/usr/bin/python3 -m py_compile " + test::quote(program)).c_str()), 0);
  }
  const auto r = run_attn({"run", "--checkpoint", dir, "--text", "hi", "--emit-pytorch"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --emit-pytorch of a model run writes attn's weights beside the "
            "program: give -o FILE.py\n");
}

TEST(EmitPytorch, ComputesInTheRunsDtype) {
  const auto r = run_attn({"run", "--example", "sweet", "--dtype", "f32", "--emit-pytorch"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("DTYPE = torch.float32  # the run's --dtype\n"
                       "torch.set_default_dtype(DTYPE)\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace attn
