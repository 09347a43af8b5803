// Limits through the program: sizes are checked before memory is
// reserved (--max-elements, --max-input-bytes, the kernels' working memory,
// every format's largest header), under an address-space cap where the
// build allows one.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_inputs.h"
#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

using test::read_text;
using test::rows_csv;
using test::run_attn;
using test::source_path;
using test::sweet;
using test::temp_dir;
using test::write_temp;

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

// Runs attn under an address-space cap of `mb` megabytes, as
// run_attn_capped.
test::Run run_capped(const std::vector<std::string>& args, int mb) {
  return run_attn_capped(args, mb);
}

// A sparse file: `head`, then zeros up to `size` bytes (no disk blocks).
std::string sparse_file(const std::string& name, const std::string& head, uint64_t size,
                        const std::string& tail = "") {
  const std::string path = temp_dir() + "/" + name;
  { std::ofstream(path, std::ios::binary) << head; }
  EXPECT_EQ(::truncate(path.c_str(), static_cast<off_t>(size - tail.size())), 0);
  if (!tail.empty()) std::ofstream(path, std::ios::binary | std::ios::app) << tail;
  return path;
}

// The .npy header of a C-order array (version 1.0, padded to 64 bytes).
std::string npy_header(const std::string& descr, const std::string& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
  dict += '\n';
  std::string h("\x93NUMPY\x01\x00", 8);
  h += static_cast<char>(dict.size() & 0xff);
  h += static_cast<char>(dict.size() >> 8);
  return h + dict;
}

uint32_t crc32_of(const std::string& head, uint64_t zeros) {
  uint32_t table[256];
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char ch : head) c = table[(c ^ ch) & 0xff] ^ (c >> 8);
  for (uint64_t i = 0; i < zeros; ++i) c = table[c & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::string le(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// An .npz archive of one stored member "x.npy": `npy_head` then `zeros`.
std::string sparse_npz(const std::string& name, const std::string& npy_head, uint64_t zeros) {
  const uint64_t size = npy_head.size() + zeros;
  const uint32_t crc = crc32_of(npy_head, zeros);
  const std::string member = "x.npy";
  std::string local = le(0x04034b50, 4) + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(crc, 4) +
                      le(size, 4) + le(size, 4) + le(member.size(), 2) + le(0, 2) + member;
  const uint64_t dir_at = local.size() + size;
  std::string dir = le(0x02014b50, 4) + le(20, 2) + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
                    le(crc, 4) + le(size, 4) + le(size, 4) + le(member.size(), 2) + le(0, 2) +
                    le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(0, 4) + member;
  const std::string end = le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(1, 2) + le(1, 2) +
                          le(dir.size(), 4) + le(dir_at, 4) + le(0, 2);
  return sparse_file(name, local + npy_head, dir_at + dir.size() + end.size(), dir + end);
}

TEST(Limits, TheLargestRefusedHeadersTakeNoMemory) {
  // Each format's largest header that the default limits refuse, its data
  // a gigabyte of sparse zeros: refused from the header, under a 3 GB
  // address-space cap that the file's mapping fits in and its decoding (8
  // bytes a cell: 8 GB; a 128 MiB file took 3.3 GB before) does not.
  // Within --max-input-bytes (2^30) with their headers.
  const uint64_t u8_cells = (uint64_t{1} << 30) - 256, f16_cells = u8_cells / 2;
  const std::string u8_head = npy_header("|u1", "(1, " + std::to_string(u8_cells) + ")");
  const std::string npy = sparse_file("big_u8.npy", u8_head, u8_head.size() + u8_cells);
  const std::string f16_head = npy_header("<f2", "(1, " + std::to_string(f16_cells) + ")");
  const std::string f16 = sparse_file("big_f16.npy", f16_head, f16_head.size() + 2 * f16_cells);
  const std::string st_header =
      R"({"x":{"dtype":"U8","shape":[1,1073741000],"data_offsets":[0,1073741000]}})";
  const std::string st = sparse_file("big_u8.safetensors", le(st_header.size(), 8) + st_header,
                                     8 + st_header.size() + 1073741000);
  const uint64_t npz_cells = uint64_t{1} << 27;  // 128 MiB: its CRC-32 is read
  const std::string npz = sparse_npz("big_u8.npz", npy_header("|u1", "(1, 134217728)"), npz_cells);
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"run", npy}, npy + ": shape [1][1073741568] holds 1073741568 elements"},
      {{"run", npy, "--max-elements", "1000"}, npy + ": shape [1][1073741568] holds"},
      {{"run", "--example", "sweet", "--mask", npy}, npy + ": shape [1][1073741568] holds"},
      {{"run", "--x", st}, st + ":x: shape [1][1073741000] holds 1073741000 elements"},
      {{"run", "--x", npz + ":x"}, npz + ":x: shape [1][134217728] holds 134217728 elements"},
      {{"heatmap", f16, "-o", temp_dir() + "/big.png"},
       f16 + ": shape [1][536870784] holds 536870784 elements"},
      {{"diff", f16, f16}, f16 + ": shape [1][536870784] holds 536870784 elements"},
  };
  for (const Case& c : cases) {
    const auto r = run_capped(c.args, 3000);
    EXPECT_EQ(r.code, 3) << c.args[1] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("attn: error: " + c.message, 0), 0u) << r.err;
    EXPECT_NE(r.err.find("more than --max-elements"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace attn
