// --emit-pytorch: every program attn prints for the data/ examples and the
// golden cases runs under PyTorch and prints attn's numbers to 1e-9. All
// programs run in one Python process (importing torch takes a second).
#include "attn/emit_pytorch.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attn/attention.h"
#include "commands/examples.h"
#include "test_util.h"

namespace attn {
namespace {

std::vector<std::string> json_files(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 5 && n.substr(n.size() - 5) == ".json") out.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool torch_available() {
  return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

double as_double(const nlohmann::json& j) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return NAN;
    return s == "inf" ? INFINITY : -INFINITY;
  }
  return j.get<double>();
}

void flatten(const nlohmann::json& j, std::vector<double>& out) {
  if (j.is_array()) {
    for (const auto& e : j) flatten(e, out);
  } else {
    out.push_back(as_double(j));
  }
}

void expect_close(const Tensor<double>& got, const nlohmann::json& want, const std::string& what) {
  std::vector<double> w;
  flatten(want, w);
  ASSERT_EQ(static_cast<size_t>(got.size()), w.size()) << what;
  for (size_t i = 0; i < w.size(); ++i) {
    const double g = got[static_cast<int64_t>(i)];
    if (std::isnan(w[i]) || std::isnan(g)) {
      EXPECT_TRUE(std::isnan(w[i]) && std::isnan(g)) << what << " at " << i;
      continue;
    }
    EXPECT_LE(std::fabs(g - w[i]), 1e-9 * std::max(1.0, std::fabs(w[i]))) << what << " at " << i;
  }
}

TEST(EmitPytorch, ProgramsReproduceAttnUnderPyTorch) {
  if (!torch_available()) {
    GTEST_SKIP() << "Debian's python3-torch is not installed (apt-get install python3-torch); "
                    "the --emit-pytorch cross-check did not run";
  }
  std::vector<std::string> files = json_files(test::source_path("data/examples"));
  for (const char* dir :
       {"data/masks", "data/variants", "tests/golden/cases", "tests/golden/modern"}) {
    for (const std::string& f : json_files(test::source_path(dir))) files.push_back(f);
  }
  ASSERT_GT(files.size(), 100u);
  const std::string dir = test::temp_dir() + "/emit";
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  std::vector<Result> results;
  std::ofstream list(dir + "/list.txt");
  // The cross-attention tutorial's example (generated, not a file): its program uses
  // nn.MultiheadAttention with the weights copied in.
  files.push_back("example cross_shapes");
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string text =
        files[i] == "example cross_shapes" ? cross_shapes_example() : test::read_text(files[i]);
    const Problem p = build_problem(read_document(text, files[i]));
    ComputeRequest req;
    req.weights = true;
    results.push_back(compute(p, req));
    const std::string prog = dir + "/p" + std::to_string(i) + ".py";
    const std::string program = emit_pytorch(p, "attn run " + files[i] + " --emit-pytorch", false);
    if (files[i] == "example cross_shapes") {
      EXPECT_NE(program.find("torch.nn.MultiheadAttention(512, 8"), std::string::npos);
    }
    std::ofstream(prog) << program;
    list << prog << "\n";
  }
  list.close();
  const std::string driver = test::write_temp(
      "emit_driver.py",
      "import contextlib, io, runpy, sys, traceback\n"
      "for prog in open(sys.argv[1]).read().split():\n"
      "    buf = io.StringIO()\n"
      "    try:\n"
      "        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):\n"
      "            runpy.run_path(prog, run_name='__main__')\n"
      "    except Exception:\n"
      "        buf = io.StringIO(traceback.format_exc().replace('\\n', ' | '))\n"
      "    open(prog + '.out', 'w').write(buf.getvalue())\n");
  ASSERT_EQ(std::system(("/usr/bin/python3 " + driver + " " + dir + "/list.txt").c_str()), 0);
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string out = test::read_text(dir + "/p" + std::to_string(i) + ".py.out");
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(out);
    } catch (const std::exception&) {
      ADD_FAILURE() << files[i] << ": the program did not print JSON: " << out;
      continue;
    }
    expect_close(results[i].output, j["output"], files[i] + " output");
    expect_close(*results[i].weights, j["weights"], files[i] + " weights");
  }
}

TEST(EmitPytorch, CliPrintsAProgram) {
  auto r = test::run_attn({"run", "--example", "sweet", "--emit-pytorch"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("import torch"), std::string::npos);
  EXPECT_NE(r.out.find("\nCOMMAND = 'attn run --example sweet --emit-pytorch'\n"),
            std::string::npos)
      << r.out;
}

// The program replaces the computation: flags that need the result are
// refused, not dropped without a word.
TEST(EmitPytorch, RefusesFlagsThatNeedTheResult) {
  const std::string sweet = test::source_path("data/examples/sweet.json");
  const std::string why =
      " does not go with --emit-pytorch, which prints a program instead of "
      "computing";
  const std::string expect_hint =
      "; run the program and give its output to --expect in a second run";
  auto c = test::run_attn({"run", sweet, "--emit-pytorch", "--check"});
  EXPECT_EQ(c.code, 2);
  EXPECT_EQ(c.err, "attn: error: --check" + why + expect_hint + "\n");
  EXPECT_EQ(c.out, "");
  auto e = test::run_attn({"run", sweet, "--emit-pytorch", "--expect", sweet});
  EXPECT_EQ(e.code, 2);
  EXPECT_EQ(e.err, "attn: error: --expect" + why + expect_hint + "\n");
  auto t = test::run_attn({"run", sweet, "--emit-pytorch", "--trace"});
  EXPECT_EQ(t.code, 2);
  EXPECT_EQ(t.err, "attn: error: --trace" + why + "\n");
  for (const std::vector<std::string>& extra : {std::vector<std::string>{"--similarity"},
                                                {"--weights-out", test::temp_dir() + "/w.json"},
                                                {"--heatmap", test::temp_dir() + "/h.png"},
                                                {"--show"}}) {
    std::vector<std::string> args = {"run", sweet, "--emit-pytorch"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = test::run_attn(args);
    EXPECT_EQ(r.code, 2) << extra[0];
    EXPECT_EQ(r.err, "attn: error: " + extra[0] + why + "\n");
  }
  // A batch refuses once, before running any input.
  auto b = test::run_attn({"run", sweet, sweet, "--out-dir", test::temp_dir() + "/emit_batch",
                           "--emit-pytorch", "--trace"});
  EXPECT_EQ(b.code, 2);
  EXPECT_EQ(b.err, "attn: error: --trace" + why + "\n");
}

}  // namespace
}  // namespace attn
