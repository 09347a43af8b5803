// Batches: `attn run` on several files or a directory with --out-dir, one
// result per input, bad inputs reported and skipped.
#include "commands/batch.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::read_text;
using test::run_attn;
using test::temp_dir;

// A fresh directory under the test's temporary directory.
std::string fresh_dir(const std::string& name) {
  const std::string d = temp_dir() + "/" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_TRUE(f) << path;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

// Document i: X = [[i, 1], [1, i]]; its self-attention output is known in
// closed form, so every result file can be checked against its input.
std::string doc(int i) {
  return "{\"X\": [[" + std::to_string(i) + ", 1], [1, " + std::to_string(i) + "]]}\n";
}

TEST(Batch, HundredInputsThreeBadGiveNinetySevenResultsAndAReport) {
  const std::string in = fresh_dir("batch100/in"), out = temp_dir() + "/batch100/out";
  for (int i = 0; i < 100; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/in%03d.json", i);
    std::string text = doc(i);
    if (i == 13) text = "{\"X\": [[1, 2], [3]]}";             // ragged
    if (i == 42) text = "{\"X\": [[1, 2]], \"varient\": 1}";  // unknown key
    if (i == 77) text = "{\"X\": [[1, 2], [3, 4]";            // truncated
    write(in + name, text);
  }
  const test::Run r = run_attn({"run", in, "--out-dir", out, "--format", "json"});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(r.out, "");
  // Per bad input, in order, the one line `attn run` on it alone prints;
  // then the summary naming the three.
  std::string want_err;
  for (const char* bad : {"/in013.json", "/in042.json", "/in077.json"}) {
    const test::Run alone = run_attn({"run", in + bad});
    EXPECT_EQ(alone.code, 3);
    EXPECT_EQ(alone.err.rfind("attn: error: " + in + bad + ":", 0), 0u) << alone.err;
    want_err += alone.err;
  }
  want_err += "attn: 97 of 100 inputs done; 3 failed: " + in + "/in013.json, " + in +
              "/in042.json, " + in + "/in077.json\n";
  EXPECT_EQ(r.err, want_err);
  EXPECT_NE(r.err.find(in + "/in077.json:1:22: unexpected end of input"), std::string::npos);
  int results = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    ++results;
    const std::string stem = e.path().stem().string();
    const int i = std::stoi(stem.substr(2));
    EXPECT_NE(i, 13);
    EXPECT_NE(i, 42);
    EXPECT_NE(i, 77);
    EXPECT_EQ(e.path().extension(), ".json");
    // Row 0 of softmax([[i²+1, 2i], [2i, i²+1]]/√2)·X, by hand.
    const double a = (i * i + 1) / std::sqrt(2.0), b = 2 * i / std::sqrt(2.0);
    const double w0 = 1 / (1 + std::exp(b - a)), w1 = 1 - w0;
    const auto j = nlohmann::json::parse(read_text(e.path().string()));
    EXPECT_NEAR(j["output"][0][0].get<double>(), w0 * i + w1 * 1, 1e-12) << stem;
    EXPECT_NEAR(j["output"][0][1].get<double>(), w0 * 1 + w1 * i, 1e-12) << stem;
  }
  EXPECT_EQ(results, 97);
}

TEST(Batch, ExitCodeIsTheWorstAndFileErrorsCount) {
  const std::string d = fresh_dir("batch_codes");
  write(d + "/good.json", doc(2));
  write(d + "/bad.csv", "1,2\n3\n");
  // good.json runs, missing.json cannot be opened (4), bad.csv is ragged (3).
  const test::Run r = run_attn(
      {"run", d + "/good.json", d + "/missing.json", d + "/bad.csv", "--out-dir", d + "/out"}, "");
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find("attn: error: " + d + "/missing.json: cannot open: No such file"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("attn: 1 of 3 inputs done; 2 failed: "), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(d + "/out/good.txt"));  // table, the default format
}

TEST(Batch, ChecksThatDifferExitOneAndAreNamed) {
  const std::string d = fresh_dir("batch_check");
  write(d + "/same.json", "{\"X\": [[1, 0]], \"expected\": {\"output\": [[1, 0]]}}");
  write(d + "/differ.json", "{\"X\": [[1, 0]], \"expected\": {\"output\": [[2, 0]]}}");
  const test::Run r = run_attn({"run", d, "--out-dir", d + "/out", "--check", "-f", "csv"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find(d + "/differ.json: check FAILED: 1 of 2 values differ"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("attn: 2 of 2 inputs done; 1 differ from their expected numbers: " + d +
                       "/differ.json"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read_text(d + "/out/same.csv"), "# output [1][2]\n1,0\n");
}

TEST(Batch, QuietSuccessPrintsNothing) {
  const std::string d = fresh_dir("batch_quiet");
  write(d + "/a.json", doc(1));
  write(d + "/b.json", doc(2));
  const test::Run r = run_attn({"run", d + "/a.json", d + "/b.json", "--out-dir", d + "/o", "-q"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "");
  const test::Run loud = run_attn({"run", d + "/a.json", d + "/b.json", "--out-dir", d + "/o"});
  EXPECT_EQ(loud.err, "attn: 2 of 2 inputs done; results in " + d + "/o\n");
}

TEST(Batch, UsageErrors) {
  const std::string d = fresh_dir("batch_usage");
  write(d + "/a.json", doc(1));
  write(d + "/a.csv", "1,2\n3,4\n");
  write(d + "/b.json", doc(2));
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const Case cases[] = {
      {{"run", d + "/a.json", d + "/b.json"},
       "attn: error: 2 inputs need --out-dir DIR (each result is written to its own file there)\n"},
      {{"run", d, "--out-dir", d + "/o", "-f", "json"},
       "attn: error: " + d + "/a.csv and " + d + "/a.json would both be written to " + d +
           "/o/a.json; give them different names\n"},
      {{"run", d + "/a.json", "--out-dir", d, "-f", "json"},
       "attn: error: --out-dir " + d + ": the result of " + d +
           "/a.json would overwrite the input " + d + "/a.json; choose another directory\n"},
      {{"run", d + "/a.json", d + "/b.json", "--out-dir", d + "/o", "-o", "x.json"},
       "attn: error: -o writes one file; with --out-dir each input gets its own result file in "
       "DIR\n"},
      {{"run", d + "/a.json", "--out-dir", d + "/o", "--weights-out", "w.csv"},
       "attn: error: --weights-out writes one file; with --out-dir each input gets its own result "
       "(use --weights)\n"},
      {{"run", d + "/a.json", "--out-dir", d + "/o", "--heatmap", "w.png"},
       "attn: error: --heatmap writes one file; with --out-dir each input gets its own result; "
       "--heatmap png, svg or html draws one figure per input\n"},
      {{"run", d + "/a.json", "--heatmap", "svg"},
       "attn: error: --heatmap svg names a format: with --out-dir DIR it draws one figure per "
       "input there; for one run give a file name (--heatmap weights.svg)\n"},
      {{"run", "-", "-", "--out-dir", d + "/o"}, "attn: error: - (stdin) can be read only once\n"},
      {{"run", fresh_dir("batch_usage_empty"), "--out-dir", d + "/o"},
       "attn: error: " + temp_dir() +
           "/batch_usage_empty: no .json, .csv or .npy files in the "
           "directory\n"},
  };
  for (const Case& c : cases) {
    const test::Run r = run_attn(c.args);
    EXPECT_EQ(r.code, 2) << c.err;
    EXPECT_EQ(r.err, c.err);
  }
  EXPECT_FALSE(fs::exists(d + "/o"));
  // A directory alone cannot be read as one input: a file error.
  const test::Run dir = run_attn({"run", d});
  EXPECT_EQ(dir.code, 4);
  EXPECT_EQ(dir.err, "attn: error: " + d +
                         ": cannot read: Is a directory (to run each of its files, add --out-dir "
                         "DIR for the results)\n");
}

TEST(Batch, OutputNamesFollowWhatIsPrinted) {
  RunRequest r;
  EXPECT_EQ(batch_output_name("in/a.json", r), "a.txt");
  r.output.format = Format::kJson;
  EXPECT_EQ(batch_output_name("in/a.b.csv", r), "a.b.json");
  r.output.format = Format::kCsv;
  EXPECT_EQ(batch_output_name("x.npy", r), "x.csv");
  EXPECT_EQ(batch_output_name("-", r), "stdin.csv");
  r.trace.enabled = true;
  r.trace.options.format = TraceFormat::kMarkdown;
  EXPECT_EQ(batch_output_name("in/a.json", r), "a.md");
  r.trace.options.format = TraceFormat::kLatex;
  EXPECT_EQ(batch_output_name("in/a.json", r), "a.tex");
  r.emit_pytorch = true;
  EXPECT_EQ(batch_output_name("in/a.json", r), "a.py");
}

TEST(Batch, DirectoriesExpandToTheirInputFilesInNameOrder) {
  const std::string d = fresh_dir("batch_expand");
  for (const char* n : {"b.json", "a.npy", "c.CSV", "notes.txt", ".hidden.json", "z.json"}) {
    write(d + "/" + n, "");
  }
  fs::create_directories(d + "/sub.json");  // a directory, not an input
  EXPECT_EQ(expand_batch_inputs({"first.json", d, "-"}),
            (std::vector<std::string>{"first.json", d + "/a.npy", d + "/b.json", d + "/c.CSV",
                                      d + "/z.json", "-"}));
}

// --heatmap png|svg|html: each input's figure beside its result, the same
// bytes `attn run INPUT --heatmap FILE` draws; a failed input draws none.
TEST(Batch, AFormatForHeatmapDrawsOneFigurePerInput) {
  const std::string d = fresh_dir("batch_figures");
  write(d + "/a.json", doc(1));
  write(d + "/b.json", doc(2));
  write(d + "/c.json", "{\"X\": [[1, 2], [3]]}");  // ragged
  for (const std::string format : {"png", "svg", "html"}) {
    const std::string out = d + "/out_" + format;
    const test::Run r =
        run_attn({"run", d, "--out-dir", out, "--heatmap", format, "-f", "json", "-q"});
    EXPECT_EQ(r.code, 3) << r.err;
    for (const std::string name : {"a", "b"}) {
      EXPECT_TRUE(fs::exists(out + "/" + name + ".json")) << name;
      const std::string alone = d + "/alone_" + name + "." + format;
      const test::Run one = run_attn({"run", d + "/" + name + ".json", "--heatmap", alone, "-f",
                                      "json", "-o", alone + ".json"});
      ASSERT_EQ(one.code, 0) << one.err;
      EXPECT_EQ(read_text(out + "/" + name + "." + format), read_text(alone)) << name << format;
    }
    EXPECT_FALSE(fs::exists(out + "/c." + format));
  }
}

TEST(Batch, StdinCanBeOneInput) {
  const std::string d = fresh_dir("batch_stdin");
  write(d + "/a.json", doc(1));
  const test::Run r =
      run_attn({"run", d + "/a.json", "-", "--out-dir", d + "/o", "-f", "json", "-q"}, doc(3));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(d + "/o/a.json"));
  EXPECT_TRUE(fs::exists(d + "/o/stdin.json"));
}

}  // namespace
}  // namespace attn
