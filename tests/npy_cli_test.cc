// The real attn binary on .npy files written by NumPy: inputs from every
// matrix flag, -o and --weights-out as .npy, compared with the results
// NumPy computed (tests/npy/make_fixtures.py).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>

#include "attn/npy.h"
#include "test_util.h"

namespace attn {
namespace {

using test::read_text;
using test::run_attn;
using test::source_path;
using test::temp_dir;

std::string npy(const std::string& name) { return source_path("tests/npy/" + name); }

NpyArray load(const std::string& path) {
  return parse_npy(read_text(path), path, CellKind::kExtended);
}

// A fresh output path in the test's temporary directory.
std::string out_path(const std::string& stem) {
  static int n = 0;
  return temp_dir() + "/" + stem + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".npy";
}

void expect_same(const NpyArray& got, const std::string& expected_file, double tol) {
  const NpyArray want = load(npy(expected_file));
  ASSERT_EQ(got.values.shape(), want.values.shape());
  for (int64_t i = 0; i < want.values.size(); ++i) {
    EXPECT_NEAR(got.values[i], want.values[i], tol) << expected_file << " at flat index " << i;
  }
}

TEST(NpyCli, RunWritesTheOutputNumpyComputed) {
  const std::string out = out_path("out");
  auto r = run_attn({"run", npy("X.npy"), "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  const NpyArray got = load(out);
  EXPECT_EQ(got.dtype, "<f8");
  expect_same(got, "expected_output.npy", 1e-12);
}

TEST(NpyCli, FormatFlagBesideANpyOutputIsAUsageError) {
  // A .npy file holds the output array, in no --format: the flag would be
  // ignored, so it is refused instead, and nothing is written.
  const std::string a = out_path("json");
  for (const char* format : {"json", "csv", "table"}) {
    const auto r = run_attn({"run", npy("X.npy"), "--format", format, "-o", a});
    EXPECT_EQ(r.code, 2) << format;
    EXPECT_EQ(r.err, "attn: error: --format " + std::string(format) + " contradicts -o " + a +
                         " (a .npy file); drop --format or change the file's extension\n");
  }
  EXPECT_FALSE(std::ifstream(a).good());
}

TEST(NpyCli, Float32OutputWithDtypeF32) {
  const std::string out = out_path("f32");
  auto r = run_attn({"run", npy("X.npy"), "--dtype", "f32", "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  const NpyArray got = load(out);
  EXPECT_EQ(got.dtype, "<f4");
  expect_same(got, "expected_output.npy", 1e-5);
}

TEST(NpyCli, WeightsOutWritesNpy) {
  const std::string w = out_path("weights");
  auto r = run_attn({"run", npy("X.npy"), "--weights-out", w, "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_same(load(w), "expected_weights.npy", 1e-12);
}

// --weights-out keeps the batch axis of an input that has one (a batch of
// one included), and writes [q][k] (or [heads][q][k]) for one without.
TEST(NpyCli, WeightsOutKeepsTheInputsBatchAxis) {
  const std::string x2 = test::write_temp("x2.json", "[[1,0],[0,1],[1,1]]");
  const std::string x3 = test::write_temp("x3.json", "[[[1,0],[0,1],[1,1]]]");
  const std::string q4 = test::write_temp("q4.json", "[[[[1,0],[0,1],[1,1]],[[0,2],[1,0],[2,1]]]]");
  const std::vector<std::pair<std::vector<std::string>, Shape>> cases = {
      {{"--x", x2}, {3, 3}},
      {{"--x", x2, "--heads", "2"}, {2, 3, 3}},
      {{"--x", x3}, {1, 3, 3}},
      {{"--x", x3, "--heads", "2"}, {1, 2, 3, 3}},
      {{"--q", q4, "--k", q4, "--v", q4}, {1, 2, 3, 3}},
  };
  for (const auto& [flags, shape] : cases) {
    const std::string w = out_path("batch_axis");
    std::vector<std::string> args = {"run", "-o", "/dev/null", "--weights-out", w};
    args.insert(args.end(), flags.begin(), flags.end());
    const test::Run r = run_attn(args);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(load(w).values.shape(), shape) << flags[1];
  }
}

TEST(NpyCli, EveryMatrixFlagTakesNpy) {
  const std::string a = out_path("qkv"), b = out_path("cross"), c = out_path("mask"),
                    d = out_path("bias");
  auto r =
      run_attn({"run", "--q", npy("X.npy"), "--k", npy("X.npy"), "--v", npy("X.npy"), "-o", a});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_same(load(a), "expected_output.npy", 1e-12);
  r = run_attn({"run", "--x", npy("X.npy"), "--y", npy("X.npy"), "-o", b});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_same(load(b), "expected_output.npy", 1e-12);
  r = run_attn({"run", "--x", npy("X.npy"), "--mask", npy("causal_mask.npy"), "-o", c});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_same(load(c), "expected_output_causal.npy", 1e-12);
  r = run_attn({"run", "--x", npy("X.npy"), "--bias", npy("bias.npy"), "-o", d});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_same(load(d), "expected_output_bias.npy", 1e-12);
}

TEST(NpyCli, Float32AndBatchedInputs) {
  const std::string a = out_path("in32"), b = out_path("batched");
  auto r = run_attn({"run", npy("X_f32.npy"), "-o", a});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_same(load(a), "expected_output_f32_input.npy", 1e-12);
  r = run_attn({"run", npy("X_batched.npy"), "-o", b});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_same(load(b), "expected_output_batched.npy", 1e-12);
}

TEST(NpyCli, StdinIsRecognisedByTheMagic) {
  const std::string out = out_path("stdin");
  auto r = run_attn({"run", "-", "-o", out}, read_text(npy("X.npy")));
  ASSERT_EQ(r.code, 0) << r.err;
  expect_same(load(out), "expected_output.npy", 1e-12);
}

TEST(NpyCli, TableOutputFromNpyInput) {
  auto r = run_attn({"run", npy("X.npy")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("output"), std::string::npos) << r.out;
}

TEST(NpyCli, WeightsFlagWithNpyOutputIsAUsageError) {
  const std::string out = out_path("usage");
  auto r = run_attn({"run", npy("X.npy"), "--weights", "-o", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: -o " + out +
                       ": a .npy file holds one array, the output; write the weights with "
                       "--weights-out FILE.npy\n");
  EXPECT_NE(::access(out.c_str(), F_OK), 0);
}

TEST(NpyCli, RefusedFilesExitWithInputErrors) {
  const std::string out = out_path("refused");
  // A Fortran-ordered array is read as the array it holds (np.save of k.T).
  auto r = run_attn({"run", npy("fortran.npy"), "-o", out});
  EXPECT_EQ(r.code, 0) << r.err;
  r = run_attn({"run", "--x", npy("nonfinite.npy")});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + npy("nonfinite.npy") +
                       "[3][1]: non-finite value nan is not allowed here\n");
  r = run_attn({"run", "--x", npy("X.npy"), "--mask", npy("mask_bad.npy")});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + npy("mask_bad.npy") +
                       "[1][0]: mask cells must be true/false or 0/1, got 2\n");
}

}  // namespace
}  // namespace attn
