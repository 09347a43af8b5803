// The shell habits attn keeps: "-" for stdin/stdout wherever a file is
// taken, data on stdout and diagnostics on stderr, plain text when NO_COLOR
// is set or the output is not a terminal, JSON that pipes into jq, "did
// you mean" at every level, --version, and a progress bar only on a
// terminal's stderr. Terminals are pseudo-terminals from script(1).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "attn/npy.h"
#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

using test::quote;
using test::read_text;
using test::run_attn;
using test::sh;
using test::source_path;
using test::write_temp;

const std::string kBin = ATTN_BINARY;

// Runs a shell command line on a pseudo-terminal (stdin, stdout and stderr
// all the terminal) and returns what the terminal showed.
test::Shell on_terminal(const std::string& command) {
  return sh("script -qec " + quote(command) + " /dev/null");
}

bool have_script() { return !test::find_program("script").empty() && test::have_pty(); }

TEST(ShellHabits, DashReadsStdinForEveryMatrixFlag) {
  const std::string q = write_temp("dash_q.csv", "1,0\n0,1\n1,1\n");
  const std::string k = write_temp("dash_k.csv", "1,2\n3,4\n");
  const std::string v = write_temp("dash_v.csv", "1\n10\n");
  const std::string mask = write_temp("dash_mask.csv", "0,1\n0,0\n1,0\n");
  const std::string bias = write_temp("dash_bias.csv", "0,0.5\n-1,0\n0,0\n");
  const std::string kpm = write_temp("dash_kpm.csv", "0,0\n");
  const std::vector<std::pair<std::string, std::string>> files = {
      {"--q", q},       {"--k", k},       {"--v", v},
      {"--mask", mask}, {"--bias", bias}, {"--key-padding-mask", kpm}};
  std::vector<std::string> base = {"run", "-f", "json"};
  for (const auto& [flag, path] : files) {
    base.push_back(flag);
    base.push_back(path);
  }
  const test::Run want = run_attn(base);
  ASSERT_EQ(want.code, 0) << want.err;
  for (const auto& [flag, path] : files) {
    std::vector<std::string> args = base;
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == flag) args[i + 1] = "-";
    }
    const test::Run r = run_attn(args, read_text(path));
    EXPECT_EQ(r.code, 0) << flag << ": " << r.err;
    EXPECT_EQ(r.out, want.out) << flag << " -";
  }
  // X and Y (self and cross mode), and the input document itself.
  const test::Run x = run_attn({"run", "--x", "-", "--y", k, "-f", "json"}, "1,2\n");
  EXPECT_EQ(x.code, 0) << x.err;
  const test::Run y = run_attn({"run", "--x", k, "--y", "-", "-f", "json"}, "1,2\n");
  EXPECT_EQ(y.code, 0) << y.err;
  const test::Run doc =
      run_attn({"run", "-", "-f", "json"}, read_text(source_path("data/examples/sweet.json")));
  EXPECT_EQ(doc.out, run_attn({"run", "--example", "sweet", "-f", "json"}).out);
}

TEST(ShellHabits, StdinIsReadOnce) {
  const test::Run r = run_attn({"run", "-", "--mask", "-"}, "1,2\n");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: the input and --mask both read stdin (-); stdin can be read once\n");
  const test::Run e = run_attn({"run", "--x", "-", "--expect", "-"}, "1,2\n");
  EXPECT_EQ(e.err, "attn: error: --x and --expect both read stdin (-); stdin can be read once\n");
}

TEST(ShellHabits, ExpectReadsStdin) {
  const test::Run saved = run_attn({"run", "--example", "sweet", "-f", "json"});
  const test::Run r = run_attn({"run", "--example", "sweet", "--expect", "-"}, saved.out);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("check passed: all 16 values match"), std::string::npos) << r.out;
}

TEST(ShellHabits, ExpectTakesAMatrixFileOrABareArray) {
  // What np.save or json.dump(out.tolist()) of a PyTorch result gives.
  const std::string npy = test::temp_dir() + "/expect_out.npy";
  ASSERT_EQ(run_attn({"run", "--example", "sweet", "-o", npy}).code, 0);
  const test::Run a = run_attn({"run", "--example", "sweet", "--expect", npy});
  EXPECT_EQ(a.code, 0) << a.err;
  EXPECT_NE(a.out.find("check passed: all 16 values match"), std::string::npos) << a.out;
  const std::string bare = write_temp("expect_bare.json",
                                      "[[0, 1.25, 2.75, 0], [0, 0.5, 3.5, 0],"
                                      " [0, 1.25, 2.75, 0], [0, 0.2, 3.8, 0]]");
  const test::Run b = run_attn({"run", "--example", "sweet", "--expect", bare});
  EXPECT_EQ(b.code, 1);
  EXPECT_NE(b.out.find("check FAILED: 4 of 16 values differ"), std::string::npos) << b.out;
}

TEST(ShellHabits, DashWritesStdout) {
  const test::Run plain = run_attn({"run", "--example", "sweet", "-f", "json"});
  EXPECT_EQ(run_attn({"run", "--example", "sweet", "-f", "json", "-o", "-"}).out, plain.out);
  // --weights-out - follows the result on stdout.
  const test::Run w = run_attn({"run", "--example", "sweet", "-f", "csv", "--weights-out", "-"});
  EXPECT_EQ(w.code, 0) << w.err;
  EXPECT_NE(w.out.find("# weights [4][4]\n0.25,0.25,0.25,0.25\n"), std::string::npos) << w.out;
}

TEST(ShellHabits, HeatmapReadsStdinAndWritesPngToStdout) {
  const test::Run weights = run_attn({"run", "--example", "sweet", "-f", "json", "--weights"});
  const test::Run png = run_attn({"heatmap", "-", "-o", "-"}, weights.out);
  EXPECT_EQ(png.code, 0) << png.err;
  EXPECT_EQ(png.out.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // attn run --heatmap - when the result goes to a file.
  const std::string out = test::temp_dir() + "/heatmap_dash_result.json";
  const test::Run run_png =
      run_attn({"run", "--example", "sweet", "-f", "json", "-o", out, "--heatmap", "-"});
  EXPECT_EQ(run_png.code, 0) << run_png.err;
  EXPECT_EQ(run_png.out.substr(0, 4), "\x89PNG");
  // ... but not into the result on stdout, nor beside a preview.
  const test::Run clash = run_attn({"run", "--example", "sweet", "--heatmap", "-"});
  EXPECT_EQ(clash.code, 2);
  EXPECT_EQ(clash.err,
            "attn: error: --heatmap - writes the figure to stdout, which already carries the "
            "result; write the result with -o FILE\n");
  EXPECT_EQ(clash.out, "");
  const test::Run show = run_attn({"heatmap", "-", "-o", "-", "--show"}, weights.out);
  EXPECT_EQ(show.code, 2);
  EXPECT_EQ(
      show.err,
      "attn: error: -o - and --show would both write to stdout; write the figure to a file\n");
}

TEST(ShellHabits, JsonPipesIntoAJsonReader) {
  const test::Shell r = sh(quote(kBin) + " run --example multihead --weights --format json | cat");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["output"].size(), 2u);   // batch
  EXPECT_EQ(j["weights"].size(), 2u);  // [batch][heads][q][k]
  EXPECT_EQ(j["weights"][0].size(), 4u);
  EXPECT_EQ(j["weights"][0][0].size(), 5u);
}

TEST(ShellHabits, JsonPipesIntoJq) {
  const std::string jq = test::find_program("jq");
  if (jq.empty()) GTEST_SKIP() << "jq is not installed (apt-get install jq); not tested with jq";
  const test::Shell r = sh("set -e; " + quote(kBin) +
                           " run --example sweet --weights --format json | jq -c '[.output[1][1], "
                           "(.weights | length)]'");
  ASSERT_EQ(r.code, 0) << r.err;
  // 0.55489339347344755067... rounded to the nearest double; the same
  // digits with and without --weights.
  EXPECT_EQ(r.out, "[0.5548933934734476,4]\n");
  // Non-finite numbers are strings jq passes through.
  const test::Shell nan =
      sh(quote(kBin) + " run " + quote(source_path("data/masks/fully_masked.json")) +
         " --fully-masked nan -q -f json | jq -c '.output[1]'");
  EXPECT_EQ(nan.code, 0) << nan.err;
  EXPECT_EQ(nan.out, "[\"nan\"]\n");
}

TEST(ShellHabits, DataOnStdoutDiagnosticsOnStderr) {
  // A warning and a check report next to JSON data on stdout: stdout
  // stays parseable, the rest goes to stderr.
  const test::Run r =
      run_attn({"run", source_path("data/masks/fully_masked.json"), "-f", "json", "--check"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NO_THROW(nlohmann::json::parse(r.out));
  EXPECT_NE(r.err.find("attn: warning: "), std::string::npos);
  EXPECT_NE(r.err.find("check passed"), std::string::npos);
  const test::Run quiet = run_attn(
      {"run", source_path("data/masks/fully_masked.json"), "-f", "json", "--check", "--quiet"});
  EXPECT_EQ(quiet.err.find("warning"), std::string::npos) << quiet.err;
  EXPECT_EQ(quiet.err.substr(quiet.err.size() - 33), "check passed: all 3 values match\n");
}

TEST(ShellHabits, ExitCodesOfTheSpec) {
  const std::string good = source_path("data/examples/hungry.json");
  EXPECT_EQ(run_attn({"run", good}).code, 0);
  EXPECT_EQ(run_attn({"run", "--example", "sweet", "--check"}).code, 1);
  EXPECT_EQ(run_attn({"run", good, "--heads", "x"}).code, 2);
  EXPECT_EQ(run_attn({"run", "-"}, "{\"X\": 1}").code, 3);
  EXPECT_EQ(run_attn({"run", "/no/such/file.json"}).code, 4);
  EXPECT_EQ(run_attn({"heatmap", "/no/such/file.json", "--show"}).code, 4);
  EXPECT_EQ(run_attn({"examples", "show", "nope"}).code, 2);
}

TEST(ShellHabits, DidYouMeanAtEveryLevel) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"rnu"}, "unknown command 'rnu'; did you mean 'run'?"},
      {{"--verison"}, "unknown option '--verison'; did you mean '--version'?"},
      {{"run", "--varient", "dot"}, "run: unknown option '--varient'; did you mean '--variant'?"},
      {{"run", "--variant", "dott", "-"}, "did you mean 'dot'?"},
      {{"run", "--example", "swet"}, "did you mean 'sweet'?"},
      {{"heatmap", "x", "--colormp", "magma"},
       "heatmap: unknown option '--colormp'; did you mean '--colormap'?"},
      {{"heatmap", "-", "--show", "--colormap", "magme"}, "did you mean 'magma'?"},
      {{"examples", "shwo"}, "examples: unknown command 'shwo'; did you mean 'show'?"},
      {{"examples", "show", "swete"}, "did you mean 'sweet'?"},
  };
  for (const auto& [args, want] : cases) {
    const test::Run r = run_attn(args, "[[1]]");
    EXPECT_EQ(r.code, 2) << args[0];
    EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(ShellHabits, VersionNamesEigenAndTheCompiler) {
  const test::Run v = run_attn({"--version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.err, "");
  EXPECT_TRUE(std::regex_match(
      v.out,
      std::regex(R"(attn \d+\.\d+\.\d+ \(Eigen \d+\.\d+\.\d+, (GCC|clang) [^)]*\([^)]*\)\)\n)")))
      << v.out;
}

TEST(ShellHabits, NoColorWhenPipedOrAsked) {
  // The trace is the coloured output; piped, it is plain.
  const test::Run piped = run_attn({"run", "--example", "sweet", "--trace"});
  EXPECT_EQ(piped.out.find('\x1b'), std::string::npos);
  if (!have_script())
    GTEST_SKIP() << "script(1) or pseudo-terminals (/dev/pts) missing; terminal output not tested";
  const std::string cmd = quote(kBin) + " run --example sweet --trace";
  const test::Shell tty = on_terminal("TERM=xterm " + cmd);
  EXPECT_NE(tty.out.find("\x1b["), std::string::npos) << "a terminal gets colour";
  const test::Shell no_color = on_terminal("TERM=xterm NO_COLOR=1 " + cmd);
  EXPECT_EQ(no_color.out.find('\x1b'), std::string::npos) << no_color.out;
  EXPECT_NE(no_color.out.find("softmax"), std::string::npos);
  const test::Shell preview =
      on_terminal("TERM=xterm NO_COLOR=1 " + quote(kBin) + " run --example sweet --show");
  EXPECT_EQ(preview.out.find('\x1b'), std::string::npos) << preview.out;
}

// A run of some tenths of a second: 64 (batch, head) units of 1024 queries.
std::string large_input() {
  static const std::string path = [] {
    Tensor<double> x(Shape{8, 1024, 64});
    uint64_t s = 7;
    for (int64_t i = 0; i < x.size(); ++i) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      x[i] = static_cast<double>(s >> 11) / 9007199254740992.0 - 0.5;
    }
    return write_temp("large_input.npy", format_npy(x, DType::kF64));
  }();
  return path;
}

TEST(ShellHabits, NoProgressBarWhenStderrIsNotATerminal) {
  const std::string out = test::temp_dir() + "/large_out.npy";
  const test::Run r = run_attn({"run", large_input(), "--heads", "8", "-o", out});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "");
}

TEST(ShellHabits, ProgressBarOnATerminalIsErasedAtTheEnd) {
  if (!have_script())
    GTEST_SKIP() << "script(1) or pseudo-terminals (/dev/pts) missing; terminal output not tested";
  const std::string out = test::temp_dir() + "/large_out_tty.npy";
  // Shown at once (the delay is a second otherwise), then erased.
  const std::string cmd = "ATTN_PROGRESS_DELAY_MS=0 " + quote(kBin) + " run " +
                          quote(large_input()) + " --heads 8 -o " + quote(out);
  const test::Shell tty = on_terminal(cmd);
  EXPECT_EQ(tty.code, 0) << tty.out;
  EXPECT_NE(tty.out.find("computing ["), std::string::npos) << tty.out;
  // A rate and ETA once a second update came; a fast run may end before
  // that (the line's format is unit-tested in progress_test.cc).
  EXPECT_TRUE(
      std::regex_search(tty.out, std::regex(R"(\d+/\d+  ([0-9.]+/s  ETA \d+:\d\d|ETA --:--))")))
      << tty.out;
  // The last thing on the terminal is the erasure: spaces between returns.
  EXPECT_TRUE(std::regex_search(tty.out, std::regex("\r {20,}\r$"))) << tty.out;
  // stderr alone carries it; --quiet turns it off. (A small run of 8
  // units shows the bar too, with no delay. One thread: with two, the
  // reporting thread may, on a loaded machine, only finish the last unit.)
  const std::string small = "ATTN_PROGRESS_DELAY_MS=0 " + quote(kBin) +
                            " run --example multihead --threads 1 -o " + quote(out + ".txt");
  EXPECT_NE(on_terminal(small).out.find("computing ["), std::string::npos);
  EXPECT_EQ(on_terminal(small + " 2>/dev/null").out, "");
  EXPECT_EQ(on_terminal(small + " --quiet").out, "");
}

}  // namespace
}  // namespace attn
