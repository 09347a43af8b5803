// A result saved as .npz (-o FILE.npz): the JSON result's members as
// arrays NumPy loads without pickle, read back by attn heatmap and attn diff
// to redraw the run's figure. The writer through the library:
// npz_result_test.cc.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "attn/error.h"
#include "attn/npy.h"
#include "attn/npz.h"
#include "test_util.h"

namespace attn {
namespace {

using test::read_text;
using test::run_attn;
using test::temp_dir;

bool have_numpy() { return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

TEST(NpzResult, NumPyLoadsEveryMemberWithoutPickle) {
  if (!have_numpy()) GTEST_SKIP() << "python3-numpy is not installed";
  const std::string r = temp_dir() + "/causal_result.npz";
  const test::Run run = run_attn({"run", "--example", "causal", "-w", "-o", r});
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string json = temp_dir() + "/causal_result.json";
  ASSERT_EQ(run_attn({"run", "--example", "causal", "-w", "-o", json}).code, 0);
  // Every member equals the JSON result's, numbers to the last bit.
  const std::string script = temp_dir() + "/load_npz.py";
  std::ofstream(script) << R"(import json, sys
import numpy as np
z = np.load(sys.argv[1], allow_pickle=False)
j = json.load(open(sys.argv[2]))
assert z.files == ['labels_queries', 'labels_keys', 'title', 'settings', 'output', 'weights',
                   'weights_axes', 'masked'], z.files
assert list(z['labels_queries']) == j['labels']['queries']
assert list(z['labels_keys']) == j['labels']['keys']
assert str(z['title']) == j['title'] and str(z['settings']) == j['settings']
assert np.array_equal(z['output'], np.array(j['output']))
assert np.array_equal(z['weights'], np.array(j['weights']))
assert list(z['weights_axes']) == j['weights_axes']
assert z['masked'].dtype == np.bool_
assert np.array_equal(z['masked'], np.array(j['masked']) == 1)
print('ok')
)";
  const std::string cmd = "/usr/bin/python3 " + test::quote(script) + " " + test::quote(r) + " " +
                          test::quote(json) + " 2>&1";
  std::FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_TRUE(pipe);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  EXPECT_EQ(pclose(pipe), 0) << out;
  EXPECT_EQ(out, "ok\n");
}

TEST(NpzResult, RedrawsTheRunsFigureByteForByte) {
  for (const char* example : {"causal", "llama", "multihead", "d2l_valid_lens"}) {
    const std::string dir = temp_dir() + "/npz_redraw_" + example;
    const std::string r = dir + ".npz", run_png = dir + "_run.png", redraw = dir + "_redraw.png";
    const test::Run run =
        run_attn({"run", "--example", example, "-w", "-o", r, "--heatmap", run_png, "-q"});
    ASSERT_EQ(run.code, 0) << run.err;
    const test::Run h = run_attn({"heatmap", r, "-o", redraw});
    ASSERT_EQ(h.code, 0) << h.err;
    EXPECT_EQ(read_text(redraw), read_text(run_png)) << example;
  }
  // Without -w the output is drawn, named as in a JSON result.
  const std::string r = temp_dir() + "/npz_output_only.npz";
  ASSERT_EQ(run_attn({"run", "--example", "sweet", "-o", r}).code, 0);
  const std::string json = temp_dir() + "/npz_output_only.json";
  ASSERT_EQ(run_attn({"run", "--example", "sweet", "-o", json}).code, 0);
  const std::string a = temp_dir() + "/npz_out.svg", b = temp_dir() + "/json_out.svg";
  ASSERT_EQ(run_attn({"heatmap", r, "-o", a}).code, 0);
  ASSERT_EQ(run_attn({"heatmap", json, "-o", b}).code, 0);
  std::string from_npz = read_text(a), from_json = read_text(b);
  // The title names the file it came from; everything else is the same.
  const auto strip = [](std::string s, const std::string& name) {
    for (size_t at; (at = s.find(name)) != std::string::npos;) s.erase(at, name.size());
    return s;
  };
  EXPECT_EQ(strip(from_npz, "npz_output_only.npz"), strip(from_json, "npz_output_only.json"));
}

TEST(NpzResult, DiffComparesTwoArchives) {
  const std::string a = temp_dir() + "/diff_a.npz", b = temp_dir() + "/diff_b.npz";
  ASSERT_EQ(run_attn({"run", "--example", "sweet", "-w", "-o", a}).code, 0);
  ASSERT_EQ(run_attn({"run", "--example", "sweet", "-w", "--scale-at", "output", "-o", b}).code, 0);
  const test::Run same = run_attn({"diff", a, a, "--tolerance", "0"});
  EXPECT_EQ(same.code, 0) << same.err;
  const test::Run differ = run_attn({"diff", a, b, "--tolerance", "1e-6"});
  EXPECT_EQ(differ.code, 1) << differ.err;
  EXPECT_NE(differ.out.find("sweet"), std::string::npos);  // the labels travelled
}

TEST(NpzResult, TracesAndFormatsDoNotGoIntoAnArchive) {
  const std::string r = temp_dir() + "/refused.npz";
  const test::Run trace = run_attn({"run", "--example", "sweet", "--trace", "-o", r});
  EXPECT_EQ(trace.code, 2);
  EXPECT_EQ(trace.err, "attn: error: -o " + r +
                           ": --trace prints a trace, not .npz; write it to a .txt, .md, .tex or "
                           ".json file\n");
  const test::Run format = run_attn({"run", "--example", "sweet", "-f", "csv", "-o", r});
  EXPECT_EQ(format.code, 2);
  EXPECT_EQ(format.err, "attn: error: --format csv contradicts -o " + r +
                            " (a .npz file); drop --format or change the file's extension\n");
  EXPECT_FALSE(std::ifstream(r).good());
}

}  // namespace
}  // namespace attn
