// `attn diff A B` run as a user runs it: two results of `attn run -f json
// -w` (the formula against the blog's scale after the softmax), the
// summary as table, JSON and CSV, --tolerance's exit status, the figure,
// stdin on one side, .npy against JSON, and the mistakes it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attn/npy.h"
#include "test_util.h"

namespace attn {
namespace {

using test::read_text;
using test::run_attn;
using test::source_path;
using test::temp_dir;
using Json = nlohmann::json;

// The weights of `attn run --example NAME [flags] -f json -w` in dir/file.
std::string result(const std::string& file, const std::string& example,
                   const std::vector<std::string>& flags = {}) {
  const std::string path = temp_dir() + "/" + file;
  std::vector<std::string> args = {"run",  "--example", example, "-q", "-f",
                                   "json", "-w",        "-o",    path};
  args.insert(args.end(), flags.begin(), flags.end());
  const test::Run r = run_attn(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return path;
}

std::string formula() { return result("formula.json", "sweet"); }
std::string blog() { return result("blog.json", "sweet", {"--scale-at", "output"}); }

TEST(DiffCli, TheFormulaAgainstTheBlogsReading) {
  const std::string a = formula(), b = blog();
  const test::Run r = run_attn({"diff", a, b});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "A: " + a + " (weights [4][4])\n" + "B: " + b +
                " (weights [4][4])\n"
                "\n"
                "max |B-A|  query  key         A       B  mean |B-A|  KL mean  KL max  at query  "
                "  H(A)    H(B)\n"
                "   0.2430  milk   sweet  0.6103  0.8533      0.0464   0.1090  0.2198  milk      "
                "1.0840  0.8458\n"
                "\n"
                "KL = KL(A||B) and H = entropy, per row read as a distribution, in nats;\n"
                "means over the 4 of 4 rows that are distributions on both sides.\n");
}

// The numbers of the JSON summary against NumPy's and PyTorch's
// (torch.nn.functional.kl_div) on the same two weight matrices.
TEST(DiffCli, JsonSummaryMatchesPyTorch) {
  const test::Run r = run_attn({"diff", formula(), blog(), "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["shape"], Json::array({4, 4}));
  EXPECT_EQ(j["a"]["key"], "weights");
  EXPECT_NEAR(j["max_abs_diff"].get<double>(), 0.24297098043281373, 1e-15);
  EXPECT_EQ(j["at"]["row"], 1);
  EXPECT_EQ(j["at"]["col"], 3);
  EXPECT_EQ(j["at"]["row_label"], "milk");
  EXPECT_EQ(j["at"]["col_label"], "sweet");
  EXPECT_NEAR(j["mean_abs_diff"].get<double>(), 0.04638394039149729, 1e-15);
  EXPECT_FALSE(j.contains("passed"));
  const Json& m = j["matrices"][0];
  EXPECT_NEAR(m["kl"]["mean"].get<double>(), 0.1089673545094082, 1e-14);
  EXPECT_NEAR(m["kl"]["max"].get<double>(), 0.21976484359104617, 1e-14);
  EXPECT_EQ(m["kl"]["max_row_label"], "milk");
  EXPECT_NEAR(m["entropy_a"].get<double>(), 1.083989037198045, 1e-14);
  EXPECT_NEAR(m["entropy_b"].get<double>(), 0.8458061192663411, 1e-14);
  EXPECT_EQ(m["rows_compared"], 4);
}

TEST(DiffCli, ToleranceDecidesTheExitStatus) {
  const std::string a = formula(), b = blog();
  test::Run r = run_attn({"diff", a, b, "--tolerance", "0.25"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("max |B-A| 0.2430 <= tolerance 0.25: A and B agree\n"), std::string::npos)
      << r.out;
  r = run_attn({"diff", a, b, "--tolerance", "1e-3"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("max |B-A| 0.2430 > tolerance 0.001: A and B differ\n"), std::string::npos)
      << r.out;
  r = run_attn({"diff", a, b, "--tolerance", "1e-3", "-f", "json"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(Json::parse(r.out)["passed"], false);
  r = run_attn({"diff", a, a, "--tolerance", "0"});
  EXPECT_EQ(r.code, 0) << r.err;
  // A NaN on one side only is no agreement, whatever the tolerance.
  const std::string x = test::write_temp("x.json", "[[0.5, 0.5]]");
  const std::string y = test::write_temp("y.json", "[[0.5, \"nan\"]]");
  r = run_attn({"diff", x, y, "--tolerance", "1e9"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("max |B-A| nan (a NaN on one side only), not within tolerance 1e+09: "
                       "A and B differ\n"),
            std::string::npos)
      << r.out;
}

TEST(DiffCli, RowsWhereBMasksWhatAWeighsHaveInfiniteKl) {
  // B is causal: A (the full sentence) gives weight to later keys B masks.
  const std::string a = formula(), b = result("causal.json", "sweet", {"--causal"});
  const test::Run r = run_attn({"diff", a, b, "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const Json m = Json::parse(r.out)["matrices"][0];
  EXPECT_EQ(m["kl"]["infinite_rows"], 3);  // every query but the last
  EXPECT_EQ(m["kl"]["mean"], "inf");
  EXPECT_EQ(m["kl"]["max_row"], 0);
  // The other way round, B gives weight where A has some too: finite.
  const Json back = Json::parse(run_attn({"diff", b, a, "-f", "json"}).out)["matrices"][0];
  EXPECT_EQ(back["kl"]["infinite_rows"], 0);
  EXPECT_TRUE(back["kl"]["mean"].is_number());
}

TEST(DiffCli, FullyMaskedRowsAreSkippedAndCounted) {
  // key_padding: batch 1 has two fully masked queries (all-zero rows);
  // the [2][4][4] weights are read as two matrices.
  const std::string a = result("kp.json", "key_padding");
  const std::string b = result("kp_blog.json", "key_padding", {"--scale-at", "output"});
  test::Run r = run_attn({"diff", a, b, "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["rows_compared"], 6);
  EXPECT_EQ(j["rows_skipped"], 2);
  EXPECT_EQ(j["matrices"][1]["rows_skipped"], 2);
  r = run_attn({"diff", a, b});
  EXPECT_NE(r.out.find("means over the 6 of 8 rows that are distributions on both sides;\n"
                       "2 skipped: not a distribution on a side.\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("overall: max |B-A| "), std::string::npos) << r.out;
}

TEST(DiffCli, CsvHasOneRowPerMatrix) {
  const std::string a = result("mh.json", "multihead");
  const std::string b = result("mh_blog.json", "multihead", {"--scale-at", "output"});
  const test::Run r = run_attn({"diff", a, b, "-f", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("batch,head,max_abs_diff,row,col,row_label,col_label,a,b,", 0), 0u);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1 + 2 * 4);
  EXPECT_NE(r.out.find("\n1,3,"), std::string::npos);
}

TEST(DiffCli, DrawsBMinusAOnADivergingScale) {
  const std::string a = formula(), b = blog();
  const std::string png = temp_dir() + "/diff.png", svg = temp_dir() + "/diff.svg";
  test::Run r = run_attn({"diff", a, b, "--heatmap", png});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_text(png).substr(1, 3), "PNG");
  r = run_attn({"diff", a, b, "--heatmap", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = read_text(svg);
  EXPECT_NE(text.find(">B − A</text>"), std::string::npos);
  // The range is symmetric: ±max |B − A| = ±0.243 on the colorbar.
  EXPECT_NE(text.find(">-0.243</text>"), std::string::npos);
  EXPECT_NE(text.find(">0.243</text>"), std::string::npos);
  r = run_attn({"diff", a, b, "--show", "--color", "never", "--vmax", "0.5"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("B − A: -0.5 [ .:-=+*#%@] 0.5\n"), std::string::npos) << r.out;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The weights of a JSON result as a flat list.
std::vector<double> weights_of(const std::string& path) {
  std::vector<double> out;
  const Json result = Json::parse(read_text(path));
  for (const Json& row : result["weights"]) {
    for (const Json& x : row) out.push_back(x.get<double>());
  }
  return out;
}

// Two causal runs: the cells above the diagonal are masked in both. They
// are hatched in the figure, as a run's own figure hatches them, and left
// out of max and mean |B - A|.
TEST(DiffCli, CellsMaskedInBothAreHatchedAndLeftOut) {
  const std::string a = result("causal_formula.json", "sweet", {"--causal"});
  const std::string b = result("causal_blog.json", "sweet", {"--causal", "--scale-at", "output"});
  const std::string svg = temp_dir() + "/masked_diff.svg";
  test::Run r = run_attn({"diff", a, b, "--heatmap", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(occurrences(read_text(svg), "<rect class=\"cell masked\""), 6u);
  EXPECT_NE(r.out.find("6 cells masked on both sides (the results' masked flags) are left out of "
                       "max and mean |B-A|.\n"),
            std::string::npos)
      << r.out;
  r = run_attn({"diff", a, b, "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["cells_masked"], 6);
  EXPECT_EQ(j["matrices"][0]["cells_masked"], 6);
  // The mean over the 10 cells at or below the diagonal.
  const std::vector<double> wa = weights_of(a), wb = weights_of(b);
  double sum = 0;
  for (size_t i = 0; i < wa.size(); ++i) sum += std::fabs(wb[i] - wa[i]);
  EXPECT_NEAR(j["mean_abs_diff"].get<double>(), sum / 10, 1e-15);

  // Bare .npy weights say nothing of masks: exact zeros above the diagonal
  // in both are a causal mask; against a result, its flags and the other
  // side's zeros.
  const std::string na = temp_dir() + "/causal_a.npy", nb = temp_dir() + "/causal_b.npy";
  for (const auto& [npy, flags] :
       {std::pair<std::string, std::vector<std::string>>{na, {}}, {nb, {"--scale-at", "output"}}}) {
    std::vector<std::string> args = {"run", "--example", "sweet",         "--causal", "-q",
                                     "-o",  "/dev/null", "--weights-out", npy};
    args.insert(args.end(), flags.begin(), flags.end());
    ASSERT_EQ(run_attn(args).code, 0);
  }
  for (const auto& [x, y] : {std::pair<std::string, std::string>{na, nb}, {a, nb}}) {
    r = run_attn({"diff", x, y, "-f", "json", "--heatmap", svg});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(Json::parse(r.out)["cells_masked"], 6) << x;
    EXPECT_NEAR(Json::parse(r.out)["mean_abs_diff"].get<double>(), sum / 10, 1e-15) << x;
    EXPECT_EQ(occurrences(read_text(svg), "<rect class=\"cell masked\""), 6u) << x;
  }
  r = run_attn({"diff", na, nb});
  EXPECT_NE(r.out.find("6 cells masked on both sides (zero above the diagonal in both: causal) are "
                       "left out of max and mean |B-A|.\n"),
            std::string::npos)
      << r.out;
  // Weights that are not causal have no masked cells.
  r = run_attn({"diff", formula(), blog(), "-f", "json"});
  EXPECT_EQ(Json::parse(r.out)["cells_masked"], 0);
}

// attn run --layer all's stack of the tiny Llama on its ids, [2][1][4][7][7].
std::string llama_stack() {
  const std::string path = temp_dir() + "/llama_stack.npy";
  const test::Run r = run_attn({"run", "--checkpoint", test::model("tiny-llama"), "--ids",
                                "1,17,29,8,33,12,24", "--layer", "all", "-o", path});
  EXPECT_EQ(r.code, 0) << r.err;
  return path;
}

// --layer N takes one layer of a stack [layers][batch][heads][q][k]: of
// both sides, or of the side that is a stack beside one layer's weights
// (Hugging Face's [1][heads][q][k], or a run's [heads][q][k]).
TEST(DiffCli, LayerOfAStackOnEitherSide) {
  const std::string stack = llama_stack(), hf = test::model("tiny-llama/attentions.npy");
  test::Run r = run_attn({"diff", stack, hf, "--layer", "1", "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["shape"], Json::array({1, 4, 7, 7}));
  EXPECT_EQ(j["a"]["layer"], 1);
  EXPECT_EQ(j["a"]["shape"], Json::array({2, 1, 4, 7, 7}));
  EXPECT_EQ(j["matrices"].size(), 4u);
  EXPECT_LT(j["max_abs_diff"].get<double>(), 1e-6);
  EXPECT_EQ(j["cells_masked"], 4 * 21);  // causal: 21 cells above the diagonal a head

  // One layer's weights on the other side: a run's JSON [4][7][7].
  const std::string layer1 = temp_dir() + "/layer1.json";
  ASSERT_EQ(run_attn({"run", "--checkpoint", test::model("tiny-llama"), "--ids",
                      "1,17,29,8,33,12,24", "--layer", "1", "-q", "-f", "json", "-w", "-o", layer1})
                .code,
            0);
  r = run_attn({"diff", layer1, stack, "--layer", "1", "--tolerance", "1e-12"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("A: " + layer1 + " (weights [4][7][7])\nB: " + stack +
                            " ([2][1][4][7][7], layer 1)\n",
                        0),
            0u)
      << r.out;
  // Shapes that differ by a leading axis of size 1 hold the same matrices:
  // a layer's --weights-out, [1][4][7][7], against its JSON [4][7][7].
  const std::string npy = temp_dir() + "/layer1.npy";
  ASSERT_EQ(
      run_attn({"run", "--checkpoint", test::model("tiny-llama"), "--ids", "1,17,29,8,33,12,24",
                "--layer", "1", "-q", "-o", "/dev/null", "--weights-out", npy})
          .code,
      0);
  r = run_attn({"diff", npy, layer1, "--tolerance", "0"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // --head H: that head of both.
  r = run_attn({"diff", layer1, stack, "--layer", "1", "--head", "2", "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  j = Json::parse(r.out);
  EXPECT_EQ(j["shape"], Json::array({1, 1, 7, 7}));
  ASSERT_EQ(j["matrices"].size(), 1u);
  EXPECT_EQ(j["matrices"][0]["head"], 2);
  EXPECT_EQ(j["at"]["head"], 2);
  EXPECT_EQ(j["b"]["head"], 2);

  // Two stacks without --layer compare head by head (tests/analysis_cli_test.cc);
  // a stack beside one layer's weights needs it. Mistakes name the side and the range.
  r = run_attn({"diff", stack, hf, "-f", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["per_head"]["js"].size(), 2u);
  r = run_attn({"diff", stack, layer1});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: A (" + stack +
                       ") is a stack [2][1][4][7][7] [layers][batch][heads][q][k]; attn diff "
                       "compares one layer of it: give --layer N (0 to 1), or two stacks to "
                       "compare head by head\n");
  r = run_attn({"diff", layer1, stack, "--layer", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --layer 2: out of range; B (" + stack + ") has 2 layers (0 to 1)\n");
  r = run_attn({"diff", layer1, stack, "--layer", "0", "--head", "4"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --head 4: out of range; A (" + layer1 + ") has 4 heads (0 to 3)\n");
  r = run_attn({"diff", layer1, layer1, "--layer", "0"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --layer 0: neither A (" + layer1 + ") [4][7][7] nor B (" + layer1 +
                       ") [4][7][7] is a stack of layers, [layers][batch][heads][q][k] (or "
                       "[layers][heads][q][k] with --stack layers)\n");
}

// A stack [layers][1][heads][q][k] squeezed to [layers][heads][q][k], as
// np.stack of each layer's [heads][q][k] makes it.
std::string squeezed(const std::string& stack, const std::string& name) {
  Tensor<double> s = test::load_npy(stack);
  const Shape& shape = s.shape();
  s.reshape({shape[0], shape[2], shape[3], shape[4]});
  const std::string path = temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << format_npy(s, DType::kF64);
  return path;
}

// A rank-4 array is [batch][heads][q][k] or a squeezed stack
// [layers][heads][q][k]. Nothing in a bare .npy says which: it is read as
// the default, batch, and stderr says so (the numbers are the same; the
// summary names the axis). --stack decides; beside a stack, --layer reads
// it the way the two sides compare.
TEST(DiffCli, RankFourReadingIsSaidOrChosen) {
  const std::string stack = llama_stack();
  const std::string a = squeezed(stack, "sq_a.npy");
  const std::string b = squeezed(test::model("tiny-llama/attentions.npy"), "sq_b.npy");
  test::Run r = run_attn({"diff", a, b});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "attn: warning: " + a + " and " + b +
                       ": [2][4][7][7] read as [batch][heads][q][k]; --stack layers reads it as "
                       "[layers][heads][q][k], a stack of layers\n");
  EXPECT_NE(r.out.find("\nbatch  head  max |B-A|"), std::string::npos) << r.out;
  EXPECT_EQ(run_attn({"diff", a, b, "-q"}).err, "");
  EXPECT_EQ(run_attn({"diff", a, b, "--stack", "batch"}).err, "");
  r = run_attn({"diff", a, b, "--stack", "layers"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("\nlayer  head  max |B-A|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("overall: max |B-A| 2.753e-08 at layer 1, head 3,"), std::string::npos)
      << r.out;
  r = run_attn({"diff", a, b, "--stack", "layers", "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["matrices"][7]["layer"], 1);
  EXPECT_EQ(j["at"]["layer"], 1);
  EXPECT_FALSE(j["at"].contains("batch"));
  r = run_attn({"diff", a, b, "--stack", "layers", "-f", "csv"});
  EXPECT_EQ(r.out.rfind("layer,head,max_abs_diff,", 0), 0u) << r.out;

  // Beside a stack of batch 1, the squeezed stack is read as layers;
  // beside one layer's [1][heads][q][k], the squeezed stack is the stack.
  r = run_attn({"diff", stack, b, "--layer", "1", "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  j = Json::parse(r.out);
  EXPECT_EQ(j["b"]["layer"], 1);
  EXPECT_LT(j["max_abs_diff"].get<double>(), 1e-6);
  const std::string layer1 = temp_dir() + "/hf_layer1.npy";
  ASSERT_EQ(
      run_attn({"run", "--checkpoint", test::model("tiny-llama"), "--ids", "1,17,29,8,33,12,24",
                "--layer", "1", "-q", "-o", "/dev/null", "--weights-out", layer1})
          .code,
      0);
  r = run_attn({"diff", a, layer1, "--layer", "1", "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  j = Json::parse(r.out);
  EXPECT_EQ(j["a"]["layer"], 1);
  EXPECT_FALSE(j["b"].contains("layer"));
  EXPECT_LT(j["max_abs_diff"].get<double>(), 1e-12);
  // Two squeezed stacks of one shape: --layer takes the layer of both.
  r = run_attn({"diff", a, b, "--layer", "0", "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["b"]["layer"], 0);
  // --stack batch says it is no stack.
  r = run_attn({"diff", a, b, "--layer", "0", "--stack", "batch"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is a stack of layers"), std::string::npos) << r.err;
  r = run_attn({"diff", a, b, "--stack", "heads"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --stack: expected batch or layers, got 'heads'\n");
}

TEST(DiffCli, ReadsStdinOnOneSideAndNpyAgainstJson) {
  const std::string b = blog();
  const test::Run json = run_attn({"run", "--example", "sweet", "-f", "json", "-w"});
  test::Run r = run_attn({"diff", "-", b, "-f", "json"}, json.out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["a"]["file"], "<stdin>");
  EXPECT_NEAR(Json::parse(r.out)["max_abs_diff"].get<double>(), 0.24297098043281373, 1e-15);

  const std::string npy = temp_dir() + "/w.npy";
  ASSERT_EQ(
      run_attn({"run", "--example", "sweet", "-q", "-o", "/dev/null", "--weights-out", npy}).code,
      0);
  r = run_attn({"diff", npy, formula(), "--tolerance", "0"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // The labels come from the side that has them.
  EXPECT_NE(r.out.find("  cat  "), std::string::npos) << r.out;
}

TEST(DiffCli, MistakesAreRefused) {
  const std::string a = formula(), b = blog();
  test::Run r = run_attn({"diff", "-", "-"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: diff: A and B are both stdin (-); at most one of them can be read "
            "from stdin\n");
  r = run_attn({"diff", a, b, "--show", "-f", "json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --show would mix the preview into the json on stdout; drop --show, or "
            "draw the figure with --heatmap FILE\n");
  r = run_attn({"diff", a, b, "--heatmap", a});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --heatmap " + a + ": refusing to overwrite the input file " + a + "\n");
  r = run_attn({"diff", a, b, "--vmax", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --vmax needs --heatmap FILE or --show\n");
  r = run_attn({"diff", a, b, "--tolerance", "-1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --tolerance: expected a finite number >= 0, got '-1'\n");
  r = run_attn({"diff", a});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: missing argument 'b'\n");
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace attn
