// Hardening, through the real binary: sizes are checked before memory is
// reserved, files fail with exit 4 and the OS reason and are never left
// half-written (nor their temporary files, signals included), outputs go
// through links and into devices without replacing them, a closed pipe
// ends every command quietly, and extreme numbers are refused or computed
// without overflow.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "shell_util.h"
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
  EXPECT_NE(w.err.find("; raise --max-elements or drop --weights-out\n"), std::string::npos)
      << w.err;
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
  // Ten steps (input, scores, exponentials, weights, weighted sum, ...),
  // most of them a whole 64 x 64 matrix.
  EXPECT_EQ(t.err, head +
                       "--trace needs 18562 elements (10 steps over batch 1 × heads 1), more "
                       "than --max-elements 1000; raise --max-elements or drop --trace\n");
  auto h = run_attn(
      {"run", f, "--heatmap", temp_dir() + "/h.png", "--of", "scores", "--max-elements", "1000"});
  EXPECT_EQ(h.code, 3);
  EXPECT_EQ(h.err, head +
                       "keeping the scores needs 4096 scores (batch 1 × heads 1 × 64 × 64), "
                       "more than --max-elements 1000; raise --max-elements or drop --heatmap\n");
  auto img =
      run_attn({"run", sweet(), "--heatmap", temp_dir() + "/s.png", "--max-elements", "1e5"});
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
  const std::string g =
      write_temp("wide_wo.json", R"({"X": [[1], [2]], "params": {"W_o": [[)" + ones + "]]}}");
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
  EXPECT_EQ(bad.err,
            "attn: error: --max-elements: expected a positive integer such as 67108864 "
            "or 2^26, got '0'\n");
  auto word = run_attn({"run", f, "--max-elements", "lots"});
  EXPECT_EQ(word.code, 2);
  EXPECT_EQ(word.err, "attn: error: --max-elements: expected a number, got 'lots'\n");
}

// Runs attn with its address space capped at `mb` megabytes: a run that
// reserves more than it counted fails (exit 70, out of memory) instead of
// passing on a machine with memory to spare. AddressSanitizer reserves
// terabytes of shadow memory up front and cannot start under such a cap, so
// the sanitized build checks the result alone; the plain build checks both.
test::Run run_attn_capped(const std::vector<std::string>& args, int mb) {
  if (ATTN_SANITIZED) return run_attn(args);
  return run_attn(
      args, "", {},
      {"sh", "-c", "ulimit -v " + std::to_string(mb * 1024) + " && exec \"$0\" \"$@\""});
}

// One row of n values: a single query of width n.
std::string wide_row_csv(const std::string& name, int n) {
  std::string s;
  s.reserve(static_cast<size_t>(n) * 2);
  for (int i = 0; i < n; ++i) s += i ? ",1" : "1";
  return write_temp(name, s + "\n");
}

TEST(Limits, OneWideQueryReservesNoBlockOfQueriesNorPaddedKeys) {
  // X of 1 x 3,000,000 (24 MB): the kernels reserved 48 query rows of it
  // twice and packed the one key into a panel of 8 to 48 (3 GB, exit 70
  // under a memory limit); now it takes about 380 MB.
  const std::string f = wide_row_csv("wide3m.csv", 3000000);
  for (const char* dtype : {"f64", "f32"}) {
    auto r = run_attn_capped({"run", f, "--dtype", dtype, "-f", "csv", "-o", temp_dir() + "/w.csv"},
                             1200);
    EXPECT_EQ(r.code, 0) << dtype << ": " << r.err;
  }
  // A weight that widens every row is counted before it is applied.
  auto w = run_attn({"run", f, "--max-elements", "2e6"});
  EXPECT_EQ(w.code, 3);
  EXPECT_EQ(w.err, "attn: error: " + f +
                       ": Q needs 3000000 elements (batch 1 × 1 × 3000000), more than "
                       "--max-elements 2000000; raise --max-elements\n");
}

TEST(Limits, ShortWideKeysTakeTheUnpaddedPath) {
  // 2 x 1,000,000: packing two keys into a panel would pad them to 8 to 48
  // keys; the reference path takes them instead, with the same formula.
  std::string s;
  for (int r = 0; r < 2; ++r) {
    s += r ? "0,1" : "1,0";
    for (int i = 2; i < 1000000; ++i) s += ",0";
    s += "\n";
  }
  const std::string f = write_temp("two_wide.csv", s);
  auto r = run_attn_capped({"run", f, "-f", "json"}, 1200);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["output"].size(), 2u);
  ASSERT_EQ(j["output"][0].size(), 1000000u);
  // q0·k0 = 1, q0·k1 = 0, scaled by 1/√10^6.
  const double w00 = 1 / (1 + std::exp(-1e-3));
  EXPECT_NEAR(j["output"][0][0].get<double>(), w00, 1e-12);
  EXPECT_NEAR(j["output"][0][1].get<double>(), 1 - w00, 1e-12);
  EXPECT_EQ(j["output"][0][2].get<double>(), 0.0);
}

TEST(Limits, TraceCountsEveryStepOfEveryHead) {
  // 262,144 heads of width 1: each head's ten steps are tiny, but a step
  // costs hundreds of bytes (2.3 GB in all); the count includes them.
  std::string x = R"({"heads": 262144, "X": [[)";
  for (int i = 0; i < 262144; ++i) x += i ? ",0.5" : "0.5";
  const std::string f = write_temp("heads262144.json", x + "]]}");
  auto r = run_attn({"run", f, "--trace", "-o", "/dev/null"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + f +
                       ": --trace needs 172753216 elements (2621445 steps over batch 1 × heads "
                       "262144), more than --max-elements 67108864; raise --max-elements or drop "
                       "--trace\n");
}

TEST(Limits, EveryHeadCostsWorkingMemory) {
  // 64 x 100,000 heads of 8 x 1 took 8.8 GB and 35 s for a 400 MB input;
  // here the same rule on a small input and a low limit.
  std::string s;
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < 65536; ++i) s += i ? ",1" : "1";
    s += "\n";
  }
  const std::string f = write_temp("heads65536.csv", s);
  auto r = run_attn({"run", f, "--heads", "65536", "--max-elements", "1e6"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + f +
                       ": batch 1 × heads 65536 need 6291456 elements (96 per head of working "
                       "memory), more than --max-elements 1000000; raise --max-elements or use "
                       "fewer heads\n");
  EXPECT_EQ(run_attn({"run", f, "--heads", "65536", "-o", "/dev/null"}).code, 0);
}

TEST(Limits, SimilarityAndConcatenatedHeadsAreCounted) {
  const std::string f = rows_csv("rows2048s.csv", 2048);
  auto sim = run_attn({"run", f, "--similarity", "--max-elements", "1e6", "-o", "/dev/null"});
  EXPECT_EQ(sim.code, 3);
  EXPECT_EQ(sim.err, "attn: error: " + f +
                         ": --similarity needs 8388608 elements (2 × 1 × 2048 × 2048), more than "
                         "--max-elements 1000000; raise --max-elements or drop --similarity\n");
  // 1000 queries, one key: W_v widens the key to 3000 values and W_o
  // narrows each output row back to 1, but in between the head outputs of
  // all queries are 1000 x 3000.
  std::string xs, wv, wo;
  for (int i = 0; i < 1000; ++i) xs += i ? ",[1]" : "[1]";
  for (int i = 0; i < 3000; ++i) {
    wv += i ? ",1" : "1";
    wo += i ? ",[1]" : "[1]";
  }
  const std::string g = write_temp("concat.json", R"({"X": [)" + xs + R"(], "Y": [[1]], )" +
                                                      R"("params": {"W_v": [[)" + wv +
                                                      R"(]], "W_o": [)" + wo + "]}}");
  auto c = run_attn({"run", g, "--max-elements", "1e6"});
  EXPECT_EQ(c.code, 3);
  EXPECT_EQ(c.err, "attn: error: " + g +
                       ": the concatenation of the head outputs needs 3000000 elements (batch 1 × "
                       "1000 × 3000), more than --max-elements 1000000; raise --max-elements\n");
}

TEST(Limits, BenchCountsWhatItAllocates) {
  auto r = run_attn({"bench", "--n", "100000"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err,
            "attn: error: bench: keeping the weights needs 10000000000 weights (batch 1 × "
            "heads 1 × 100000 × 100000), more than --max-elements 67108864; raise "
            "--max-elements or use --no-weights\n");
  auto wide = run_attn({"bench", "--n", "1", "--d", "65536", "--heads", "4096", "--no-weights"});
  EXPECT_EQ(wide.code, 3);
  EXPECT_EQ(wide.err,
            "attn: error: bench: Q, K, V and the output need 268435456 elements each "
            "(batch 1 × heads 4096 × 1 × 65536), more than --max-elements 67108864; "
            "raise --max-elements or lower --n or --d\n");
  auto heads = run_attn(
      {"bench", "--n", "1", "--d", "1", "--heads", "4096", "--batch", "1048576", "--no-weights"});
  EXPECT_EQ(heads.code, 3);
  EXPECT_EQ(heads.err,
            "attn: error: bench: Q, K, V and the output need 4294967296 elements each "
            "(batch 1048576 × heads 4096 × 1 × 1), more than --max-elements 67108864; "
            "raise --max-elements or lower --n or --d\n");
  // The limit is the flag's: 64 x 64 weights are exactly 2^12.
  const std::vector<std::string> small = {"bench", "--n", "64", "--d", "8", "--seconds", "0"};
  auto at = small;
  at.insert(at.end(), {"--max-elements", "2^12"});
  EXPECT_EQ(run_attn(at).code, 0);
  auto below = small;
  below.insert(below.end(), {"--max-elements", "4095"});
  auto b = run_attn(below);
  EXPECT_EQ(b.code, 3);
  EXPECT_NE(b.err.find("keeping the weights needs 4096 weights"), std::string::npos) << b.err;
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

// A CSV of exactly `bytes` bytes (an even number): "1\n" lines.
std::string csv_of_bytes(const std::string& name, int bytes) {
  std::string s;
  for (int i = 0; i < bytes / 2; ++i) s += "1\n";
  return write_temp(name, s);
}

TEST(Limits, InputsOverMaxInputBytesStopWithTheFlagNamed) {
  const std::string f = csv_of_bytes("bytes1000.csv", 1000);
  const std::string small = write_temp("small.csv", "1\n");
  EXPECT_EQ(run_attn({"run", f, "--max-input-bytes", "1000"}).code, 0);
  const std::string over =
      ": 1000 bytes, more than --max-input-bytes 999; raise --max-input-bytes\n";
  // Every reader: the input, a matrix flag, --expect, attn heatmap's input.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"run", f},
                                               {"run", "--x", f},
                                               {"run", small, "--expect", f},
                                               {"heatmap", f, "--show"}}) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--max-input-bytes", "999"});
    auto r = run_attn(a);
    EXPECT_EQ(r.code, 3) << args[1];
    EXPECT_EQ(r.err, "attn: error: " + f + over) << args[1];
  }
  // Stdin from a file is measured too; from a pipe it is read up to the limit.
  auto in = run_attn({"run", "-", "--max-input-bytes", "999"}, read_text(f));
  EXPECT_EQ(in.code, 3);
  EXPECT_EQ(in.err, "attn: error: <stdin>" + over);
  for (const std::string& cmd : {std::string("run - --max-input-bytes 100000"),
                                 std::string("heatmap - --show --max-input-bytes 2^17")}) {
    auto p = test::sh("yes 1 | " + test::quote(ATTN_BINARY) + " " + cmd);
    EXPECT_EQ(p.code, 3) << cmd;
    const std::string limit = cmd.find("2^17") != std::string::npos ? "131072" : "100000";
    EXPECT_EQ(p.err, "attn: error: <stdin>: more than --max-input-bytes " + limit +
                         " bytes; raise --max-input-bytes\n")
        << cmd;
  }
}

TEST(Limits, MaxInputBytesFlagTakesPlainExponentAndPowerForms) {
  const std::string f = csv_of_bytes("bytes1024.csv", 1024);
  EXPECT_EQ(run_attn({"run", f, "--max-input-bytes", "1024"}).code, 0);
  EXPECT_EQ(run_attn({"run", f, "--max-input-bytes", "2^10"}).code, 0);
  EXPECT_EQ(run_attn({"run", f, "--max-input-bytes", "1.024e3"}).code, 0);
  EXPECT_EQ(run_attn({"run", f, "--max-input-bytes", "1023"}).code, 3);
  EXPECT_EQ(run_attn({"heatmap", f, "--show", "--max-input-bytes", "2^10"}).code, 0);
  auto zero = run_attn({"run", f, "--max-input-bytes", "0"});
  EXPECT_EQ(zero.code, 2);
  EXPECT_EQ(zero.err,
            "attn: error: --max-input-bytes: expected a positive integer such as "
            "1073741824 or 2^30, got '0'\n");
  auto word = run_attn({"heatmap", f, "--show", "--max-input-bytes", "lots"});
  EXPECT_EQ(word.code, 2);
  EXPECT_EQ(word.err, "attn: error: --max-input-bytes: expected a number, got 'lots'\n");
}

TEST(Limits, EndlessStreamsOfZerosEndAtOnce) {
  // /dev/zero never ends and holds no newline: text stops at its first NUL,
  // and the parser names it, with the default limit too.
  const std::string attn = test::quote(ATTN_BINARY);
  const auto start = std::chrono::steady_clock::now();
  const std::string not_text =
      ":1:1: byte 0x00 is not text; this does not look like a CSV file (attn reads CSV, JSON and "
      ".npy)\n";
  for (const std::string& cmd : {attn + " run - </dev/zero", attn + " run --x - </dev/zero",
                                 attn + " heatmap - --show </dev/zero"}) {
    auto r = test::sh(cmd);
    EXPECT_EQ(r.code, 3) << cmd;
    EXPECT_EQ(r.err, "attn: error: <stdin>" + not_text) << cmd;
  }
  auto json = test::sh("{ printf '{\"X\": [[1]]'; cat /dev/zero; } | " + attn + " run -");
  EXPECT_EQ(json.code, 3);
  EXPECT_EQ(json.err,
            "attn: error: <stdin>:1:12: expected ',' or '}' after an object member, "
            "got byte 0x00\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // A .npy is binary: its NULs are data, read whole, from a pipe too.
  const std::string npy = temp_dir() + "/piped.npy";
  ASSERT_EQ(run_attn({"run", sweet(), "-o", npy}).code, 0);
  auto piped = test::sh("cat " + test::quote(npy) + " | " + attn + " run --x - -f json");
  EXPECT_EQ(piped.code, 0) << piped.err;
  EXPECT_EQ(piped.out, run_attn({"run", "--x", npy, "-f", "json"}).out);
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
      {{"run", x, "--heatmap", x},
       "--heatmap " + x + ": refusing to overwrite the input file " + x},
      {{"run", x, "--bias", m, "--heatmap", m},
       "--heatmap " + m + ": refusing to overwrite the input file " + m},
      {{"heatmap", x, "-o", x}, "-o " + x + ": refusing to overwrite the input file " + x},
      {{"run", sweet(), "--expect", m, "-o",
        temp_dir() + "/../" + std::filesystem::path(temp_dir()).filename().string() +
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
  for (double v : {1.0, 2.0, double(INFINITY), 4.0})
    npy.append(reinterpret_cast<const char*>(&v), 8);
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
      {R"({"Q": [[1]], "K": []})",
       "<stdin>: K: empty (shape [0]); K needs at least one position and one feature"},
      {R"({"Q": [[1]], "K": [[1]], "V": [[]]})",
       "<stdin>: V: empty (shape [1][0]); V needs at least one position and one feature"},
      {R"({"X": [[[1]]], "Y": [[]]})",
       "<stdin>: Y: empty (shape [1][0]); Y needs at least one position and one feature"},
      {R"({"X": [[], []]})",
       "<stdin>: X: empty (shape [2][0]); X needs at least one position and one feature"},
  };
  for (const Case& c : cases) {
    auto r = run_attn({"run", "-"}, c.doc);
    EXPECT_EQ(r.code, 3) << c.doc;
    EXPECT_EQ(r.err, "attn: error: " + c.err + "\n") << c.doc;
  }
}

TEST(Files, EmptyFileNamesAreUsageErrorsNamingTheFlag) {
  // -o '' used to print to stdout, --expect '' to check nothing.
  const std::string in = ": empty file name; give a file, or - for stdin\n";
  const std::string out = ": empty file name; give a file, or - for stdout\n";
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  std::vector<Case> cases = {
      {{"run", ""}, "input" + in},
      {{"run", sweet(), "", "--out-dir", temp_dir() + "/empty_names"}, "input" + in},
      {{"run", sweet(), "-o", ""}, "-o" + out},
      {{"run", sweet(), "--output", ""}, "-o" + out},
      {{"run", sweet(), "--weights-out", ""}, "--weights-out" + out},
      {{"run", sweet(), "--heatmap", ""}, "--heatmap" + out},
      {{"run", sweet(), tokens(), "--out-dir", ""}, "--out-dir: empty directory name\n"},
      {{"heatmap", "", "--show"}, "input" + in},
      {{"heatmap", tokens(), "-o", ""}, "-o" + out},
      {{"heatmap", tokens(), "--output", ""}, "-o" + out},
  };
  for (const char* flag :
       {"--x", "--y", "--q", "--k", "--v", "--mask", "--bias", "--key-padding-mask", "--expect"}) {
    cases.push_back({{"run", sweet(), flag, ""}, flag + in});
  }
  for (const Case& c : cases) {
    auto r = run_attn(c.args);
    EXPECT_EQ(r.code, 2) << c.err;
    EXPECT_EQ(r.err, "attn: error: " + c.err) << c.err;
    EXPECT_EQ(r.out, "") << c.err;
  }
  EXPECT_FALSE(std::filesystem::exists(temp_dir() + "/empty_names"));
}

// ---- where outputs go ----------------------------------------------------------
// Every writer (-o, --weights-out, --heatmap, --out-dir results, attn heatmap
// -o) goes through one function; these drive it through each flag.

// A fresh directory under the test's temporary directory.
std::string fresh_dir(const std::string& name) {
  const std::string dir = temp_dir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

bool is_link(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

std::string link_target(const std::string& path) {
  char buf[4096];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  return n < 0 ? "" : std::string(buf, static_cast<size_t>(n));
}

mode_t file_type(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

// The names in a directory, hidden ones included, sorted.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The argument lists that write one file through each writer, the file
// being `out` (.json for -o and --weights-out, .png for the heatmaps).
struct Writer {
  const char* what;
  std::vector<std::string> args;  // `out` goes last
};
std::vector<Writer> writers() {
  return {
      {"-o", {"run", sweet(), "-f", "json", "-o"}},
      {"--weights-out", {"run", sweet(), "-o", "/dev/null", "--weights-out"}},
      {"--heatmap", {"run", sweet(), "-o", "/dev/null", "--heatmap"}},
      {"heatmap -o", {"heatmap", tokens(), "-o"}},
  };
}

std::vector<std::string> with(std::vector<std::string> args, const std::string& last) {
  args.push_back(last);
  return args;
}

TEST(Files, SymlinkOutputUpdatesTheTargetAndKeepsTheLink) {
  for (const Writer& w : writers()) {
    const std::string dir = fresh_dir("link_to_file");
    const std::string ext =
        std::string(w.what).find("heatmap") != std::string::npos ? ".png" : ".json";
    std::filesystem::create_directories(dir + "/real");
    const std::string target = dir + "/real/target" + ext;
    std::ofstream(target) << "old";
    ::chmod(target.c_str(), 0640);
    // Relative, as ln -s writes them: resolved from the link's directory.
    const std::string link = dir + "/link" + ext;
    ASSERT_EQ(::symlink(("real/target" + ext).c_str(), link.c_str()), 0);
    auto r = run_attn(with(w.args, link));
    EXPECT_EQ(r.code, 0) << w.what << ": " << r.err;
    EXPECT_TRUE(is_link(link)) << w.what << ": the link was replaced";
    EXPECT_EQ(link_target(link), "real/target" + ext) << w.what;
    const std::string text = read_text(target);
    EXPECT_NE(text, "old") << w.what;
    // A result document, a weights array, or a PNG.
    if (ext == ".png") {
      EXPECT_EQ(text.substr(0, 4), "\x89PNG") << w.what;
    } else {
      EXPECT_TRUE(!text.empty() && (text[0] == '{' || text[0] == '[')) << w.what;
    }
    struct stat st {};
    ::stat(target.c_str(), &st);
    EXPECT_EQ(st.st_mode & 07777, 0640u) << w.what << ": the target keeps its permissions";
    EXPECT_EQ(entries(dir + "/real"), std::vector<std::string>{"target" + ext}) << w.what;
  }
}

TEST(Files, DanglingSymlinkCreatesItsTargetWhenTheDirectoryExists) {
  for (const Writer& w : writers()) {
    const std::string dir = fresh_dir("dangling");
    const std::string ext =
        std::string(w.what).find("heatmap") != std::string::npos ? ".png" : ".json";
    std::filesystem::create_directories(dir + "/sub");
    // Two links: link -> hop -> sub/new (hop is absolute).
    const std::string hop = dir + "/hop" + ext, link = dir + "/link" + ext;
    ASSERT_EQ(::symlink((dir + "/sub/new" + ext).c_str(), hop.c_str()), 0);
    ASSERT_EQ(::symlink(("hop" + ext).c_str(), link.c_str()), 0);
    auto r = run_attn(with(w.args, link));
    EXPECT_EQ(r.code, 0) << w.what << ": " << r.err;
    EXPECT_TRUE(is_link(link) && is_link(hop)) << w.what;
    EXPECT_EQ(file_type(dir + "/sub/new" + ext), S_IFREG) << w.what;
    EXPECT_EQ(entries(dir + "/sub"), std::vector<std::string>{"new" + ext}) << w.what;
  }
  // Into a directory that does not exist: exit 4, and the link stays.
  const std::string dir = fresh_dir("dangling_nowhere");
  const std::string link = dir + "/out.json";
  ASSERT_EQ(::symlink("missing/out.json", link.c_str()), 0);
  auto r = run_attn({"run", sweet(), "-o", link});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "attn: error: " + link +
                       ": cannot create a temporary file next to the link's "
                       "target " +
                       dir + "/missing/out.json: No such file or directory\n");
  EXPECT_TRUE(is_link(link));
}

TEST(Files, SymlinkToADirectoryGivesExitFour) {
  const std::string dir = fresh_dir("link_to_dir");
  const std::string link = dir + "/out.json";
  ASSERT_EQ(::symlink(dir.c_str(), link.c_str()), 0);
  auto r = run_attn({"run", sweet(), "-o", link});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "attn: error: " + link + ": cannot write: Is a directory\n");
  EXPECT_TRUE(is_link(link));
}

TEST(Files, DevicesAndLinksToDevicesAreWrittenNotReplaced) {
  const std::string dir = fresh_dir("link_to_null");
  for (const Writer& w : writers()) {
    const std::string link =
        dir + "/null" +
        (std::string(w.what).find("heatmap") != std::string::npos ? ".png" : ".json");
    std::filesystem::remove(link);
    ASSERT_EQ(::symlink("/dev/null", link.c_str()), 0);
    auto r = run_attn(with(w.args, link));
    EXPECT_EQ(r.code, 0) << w.what << ": " << r.err;
    EXPECT_TRUE(is_link(link)) << w.what;
    EXPECT_EQ(file_type("/dev/null"), S_IFCHR) << w.what;
    if (std::string(w.what).find("heatmap") != std::string::npos) continue;  // needs .png
    auto direct = run_attn(with(w.args, "/dev/null"));
    EXPECT_EQ(direct.code, 0) << w.what << ": " << direct.err;
    EXPECT_EQ(file_type("/dev/null"), S_IFCHR) << w.what;
  }
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"null.json", "null.png"}));
}

TEST(Files, DevStdoutWritesToStdout) {
  const std::string want = run_attn({"run", sweet()}).out;
  ASSERT_FALSE(want.empty());
  struct stat before {};
  ASSERT_EQ(::lstat("/dev/stdout", &before), 0);
  // Here stdout is a regular file (the test's capture): the classic case
  // where a rename would have replaced /dev/stdout itself.
  auto r = run_attn({"run", sweet(), "-o", "/dev/stdout"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, want);
  const std::string link = fresh_dir("link_to_stdout") + "/out.txt";
  ASSERT_EQ(::symlink("/dev/stdout", link.c_str()), 0);
  auto l = run_attn({"run", sweet(), "-o", link});
  EXPECT_EQ(l.code, 0) << l.err;
  EXPECT_EQ(l.out, want);
  EXPECT_TRUE(is_link(link));
  // Two outputs may both go to stdout, as to /dev/null: each is whole.
  const std::string weights = fresh_dir("stdout_weights") + "/w.json";
  const std::string csv = run_attn({"run", sweet(), "-f", "csv", "--weights-out", weights}).out;
  auto both =
      run_attn({"run", sweet(), "-f", "csv", "-o", "/dev/stdout", "--weights-out", "/dev/fd/1"});
  EXPECT_EQ(both.code, 0) << both.err;
  EXPECT_EQ(both.out.size(), csv.size() + read_text(weights).size());
  EXPECT_NE(both.out.find(csv), std::string::npos);
  EXPECT_NE(both.out.find(read_text(weights)), std::string::npos);
  struct stat after {};
  ASSERT_EQ(::lstat("/dev/stdout", &after), 0);
  EXPECT_EQ(after.st_mode & S_IFMT, before.st_mode & S_IFMT);
  EXPECT_EQ(after.st_ino, before.st_ino) << "/dev/stdout is the same file";
}

TEST(Files, FigureToStdoutBesideTheResultIsRefused) {
  // A PNG into the table on stdout, by any name of stdout.
  for (const char* name : {"-", "/dev/stdout", "/dev/fd/1"}) {
    auto r = run_attn({"run", sweet(), "--heatmap", name});
    EXPECT_EQ(r.code, 2) << name;
    EXPECT_EQ(r.err, std::string("attn: error: --heatmap ") + name +
                         " writes the figure to stdout, which already carries the result; "
                         "write the result with -o FILE\n");
    EXPECT_EQ(r.out, "") << name;
  }
  // With the result in a file, the figure alone goes to stdout.
  const std::string out = fresh_dir("figure_to_stdout") + "/out.json";
  auto ok = run_attn({"run", sweet(), "-o", out, "--heatmap", "-"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(ok.out.substr(0, 4), "\x89PNG");
}

TEST(Files, FifoIsWrittenInPlace) {
  const std::string fifo = fresh_dir("fifo") + "/out.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    got = read_text(fifo);  // opening blocks until attn opens the other end
    done = true;
  });
  auto r = run_attn({"run", sweet(), "-f", "json", "-o", fifo});
  // Should attn fail before opening the FIFO, release the reader.
  for (int i = 0; i < 200 && !done; ++i) {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  reader.join();
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(got, run_attn({"run", sweet(), "-f", "json"}).out);
  EXPECT_EQ(file_type(fifo), S_IFIFO);
}

TEST(Files, BatchResultsGoThroughLinksInTheOutputDirectory) {
  const std::string dir = fresh_dir("batch_links");
  std::filesystem::create_directories(dir + "/out");
  std::filesystem::create_directories(dir + "/elsewhere");
  const std::string link = dir + "/out/sweet.json";
  ASSERT_EQ(::symlink("../elsewhere/kept.json", link.c_str()), 0);
  auto r = run_attn({"run", sweet(), tokens(), "--out-dir", dir + "/out", "-f", "json", "-q"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(is_link(link));
  EXPECT_EQ(read_text(dir + "/elsewhere/kept.json"), run_attn({"run", sweet(), "-f", "json"}).out);
  EXPECT_EQ(entries(dir + "/out"), (std::vector<std::string>{"sweet.json", "tokens.json"}));
}

TEST(Files, LongestFileNamesFitTheirTemporaryFile) {
  // 255 bytes is NAME_MAX: the temporary name must not add to it.
  const std::string dir = fresh_dir("long_names");
  const std::string json = dir + "/" + std::string(250, 'a') + ".json";
  const std::string png = dir + "/" + std::string(251, 'b') + ".png";
  auto r = run_attn({"run", sweet(), "-f", "json", "-o", json, "--heatmap", png});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_text(json).substr(0, 12), "{\n  \"labels\"");
  EXPECT_EQ(read_text(json).substr(read_text(json).size() - 4), "]\n}\n");
  EXPECT_EQ(read_text(png).substr(0, 4), "\x89PNG");
  auto w = run_attn({"run", sweet(), "-o", "/dev/null", "--weights-out", json});
  EXPECT_EQ(w.code, 0) << w.err;
  // One byte more is the file system's limit, reported as such; nothing is left.
  const std::string too_long = dir + "/" + std::string(251, 'c') + ".json";
  auto t = run_attn({"run", sweet(), "-o", too_long});
  EXPECT_EQ(t.code, 4);
  EXPECT_EQ(t.err, "attn: error: " + too_long + ": cannot replace: File name too long\n");
  EXPECT_EQ(entries(dir),
            (std::vector<std::string>{json.substr(dir.size() + 1), png.substr(dir.size() + 1)}));
}

// Starts attn with extra environment assignments, its standard streams on
// /dev/null and the signals a test sends at their default action (a shell
// that starts the suite in the background ignores SIGINT).
pid_t start_attn(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> words = {ATTN_BINARY};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::vector<std::string> vars(env);
  for (char** e = environ; *e; ++e) vars.push_back(*e);
  std::vector<char*> envp;
  for (std::string& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&files, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, none;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, sig);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  if (posix_spawn(&pid, ATTN_BINARY, &files, &attr, argv.data(), envp.data()) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  return pid;
}

TEST(Files, SignalDuringAWriteLeavesNoTemporaryFile) {
  struct Case {
    int sig;
    std::vector<std::string> args;  // the output file goes last
  };
  const std::vector<Case> cases = {
      {SIGTERM, {"run", sweet(), "-f", "json", "-o"}},
      {SIGINT, {"run", sweet(), "-o", "/dev/null", "--heatmap"}},
      {SIGHUP, {"heatmap", tokens(), "-o"}},
  };
  for (const Case& c : cases) {
    const std::string dir = fresh_dir("signal_" + std::to_string(c.sig));
    const std::string out = dir + "/out.png";
    std::ofstream(out) << "old";
    // The test hook waits with the temporary file written, before the rename.
    const pid_t pid = start_attn(with(c.args, out), {"ATTN_DEBUG_PAUSE_BEFORE_RENAME=30"});
    ASSERT_GT(pid, 0);
    bool seen = false;
    for (int i = 0; i < 800 && !seen; ++i) {
      for (const std::string& name : entries(dir)) seen = seen || name.rfind(".attn-", 0) == 0;
      if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(seen) << "no temporary file appeared; signal " << c.sig;
    ::kill(pid, seen ? c.sig : SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == c.sig)
        << "attn ends by the signal, as without the handler; signal " << c.sig;
    EXPECT_EQ(entries(dir), std::vector<std::string>{"out.png"}) << "signal " << c.sig;
    EXPECT_EQ(read_text(out), "old") << "signal " << c.sig;
  }
}

// ---- internal errors ------------------------------------------------------------

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
