// Hardening, through the real binary: sizes are checked before memory is
// reserved, files fail with exit 4 and the OS reason and are never left
// half-written, a closed pipe ends every command quietly, and extreme
// numbers are refused or computed without overflow.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace attn {
namespace {

using test::read_text;
using test::run_attn;
using test::source_path;
using test::temp_dir;
using test::write_temp;

std::string sweet() { return source_path("data/examples/sweet.json"); }
std::string tokens() { return source_path("data/csv/tokens.csv"); }

// A CSV of n one-feature rows: small on disk, n x n weights.
std::string rows_csv(const std::string& name, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += std::to_string(i % 5) + "\n";
  return write_temp(name, s);
}

// ---- limits before allocation -------------------------------------------

TEST(Limits, WeightsTooLargeToKeepStopBeforeAllocating) {
  const std::string f = rows_csv("rows65536.csv", 65536);
  auto r = run_attn({"run", f, "--weights", "-f", "json"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + f +
                       ": keeping the weights needs 4294967296 weights (batch 1 × heads 1 × 65536 "
                       "× 65536), more than --max-elements 67108864; raise --max-elements or drop "
                       "--weights\n");
  EXPECT_EQ(r.out, "");
  auto w = run_attn({"run", f, "--weights-out", temp_dir() + "/w.npy"});
  EXPECT_EQ(w.code, 3);
  EXPECT_NE(w.err.find("; raise --max-elements or drop --weights-out\n"), std::string::npos) << w.err;
}

TEST(Limits, OutputOnlyStreamsWithoutScoreMatrices) {
  // 2048 x 2048 scores = 4194304 > 10^6, but an output-only scaled_dot run
  // streams through fixed-size tiles: nothing len_q x len_k is counted.
  const std::string f = rows_csv("rows2048.csv", 2048);
  auto ok = run_attn({"run", f, "-f", "csv", "--max-elements", "1e6"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  auto kept = run_attn({"run", f, "-f", "csv", "--weights", "--max-elements", "1e6"});
  EXPECT_EQ(kept.code, 3);
  EXPECT_EQ(kept.err, "attn: error: " + f +
                          ": keeping the weights needs 4194304 weights (batch 1 × heads 1 × 2048 × "
                          "2048), more than --max-elements 1000000; raise --max-elements or drop "
                          "--weights\n");
  // single_layer is computed one whole score matrix per head at a time.
  auto single = run_attn({"run", "-", "--x", f, "-f", "csv", "--max-elements", "1e6"},
                         R"({"variant": "single_layer", "params": {"w": [1]}})");
  EXPECT_EQ(single.code, 3);
  EXPECT_NE(single.err.find("variant single_layer needs the whole score matrix of each head"),
            std::string::npos)
      << single.err;
}

TEST(Limits, EveryRequestThatKeepsScoresNamesItsFlag) {
  const std::string f = rows_csv("rows64.csv", 64);
  const std::string head = "attn: error: " + f + ": ";
  auto t = run_attn({"run", f, "--trace", "--max-elements", "1000"});
  EXPECT_EQ(t.code, 3);
  EXPECT_EQ(t.err, head + "--trace needs 4096 scores (batch 1 × heads 1 × 64 × 64), more than "
                          "--max-elements 1000; raise --max-elements or drop --trace\n");
  auto h = run_attn({"run", f, "--heatmap", temp_dir() + "/h.png", "--of", "scores",
                     "--max-elements", "1000"});
  EXPECT_EQ(h.code, 3);
  EXPECT_EQ(h.err, head + "keeping the scores needs 4096 scores (batch 1 × heads 1 × 64 × 64), "
                          "more than --max-elements 1000; raise --max-elements or drop --heatmap\n");
  auto img = run_attn({"run", sweet(), "--heatmap", temp_dir() + "/s.png", "--max-elements", "1e5"});
  EXPECT_EQ(img.code, 3);
  EXPECT_EQ(img.err, "attn: error: " + sweet() +
                         ": the heatmap needs up to 4194304 pixels (2048 × 2048), more than "
                         "--max-elements 100000; raise --max-elements or lower --max-size\n");
  EXPECT_FALSE(std::filesystem::exists(temp_dir() + "/s.png"));
}

TEST(Limits, ProjectionsThatMultiplyTheInputAreCounted) {
  // A few kilobytes of W_o widen every output row to 3000 values.
  std::string ones;
  for (int i = 0; i < 3000; ++i) ones += i ? ",1" : "1";
  const std::string g = write_temp("wide_wo.json", R"({"X": [[1], [2]], "params": {"W_o": [[)" +
                                                       ones + "]]}}");
  auto r = run_attn({"run", g, "--max-elements", "5000"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + g +
                       ": the output needs 6000 elements (batch 1 × 2 × 3000), more than "
                       "--max-elements 5000; raise --max-elements\n");
}

TEST(Limits, MaxElementsFlagTakesPlainExponentAndPowerForms) {
  const std::string f = rows_csv("rows40.csv", 40);
  EXPECT_EQ(run_attn({"run", f, "--weights", "--max-elements", "1600"}).code, 0);
  EXPECT_EQ(run_attn({"run", f, "--weights", "--max-elements", "2^11"}).code, 0);
  EXPECT_EQ(run_attn({"run", f, "--weights", "--max-elements", "1.6e3"}).code, 0);
  EXPECT_EQ(run_attn({"run", f, "--weights", "--max-elements", "1599"}).code, 3);
  auto bad = run_attn({"run", f, "--max-elements", "0"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "attn: error: --max-elements: expected a positive integer such as 67108864 "
                     "or 2^26, got '0'\n");
  auto word = run_attn({"run", f, "--max-elements", "lots"});
  EXPECT_EQ(word.code, 2);
  EXPECT_EQ(word.err, "attn: error: --max-elements: expected a number, got 'lots'\n");
}

TEST(Limits, JsonNestingIsBounded) {
  const std::string f = write_temp("nest.json", std::string(100000, '['));
  auto r = run_attn({"run", f});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + f + ":1:65: nesting deeper than 64 levels\n");
  auto m = run_attn({"run", "--x", f});
  EXPECT_EQ(m.code, 3);
  EXPECT_EQ(m.err, r.err);
}

TEST(Limits, JsonShapeReadOffFirstElementsIsNotReserved) {
  // [[[[1, ..., 1]], [], [], ...]]: the first elements imply 10^5 x 10^5
  // x 10^5 cells; the input holds 2 x 10^5 values. It must fail on the
  // ragged array, not ask for petabytes.
  const int n = 100000;
  std::string s = "{\"X\": [[[[";
  for (int i = 0; i < n; ++i) s += i ? ",1" : "1";
  s += "]]";
  for (int i = 0; i < n; ++i) s += ",[]";
  s += "]]}";
  const std::string f = write_temp("implied.json", s);
  auto r = run_attn({"run", f});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + f +
                       ": X[0][1]: has 0 elements where X[0][0] has 1 (ragged array; expected "
                       "shape [1][100001][1][100000])\n");
}

TEST(Limits, CsvWidthOfTheFirstRowIsNotReservedForEveryRow) {
  const int n = 100000;
  std::string s;
  for (int i = 0; i < n; ++i) s += i ? ",1" : "1";
  s += "\n";
  for (int i = 0; i < n; ++i) s += "1\n";
  const std::string f = write_temp("wide_first_row.csv", s);
  auto r = run_attn({"run", f});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + f +
                       ":2:2: row has 1 column; expected 100000 as in line 1 (ragged rows)\n");
}

// ---- files ------------------------------------------------------------------

TEST(Files, OutputIntoADirectory) {
  for (const char* flag : {"-o", "--weights-out", "--heatmap"}) {
    const std::string dir = temp_dir() + "/out_dir" + std::string(flag).substr(2) + ".png";
    ::mkdir(dir.c_str(), 0755);
    auto r = run_attn({"run", sweet(), flag, dir});
    EXPECT_EQ(r.code, 4) << flag;
    EXPECT_EQ(r.err, "attn: error: " + dir + ": cannot write: Is a directory\n") << flag;
    EXPECT_EQ(r.out, "") << flag;
  }
}

TEST(Files, FullDeviceGivesExitFour) {
  auto o = run_attn({"run", sweet(), "-o", "/dev/full"});
  EXPECT_EQ(o.code, 4);
  EXPECT_EQ(o.err, "attn: error: /dev/full: cannot write: No space left on device\n");
  auto w = run_attn({"run", sweet(), "--weights-out", "/dev/full", "-o", "/dev/null"});
  EXPECT_EQ(w.code, 4);
  EXPECT_EQ(w.err, "attn: error: /dev/full: cannot write: No space left on device\n");
  // A heatmap's format comes from its name: full.png is a link to /dev/full.
  const std::string png = temp_dir() + "/full.png";
  ASSERT_EQ(::symlink("/dev/full", png.c_str()), 0);
  auto h = run_attn({"run", sweet(), "--heatmap", png});
  EXPECT_EQ(h.code, 4);
  EXPECT_EQ(h.err, "attn: error: " + png + ": cannot write: No space left on device\n");
  EXPECT_EQ(h.out, "") << "files are written before stdout";
  auto hm = run_attn({"heatmap", tokens(), "-o", png});
  EXPECT_EQ(hm.code, 4);
  EXPECT_EQ(hm.err, "attn: error: " + png + ": cannot write: No space left on device\n");
}

TEST(Files, FullStdoutGivesExitFour) {
  // sh -c 'exec attn "$@" >/dev/full' attn ARGS: stdout is the full device.
  const std::vector<std::string> full_stdout = {"sh", "-c", "exec \"$0\" \"$@\" >/dev/full"};
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", sweet()}, {"examples"}, {"heatmap", tokens(), "--show"}}) {
    auto r = run_attn(args, "", {}, full_stdout);
    EXPECT_EQ(r.code, 4) << args[0];
    EXPECT_EQ(r.err, "attn: error: <stdout>: cannot write: No space left on device\n") << args[0];
  }
}

TEST(Files, SmallFullFilesystemLeavesTheOldFileAndNoTemporary) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a 64k tmpfs needs root";
  const std::string dir = temp_dir() + "/small_fs";
  ::mkdir(dir.c_str(), 0755);
  if (std::system(("mount -t tmpfs -o size=64k tmpfs " + dir + " 2>/dev/null").c_str()) != 0) {
    GTEST_SKIP() << "mount -t tmpfs failed (no CAP_SYS_ADMIN here); FullDeviceGivesExitFour "
                    "covers ENOSPC with /dev/full";
  }
  struct Unmount {
    std::string dir;
    ~Unmount() { (void)!std::system(("umount " + dir).c_str()); }
  } unmount{dir};
  const std::string out = dir + "/out.json";
  ASSERT_EQ(run_attn({"run", sweet(), "-f", "json", "-o", out}).code, 0);
  const std::string before = read_text(out);
  // 300 x 300 weights as JSON: about 2 MB, far more than the 64k left.
  const std::string big = rows_csv("rows300.csv", 300);
  auto r = run_attn({"run", big, "--weights", "-f", "json", "-o", out});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "attn: error: " + out + ": cannot write: No space left on device\n");
  EXPECT_EQ(read_text(out), before);
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename(), "out.json");
    ++files;
  }
  EXPECT_EQ(files, 1) << "the temporary file was removed";
}

TEST(Files, UnwritableDirectoryGivesExitFour) {
  const std::string dir = temp_dir() + "/read_only";
  ::mkdir(dir.c_str(), 0555);
  ::chmod(temp_dir().c_str(), 0755);
  std::vector<std::string> as_nobody;
  if (::geteuid() == 0) as_nobody = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  // The input goes next to it: nobody may not be able to read the source
  // tree (a clone under /root, mode 0700).
  const std::string in = write_temp("unwritable_dir_input.json", read_text(sweet()));
  ::chmod(in.c_str(), 0644);
  auto r = run_attn({"run", in, "-o", dir + "/out.json"}, "", {}, as_nobody);
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "attn: error: " + dir +
                       "/out.json: cannot create a temporary file next to it: Permission denied\n");
}

TEST(Files, MissingUnreadableOrDirectoryInputsOfEveryKind) {
  const std::string missing = temp_dir() + "/no_such_file.csv";
  const std::string nf = "attn: error: " + missing + ": cannot open: No such file or directory\n";
  const std::vector<std::vector<std::string>> cases = {
      {"run", missing},
      {"run", "--x", missing},
      {"run", tokens(), "--mask", missing},
      {"run", tokens(), "--bias", missing},
      {"run", tokens(), "--key-padding-mask", missing},
      {"run", "--q", tokens(), "--k", tokens(), "--v", missing},
      {"run", sweet(), "--expect", missing},
      {"heatmap", missing, "--show"},
  };
  for (const auto& args : cases) {
    auto r = run_attn(args);
    EXPECT_EQ(r.code, 4) << args[1] << " " << args[2];
    EXPECT_EQ(r.err, nf) << args[1] << " " << args[2];
  }
  const std::string dir = temp_dir();
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"run", "--x", dir}, {"heatmap", dir, "--show"}, {"run", sweet(), "--expect", dir}}) {
    auto r = run_attn(args);
    EXPECT_EQ(r.code, 4) << args[1];
    EXPECT_EQ(r.err, "attn: error: " + dir + ": cannot read: Is a directory\n") << args[1];
  }
}

TEST(Files, NoOutputFlagOverwritesAnInput) {
  const std::string x = write_temp("in_x.csv", "1,0\n0,1\n");
  const std::string m = write_temp("in_mask.csv", "0,1\n0,0\n");
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"run", x, "--mask", m, "-o", m}, "-o " + m + ": refusing to overwrite the input file " + m},
      {{"run", "--x", x, "--weights-out", x},
       "--weights-out " + x + ": refusing to overwrite the input file " + x},
      {{"run", x, "--heatmap", x}, "--heatmap " + x + ": refusing to overwrite the input file " + x},
      {{"run", x, "--bias", m, "--heatmap", m},
       "--heatmap " + m + ": refusing to overwrite the input file " + m},
      {{"heatmap", x, "-o", x}, "-o " + x + ": refusing to overwrite the input file " + x},
      {{"run", sweet(), "--expect", m, "-o", temp_dir() + "/../" +
                                                 std::filesystem::path(temp_dir()).filename().string() +
                                                 "/in_mask.csv"},
       "-o " + temp_dir() + "/../" + std::filesystem::path(temp_dir()).filename().string() +
           "/in_mask.csv: refusing to overwrite the input file " + m},
  };
  for (const Case& c : cases) {
    auto r = run_attn(c.args);
    EXPECT_EQ(r.code, 2) << c.err;
    EXPECT_EQ(r.err, "attn: error: " + c.err + "\n");
  }
  EXPECT_EQ(read_text(x), "1,0\n0,1\n");
  EXPECT_EQ(read_text(m), "0,1\n0,0\n");
}

TEST(Files, TwoOutputsIntoOneFileAreRefused) {
  const std::string out = temp_dir() + "/both.json";
  auto r = run_attn({"run", sweet(), "-o", out, "--weights-out", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --weights-out " + out +
                       ": -o writes that file too; give each output its own file\n");
  EXPECT_FALSE(std::filesystem::exists(out));
  auto devnull = run_attn({"run", sweet(), "-o", "/dev/null", "--weights-out", "/dev/null"});
  EXPECT_EQ(devnull.code, 0) << devnull.err;
}

// Every command, its output cut short by a reader that stops after a line.
TEST(Files, ClosedPipeEndsEveryCommandQuietly) {
  const std::string big = rows_csv("rows500.csv", 500);
  const std::vector<std::string> commands = {
      "run " + big + " -f csv --weights",
      "run " + big + " -f json --weights",
      "run " + big + " --weights",
      "run " + big + " --trace",
      "run " + big + " --emit-pytorch",
      "run " + big + " --show",
      "run --example sweet --similarity",
      "examples",
      "examples show multihead",
      "heatmap " + big + " --show",
      "run --help",
      "--version",
  };
  const std::string err = temp_dir() + "/pipe.err";
  for (const std::string& c : commands) {
    const std::string cmd = "bash -c 'set -o pipefail; \"" + std::string(ATTN_BINARY) + "\" " + c +
                            " 2>\"" + err + "\" | head -1 >/dev/null'";
    const int status = std::system(cmd.c_str());
    EXPECT_EQ(WEXITSTATUS(status), 0) << c;
    EXPECT_EQ(read_text(err), "") << c;
  }
}

// ---- numbers ------------------------------------------------------------------

TEST(Numbers, NonFiniteValuesAreRefusedInEveryMatrixFlag) {
  const std::string csv = write_temp("nan.csv", "1,2\n3,nan\n");
  const std::string good = write_temp("good.csv", "1,2\n3,4\n");
  for (const char* flag : {"--x", "--y", "--q", "--k", "--v"}) {
    std::vector<std::string> args = {"run", flag, csv};
    if (std::string(flag) == "--y") args = {"run", "--x", good, "--y", csv};
    if (std::string(flag) == "--k") args = {"run", "--q", good, "--k", csv};
    if (std::string(flag) == "--v") args = {"run", "--q", good, "--k", good, "--v", csv};
    if (std::string(flag) == "--q") args = {"run", "--q", csv, "--k", good};
    auto r = run_attn(args);
    EXPECT_EQ(r.code, 3) << flag;
    EXPECT_EQ(r.err, "attn: error: " + csv + ":2:3: non-finite value 'nan' is not allowed here\n")
        << flag;
  }
  // .npy: float64 [[1, 2], [inf, 4]].
  std::string npy = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }";
  npy += std::string(128 - 1 - npy.size(), ' ') + "\n";
  for (double v : {1.0, 2.0, double(INFINITY), 4.0}) npy.append(reinterpret_cast<const char*>(&v), 8);
  const std::string f = write_temp("inf.npy", npy);
  auto r = run_attn({"run", "--q", good, "--k", good, "--v", f});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + f + "[1][0]: non-finite value inf is not allowed here\n");
  // A bias may hold -inf, from every format.
  const std::string bias = write_temp("bias.csv", "0,-inf\n0,0\n");
  EXPECT_EQ(run_attn({"run", good, "--bias", bias}).code, 0);
}

TEST(Numbers, ScoresOfPlusMinusTenToThe300DoNotOverflow) {
  auto r = run_attn({"run", "-", "-f", "json", "--weights"},
                    R"({"Q": [[1e150]], "K": [[1e150], [-1e150], [1e150]], "V": [[1], [2], [3]],
                        "scale": "none"})");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["weights"][0][0].get<double>(), 0.5);
  EXPECT_EQ(j["weights"][0][1].get<double>(), 0.0);
  EXPECT_EQ(j["weights"][0][2].get<double>(), 0.5);
  EXPECT_EQ(j["output"][0][0].get<double>(), 2.0);
  // Rows of ±1e300 scores, scaled: still finite weights that sum to 1.
  auto s = run_attn({"run", "-", "-f", "json", "--weights"},
                    R"({"X": [[1e150, 0], [0, -1e150]], "scale": "sqrt_dk"})");
  ASSERT_EQ(s.code, 0) << s.err;
  auto k = nlohmann::json::parse(s.out);
  for (int i = 0; i < 2; ++i) {
    double sum = 0;
    for (int c = 0; c < 2; ++c) sum += k["weights"][i][c].get<double>();
    EXPECT_EQ(sum, 1.0);
  }
  EXPECT_EQ(k["weights"][0][0].get<double>(), 1.0);
  EXPECT_EQ(k["weights"][1][1].get<double>(), 1.0);
}

TEST(Numbers, ZeroLengthAndZeroWidthInputsAreClearErrors) {
  struct Case {
    std::string doc, err;
  };
  const std::vector<Case> cases = {
      {R"({"Q": [[1]], "K": []})", "<stdin>: K: empty (shape [0]); K needs at least one position and one feature"},
      {R"({"Q": [[1]], "K": [[1]], "V": [[]]})", "<stdin>: V: empty (shape [1][0]); V needs at least one position and one feature"},
      {R"({"X": [[[1]]], "Y": [[]]})", "<stdin>: Y: empty (shape [1][0]); Y needs at least one position and one feature"},
      {R"({"X": [[], []]})", "<stdin>: X: empty (shape [2][0]); X needs at least one position and one feature"},
  };
  for (const Case& c : cases) {
    auto r = run_attn({"run", "-"}, c.doc);
    EXPECT_EQ(r.code, 3) << c.doc;
    EXPECT_EQ(r.err, "attn: error: " + c.err + "\n") << c.doc;
  }
}

// ---- internal errors ------------------------------------------------------------

TEST(InternalError, TestHookExitsSeventyLikeABug) {
  auto r = run_attn({"run", "--example", "sweet"}, "", {"ATTN_DEBUG_INTERNAL_ERROR=1"});
  EXPECT_EQ(r.code, 70);
  EXPECT_EQ(r.err, "attn: error: internal error: ATTN_DEBUG_INTERNAL_ERROR=1 is set (a test hook)\n");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run_attn({"run", "--example", "sweet"}, "", {"ATTN_DEBUG_INTERNAL_ERROR=0"}).code, 0);
}

}  // namespace
}  // namespace attn
