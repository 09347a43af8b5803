// CLI tests: the real attn binary on data/ files and temporary inputs.
// JSON output is parsed with nlohmann_json, a reader independent of ours.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace attn {
namespace {

using test::read_text;
using test::run_attn;
using test::source_path;
using test::write_temp;

TEST(Cli, RunsTheBuiltInBlogExample) {
  auto r = run_attn({"run", "--example", "sweet"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("cat    0.0000  1.2500  2.7500  0.0000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweet  0.0000  0.1780  3.8220  0.0000"), std::string::npos) << r.out;
}

TEST(Cli, JsonOutputHasTheSpecifiedNumbers) {
  auto r =
      run_attn({"run", source_path("data/examples/sweet.json"), "--format", "json", "--weights"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const double want[4][2] = {{1.25, 2.75}, {0.5549, 3.4451}, {1.25, 2.75}, {0.1780, 3.8220}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(j["output"][i][1].get<double>(), want[i][0], 5e-5);
    EXPECT_NEAR(j["output"][i][2].get<double>(), want[i][1], 5e-5);
  }
  // Weights: rows sum to 1; cat and it attend uniformly (all scores 8/2).
  for (int i = 0; i < 4; ++i) {
    double sum = 0;
    for (int k = 0; k < 4; ++k) sum += j["weights"][i][k].get<double>();
    EXPECT_NEAR(sum, 1.0, 1e-15);
  }
  EXPECT_EQ(j["weights"][0][3].get<double>(), 0.25);
}

TEST(Cli, BlogPrintedNumbersWithScaleAtOutput) {
  auto r = run_attn(
      {"run", source_path("data/examples/sweet.json"), "--scale-at", "output", "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const double blog[4][2] = {{0.625, 1.375}, {0.089, 1.911}, {0.625, 1.375}, {0.010, 1.990}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(j["output"][i][1].get<double>(), blog[i][0], 5e-4);
    EXPECT_NEAR(j["output"][i][2].get<double>(), blog[i][1], 5e-4);
  }
  // The exact rows: uniform weights over cat, milk, it, sweet, halved.
  EXPECT_EQ(j["output"][0][1].get<double>(), 0.625);
}

TEST(Cli, JsonNumbersRoundTrip) {
  auto r = run_attn({"run", source_path("data/examples/sweet.json"), "-f", "json"});
  auto j = nlohmann::json::parse(r.out);
  // Every number is printed as the shortest text that parses back to the
  // same double: printing the parsed value again gives the same text.
  const double milk = j["output"][1][1].get<double>();
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, milk);
    if (std::strtod(buf, nullptr) == milk) break;
  }
  EXPECT_NE(r.out.find(std::string("[0, ") + buf + ", "), std::string::npos) << buf << "\n"
                                                                             << r.out;
}

TEST(Cli, D2lExampleMatches) {
  auto r =
      run_attn({"run", source_path("data/examples/d2l_valid_lens.json"), "--check", "-f", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["output"].size(), 2u);
  EXPECT_NEAR(j["output"][1][0][3].get<double>(), 13.0, 1e-9);
}

TEST(Cli, EveryMaskExampleChecksOut) {
  for (const char* f : {"bool_mask", "keep_convention", "key_padding", "valid_lens", "causal",
                        "attn_bias", "fully_masked", "mask_fill"}) {
    auto r =
        run_attn({"run", source_path(std::string("data/masks/") + f + ".json"), "--check", "-q"});
    EXPECT_EQ(r.code, 0) << f << "\n" << r.out << r.err;
  }
}

TEST(Cli, FullyMaskedRowWarnsOnStderr) {
  auto r = run_attn({"run", source_path("data/masks/fully_masked.json"), "-f", "json"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err, "attn: warning: " + source_path("data/masks/fully_masked.json") +
                       ": query 1 (\"q1\") has every key masked; its weights and attention output "
                       "are 0 (fully_masked: zero)\n");
  auto q = run_attn({"run", source_path("data/masks/fully_masked.json"), "-f", "json", "--quiet"});
  EXPECT_EQ(q.err, "");
}

TEST(Cli, FlagsOverrideTheFile) {
  // The file says nothing about causal; the flag adds it.
  auto r = run_attn({"run", source_path("data/masks/key_padding.json"), "--causal", "-f", "json"});
  auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["output"][0][0].get<double>(), 1.0);  // causal: q0 sees k0
  EXPECT_DOUBLE_EQ(j["output"][2][0].get<double>(), 5.5);  // padding leaves k0, k1
  auto f = run_attn(
      {"run", source_path("data/masks/bool_mask.json"), "--mask-convention", "keep", "-f", "json"});
  auto k = nlohmann::json::parse(f.out);
  EXPECT_DOUBLE_EQ(k["output"][1][0].get<double>(), 550.0);
}

TEST(Cli, CheckFailureExitsOne) {
  auto r = run_attn({"run", "--example", "sweet", "--check"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("check FAILED: 8 of 16 values differ"), std::string::npos) << r.out;
}

TEST(Cli, CsvInputIsX) {
  auto r = run_attn({"run", source_path("data/csv/tokens.csv"), "--weights"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("sweet  0.0000  0.1780  3.8220  0.0000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("          cat    milk      it   sweet"), std::string::npos) << r.out;
  auto s = run_attn({"run", source_path("data/csv/sweet_savetxt.txt"), "-f", "csv"});
  ASSERT_EQ(s.code, 0) << s.err;
  ASSERT_EQ(s.out.substr(0, 30), "# output [4][4]\n0,1.25,2.75,0\n");
  const double want[] = {0, 1.25, 2.75, 0, 0, 0.5548933934734475,  3.4451066065265525, 0,
                         0, 1.25, 2.75, 0, 0, 0.17798958240843796, 3.822010417591562,  0};
  std::vector<double> got;
  for (size_t at = s.out.find('\n') + 1; at < s.out.size();) {
    size_t end = s.out.find_first_of(",\n", at);
    got.push_back(std::strtod(s.out.substr(at, end - at).c_str(), nullptr));
    at = end + 1;
  }
  ASSERT_EQ(got.size(), 16u);
  for (size_t i = 0; i < 16; ++i) EXPECT_NEAR(got[i], want[i], 1e-15 * std::max(1.0, want[i]));
}

TEST(Cli, MatrixFlagsAndStdin) {
  const std::string csv = "1,0\n0,1\n";
  auto r = run_attn(
      {"run", "--x", "-", "--mask", source_path("data/csv/causal_mask.csv"), "-f", "json"}, csv);
  // The mask is 4x4 but X has 2 rows: a shape error naming both.
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + source_path("data/csv/causal_mask.csv") +
                       ": shape [4][4] does not match the attention scores [2][2] (len_q 2, len_k "
                       "2); expected [2][2], [1][2][2] (per head) or [1][1][2][2]\n");
  auto ok = run_attn({"run", "--x", source_path("data/csv/tokens.csv"), "--mask",
                      source_path("data/csv/causal_mask.csv"), "-f", "json"});
  ASSERT_EQ(ok.code, 0) << ok.err;
  auto j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["output"][0][1].get<double>(), 2.0);  // cat sees only itself
}

TEST(Cli, StdinDocument) {
  auto r = run_attn({"run", "-", "-f", "csv"}, R"({"X": [[1, 0], [0, 1]], "scale": "none"})");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 16), "# output [2][2]\n");
}

TEST(Cli, OutputFileIsWrittenAtomically) {
  const std::string out = test::temp_dir() + "/out.json";
  auto r = run_attn({"run", "--example", "sweet", "-f", "json", "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NO_THROW(nlohmann::json::parse(read_text(out)));
  // A failing run leaves the existing file untouched and no temporary file.
  const std::string before = read_text(out);
  auto bad = run_attn({"run", "-", "-o", out}, "{\"X\": [[1, 2], [3]]}");
  EXPECT_EQ(bad.code, 3);
  EXPECT_EQ(read_text(out), before);
  auto ls = run_attn({"run", "--example", "sweet", "-o", test::temp_dir() + "/no/such/dir/x.json"});
  EXPECT_EQ(ls.code, 4);
  EXPECT_EQ(ls.err, "attn: error: " + test::temp_dir() +
                        "/no/such/dir/x.json: cannot create a temporary file next to it: No such "
                        "file or directory\n");
}

TEST(Cli, RefusesToOverwriteItsInput) {
  const std::string in = write_temp("self.json", "{\"X\": [[1]]}");
  auto r = run_attn({"run", in, "-o", in});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: -o " + in + ": refusing to overwrite the input file " + in + "\n");
  EXPECT_EQ(read_text(in), "{\"X\": [[1]]}");
}

TEST(Cli, ExitCodesAndExactMessages) {
  struct Case {
    std::vector<std::string> args;
    std::string stdin_text;
    int code;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"run", "--varient", "dot"},
       "",
       2,
       "attn: error: run: unknown option '--varient'; did you mean '--variant'?\n"},
      {{"rnu"}, "", 2, "attn: error: unknown command 'rnu'; did you mean 'run'?\n"},
      {{},
       "",
       2,
       "attn: error: no command given; try 'attn run --example sweet' or 'attn --help'\n"},
      {{"run", "--variant", "dto", "-"},
       "{}",
       2,
       "attn: error: --variant: 'dto' is not one of scaled_dot, dot, additive, single_layer, "
       "biattention; did you mean 'dot'?\n"},
      {{"run", "--heads"}, "", 2, "attn: error: --heads: expects a value\n"},
      {{"run", "--scale", "-2", "-"},
       "{}",
       2,
       "attn: error: --scale: must be a name or a finite number > 0, got -2\n"},
      {{"run", "--example", "swet"},
       "",
       2,
       "attn: error: --example: no example called 'swet'; did you mean 'sweet'? (attn examples "
       "lists them)\n"},
      {{"run", "-"},
       "{\"X\": [[1, 2], [3, 4]],}",
       3,
       "attn: error: <stdin>:1:23: trailing comma before '}'\n"},
      {{"run", "-"},
       "{\"X\": [[1, 2], [3, 4]], \"varient\": \"dot\"}",
       3,
       "attn: error: <stdin>: unknown key \"varient\"; did you mean \"variant\"?\n"},
      {{"run", "-"},
       "{\"X\": [[1, 2], [3, 4]], \"params\": {\"W_q\": [[1, 2, 3]]}}",
       3,
       "attn: error: <stdin>: params.W_q: shape [1][3] does not match X width 2 (X has shape "
       "[2][2]; the weight needs 2 input rows)\n"},
      {{"run", "/nonexistent/x.json"},
       "",
       4,
       "attn: error: /nonexistent/x.json: cannot open: No such file or directory\n"},
      {{"run", "/tmp"},
       "",
       4,
       "attn: error: /tmp: cannot read: Is a directory (to run each of its files, add --out-dir "
       "DIR "
       "for the results)\n"},
  };
  for (const Case& c : cases) {
    auto r = run_attn(c.args, c.stdin_text);
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    EXPECT_EQ(r.code, c.code) << joined << "\n" << r.err;
    EXPECT_EQ(r.err, c.err) << joined;
    EXPECT_EQ(r.out, "") << joined;
  }
}

// --threads splits the work, never the numbers: the same bytes for any
// count, on the streaming path (output only) and with the weights kept.
TEST(Cli, ThreadsDoNotChangeTheResult) {
  const std::string in = source_path("data/examples/multihead.json");
  for (const char* weights : {"", "--weights"}) {
    std::vector<std::string> base = {"run", in, "--format", "json", "--dtype", "f32"};
    if (*weights) base.push_back(weights);
    std::vector<std::string> one = base, two = base;
    one.insert(one.end(), {"--threads", "1"});
    two.insert(two.end(), {"--threads", "2"});
    const test::Run a = run_attn(one), b = run_attn(two), all = run_attn(base);
    ASSERT_EQ(a.code, 0) << a.err;
    EXPECT_EQ(a.out, b.out) << weights;
    EXPECT_EQ(a.out, all.out) << weights;
  }
  const test::Run bad = run_attn({"run", "--example", "sweet", "--threads", "-1"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("attn: error: --threads: "), std::string::npos) << bad.err;
}

TEST(Cli, RaggedCsvNamesLineAndColumn) {
  const std::string f = write_temp("ragged.csv", "1,2,3\n4,5\n");
  auto r = run_attn({"run", f});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + f +
                       ":2:4: row has 2 columns; expected 3 as in line 1 (ragged rows)\n");
}

TEST(Cli, UnreadableFileGivesExitFour) {
  const std::string f = write_temp("secret.json", "{\"X\": [[1]]}");
  ::chmod(f.c_str(), 0);
  ::chmod(test::temp_dir().c_str(), 0755);
  // Root reads anything; run as nobody then (setpriv is in util-linux).
  std::vector<std::string> args = {"run", f};
  test::Run r;
  if (::geteuid() == 0) {
    r = run_attn(args, "", {}, {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  } else {
    r = run_attn(args);
  }
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "attn: error: " + f + ": cannot open: Permission denied\n");
}

TEST(Cli, BrokenPipeEndsQuietly) {
  std::string big = "";
  for (int i = 0; i < 3000; ++i) big += std::to_string(i % 7) + "," + std::to_string(i % 5) + "\n";
  const std::string f = write_temp("big.csv", big);
  const std::string err = test::temp_dir() + "/pipe.err";
  const std::string cmd = "bash -c 'set -o pipefail; \"" + std::string(ATTN_BINARY) + "\" run \"" +
                          f + "\" -f csv 2>\"" + err + "\" | head -1 >/dev/null'";
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(read_text(err), "");
}

TEST(Cli, WeightsOutFile) {
  const std::string w = test::temp_dir() + "/w.csv";
  auto r = run_attn({"run", "--example", "sweet", "--weights-out", w, "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_text(w).substr(0, 35), "# weights [4][4]\n0.25,0.25,0.25,0.2");
}

// --head H without a figure: the table, JSON, CSV and --weights-out keep
// head H of the weights (the head axis dropped, as w[:, H] in NumPy).
TEST(Cli, HeadNarrowsTheResultToOneHead) {
  const std::string all = run_attn({"run", "--example", "multihead", "-w"}).out;
  auto r = run_attn({"run", "--example", "multihead", "--head", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("head 0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("head 2"), std::string::npos) << r.out;
  for (const char* b : {"0", "1"}) {
    // The block of head 1 as the full table prints it.
    const std::string caption = std::string("weights (batch ") + b + ", head 1)  [5][5]\n";
    const size_t at = all.find(caption);
    ASSERT_NE(at, std::string::npos) << all;
    const std::string block = all.substr(at, all.find("\n\n", at) - at);
    EXPECT_NE(r.out.find(block), std::string::npos) << r.out;
  }

  r = run_attn({"run", "--example", "multihead", "--head", "1", "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto full =
      nlohmann::json::parse(run_attn({"run", "--example", "multihead", "-w", "-f", "json"}).out);
  EXPECT_EQ(j["weights_axes"], nlohmann::json::array({"batch", "queries", "keys"}));
  ASSERT_EQ(j["weights"].size(), 2u);
  EXPECT_EQ(j["weights"][1], full["weights"][1][1]);
  EXPECT_EQ(j["output"], full["output"]);  // 2-D X: the output has no head axis

  const std::string w = test::temp_dir() + "/head1.csv";
  r = run_attn({"run", "--example", "multihead", "--head", "1", "-f", "csv", "--weights-out", w});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_text(w).substr(0, 28), "# weights [2][5][5]\n# index ");
  EXPECT_NE(r.out.find("# weights [2][5][5]\n"), std::string::npos) << r.out;

  r = run_attn({"run", "--example", "multihead", "--head", "4"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --head 4: out of range; the input has 4 heads (0 to 3)\n");
  r = run_attn({"run", "--example", "multihead", "--head", "1", "--average-heads"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --head 1 and --average-heads: one head's weights or the mean of them "
            "all; give one\n");
  const std::string npy = test::temp_dir() + "/out.npy";
  r = run_attn({"run", "--example", "multihead", "--head", "1", "-o", npy});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --head 1: -o " + npy +
                       " holds the output, which has no head axis; write head 1's weights with "
                       "--weights-out FILE.npy\n");
}

// Q, K and V of [batch][heads][len][d]: --head keeps that head's output too.
TEST(Cli, HeadOfAFourDimensionalInputNarrowsItsOutput) {
  const std::string q =
      write_temp("q4.json", "[[[[1,0],[0,1],[1,1]],[[0,2],[1,0],[2,1]]]]");  // [1][2][3][2]
  auto r = run_attn({"run", "--q", q, "--k", q, "--v", q, "-f", "json", "-w"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto full = nlohmann::json::parse(r.out);
  r = run_attn({"run", "--q", q, "--k", q, "--v", q, "-f", "json", "--head", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["output"], nlohmann::json::array({full["output"][0][1]}));
  EXPECT_EQ(j["weights"], nlohmann::json::array({full["weights"][0][1]}));
  r = run_attn({"run", "--q", q, "--k", q, "--v", q, "--head", "0"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("output (batch 0, head 0)  [3][2]\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("head 1"), std::string::npos) << r.out;
}

TEST(Cli, ExamplesListAndShow) {
  auto l = run_attn({"examples"});
  EXPECT_EQ(l.code, 0);
  EXPECT_NE(l.out.find("sweet"), std::string::npos);
  auto s = run_attn({"examples", "show", "sweet"});
  EXPECT_EQ(s.code, 0);
  EXPECT_NO_THROW(nlohmann::json::parse(s.out));
}

// attn examples names every tiny checkpoint (a directory of data/models
// with a config.json) and every GGUF file there, and suggests --text.
TEST(Cli, ExamplesListEveryTinyModel) {
  auto l = run_attn({"examples"});
  ASSERT_EQ(l.code, 0) << l.err;
  EXPECT_NE(l.out.find("--checkpoint DIR --text"), std::string::npos) << l.out;
  EXPECT_EQ(l.out.find("--x FILE"), std::string::npos) << l.out;
  namespace fs = std::filesystem;
  int checkpoints = 0, ggufs = 0;
  for (const auto& dir : fs::directory_iterator(test::model(""))) {
    const std::string name = dir.path().filename().string();
    if (name.rfind("tiny-", 0) != 0 || !fs::exists(dir.path() / "config.json")) continue;
    ++checkpoints;
    EXPECT_TRUE(l.out.find(" " + name + ",") != std::string::npos ||
                l.out.find(" " + name + "\n") != std::string::npos)
        << name;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      if (f.path().extension() != ".gguf") continue;
      ++ggufs;
      const std::string rel = name + "/" + f.path().filename().string();
      EXPECT_TRUE(l.out.find(" " + rel + ",") != std::string::npos ||
                  l.out.find(" " + rel + "\n") != std::string::npos)
          << rel;
    }
  }
  EXPECT_GT(checkpoints, 9);
  EXPECT_GT(ggufs, 9);
}

TEST(Cli, HelpAndVersion) {
  auto h = run_attn({"run", "--help"});
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.out.find("--variant"), std::string::npos);
  auto v = run_attn({"--version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out.substr(0, 5), "attn ");
  EXPECT_NE(v.out.find("Eigen 3.4"), std::string::npos);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

TEST(Cli, ValidLensListFlag) {
  // "2,6" is one length per batch (d2l's form), not an empty list.
  auto r = test::run_attn(
      {"run", "--example", "d2l_valid_lens", "--valid-lens", "2,6", "--check", "-q"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  auto one = test::run_attn({"run", "--example", "sweet", "--valid-lens", "1,2,3,4", "-f", "json"});
  EXPECT_EQ(one.code, 0) << one.err;
}

TEST(Cli, FiniteFillShowsTheWeightsOfMaskedCells) {
  auto r = test::run_attn({"run", "--example", "d2l_valid_lens", "--valid-lens", "[0,6]", "-w"});
  EXPECT_NE(r.out.find("0  0.1000  0.1000  0.1000"), std::string::npos) << r.out;
  auto inf = test::run_attn({"run", test::source_path("data/masks/causal.json"), "-w"});
  EXPECT_NE(inf.out.find("q0  1.0000  masked  masked  masked"), std::string::npos) << inf.out;
}

TEST(Cli, TraceWithJsonFormatIsTheJsonTrace) {
  auto r = test::run_attn({"run", "--example", "sweet", "--trace", "-f", "json"});
  ASSERT_EQ(r.code, 0);
  EXPECT_TRUE(nlohmann::json::parse(r.out).contains("steps"));
  auto c = test::run_attn({"run", "--example", "sweet", "--trace", "-f", "csv"});
  EXPECT_EQ(c.code, 2);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

using test::run_attn;

TEST(InternalError, TestHookExitsSeventyLikeABug) {
  auto r = run_attn({"run", "--example", "sweet"}, "", {"ATTN_DEBUG_INTERNAL_ERROR=1"});
  EXPECT_EQ(r.code, 70);
  EXPECT_EQ(r.err,
            "attn: error: internal error: ATTN_DEBUG_INTERNAL_ERROR=1 is set (a test hook)\n");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run_attn({"run", "--example", "sweet"}, "", {"ATTN_DEBUG_INTERNAL_ERROR=0"}).code, 0);
}

}  // namespace
}  // namespace attn
