// Flags that behave as users expect: -o's extension sets the format, no
// input is a usage error, --help states every default, `attn help`,
// --color, --title/--description, and --version names the kernels'
// instruction set. The real binary, exact messages.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "kernel/instruction_set.h"
#include "test_util.h"

namespace attn {
namespace {

using test::read_text;
using test::run_attn;
using test::temp_dir;

TEST(OutputFormat, ExtensionOfOutputFileSetsTheFormat) {
  const std::string json = temp_dir() + "/result.json";
  auto j = run_attn({"run", "--example", "sweet", "-w", "-o", json});
  ASSERT_EQ(j.code, 0) << j.err;
  const auto doc = nlohmann::json::parse(read_text(json));
  EXPECT_EQ(doc["output"][0][1].get<double>(), 1.25);
  EXPECT_EQ(doc["weights"][0][0].get<double>(), 0.25);

  const std::string csv = temp_dir() + "/result.csv";
  ASSERT_EQ(run_attn({"run", "--example", "sweet", "-o", csv}).code, 0);
  // The example's tokens label the rows; the output's columns are d0, d1, ...
  EXPECT_EQ(read_text(csv).substr(0, 57),
            "# output [4][4]\ntoken,d0,d1,d2,d3\ncat,0,1.25,2.75,0\nmilk,");

  // .txt, another extension or none: the table.
  for (const char* name : {"/result.txt", "/result", "/result.out"}) {
    const std::string path = temp_dir() + name;
    ASSERT_EQ(run_attn({"run", "--example", "sweet", "-o", path}).code, 0) << name;
    EXPECT_EQ(read_text(path).find("attention: scaled_dot, self, scale sqrt_dk"),
              read_text(path).find('\n') + 1)
        << name;
  }
  // --format wins where the extension does not decide.
  const std::string txt = temp_dir() + "/json.txt";
  ASSERT_EQ(run_attn({"run", "--example", "sweet", "-f", "json", "-o", txt}).code, 0);
  EXPECT_NO_THROW(nlohmann::json::parse(read_text(txt)));
}

TEST(OutputFormat, FormatFlagThatContradictsTheExtensionIsAUsageError) {
  const std::string out = temp_dir() + "/x.json";
  auto r = run_attn({"run", "--example", "sweet", "-o", out, "--format", "csv"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --format csv contradicts -o " + out +
                       " (a .json file); drop --format or change the file's extension\n");
  EXPECT_EQ(r.out, "");
  const std::string npy = temp_dir() + "/x.npy";
  auto n = run_attn({"run", "--example", "sweet", "-o", npy, "-f", "json"});
  EXPECT_EQ(n.code, 2);
  EXPECT_EQ(n.err, "attn: error: --format json contradicts -o " + npy +
                       " (a .npy file); drop --format or change the file's extension\n");
  // Agreeing is fine.
  EXPECT_EQ(run_attn({"run", "--example", "sweet", "-o", out, "-f", "json"}).code, 0);
}

TEST(OutputFormat, TraceFollowsTheExtensionToo) {
  const std::string md = temp_dir() + "/trace.md";
  ASSERT_EQ(run_attn({"run", "--example", "sweet", "--trace", "-o", md}).code, 0);
  EXPECT_EQ(read_text(md).substr(0, 2), "# ");
  const std::string json = temp_dir() + "/trace.json";
  ASSERT_EQ(run_attn({"run", "--example", "sweet", "--trace", "-o", json}).code, 0);
  EXPECT_EQ(nlohmann::json::parse(read_text(json))["steps"][0]["id"], "input_X");
  const std::string tex = temp_dir() + "/trace.tex";
  ASSERT_EQ(run_attn({"run", "--example", "sweet", "--trace", "-o", tex}).code, 0);
  EXPECT_EQ(read_text(tex).substr(0, 17), "% attn trace in L");

  const std::string csv = temp_dir() + "/trace.csv";
  auto c = run_attn({"run", "--example", "sweet", "--trace", "-o", csv});
  EXPECT_EQ(c.code, 2);
  EXPECT_EQ(c.err, "attn: error: -o " + csv +
                       ": --trace prints a trace, not CSV; write it to a .txt, .md, .tex or "
                       ".json file\n");
  auto m = run_attn({"run", "--example", "sweet", "--trace", "--trace-format", "latex", "-o", md});
  EXPECT_EQ(m.code, 2);
  EXPECT_EQ(m.err, "attn: error: --trace-format latex contradicts -o " + md +
                       " (a .md file); drop --trace-format or change the file's extension\n");
}

TEST(PandasCsv, IndexColumnIsRowLabelsNotAFeature) {
  // What df.to_csv() writes for the sweet example's X.
  const std::string csv =
      test::write_temp("pandas.csv",
                       ",0,1,2,3\n0,0.0,2.0,2.0,0.0\n1,0.0,1.0,3.0,0.0\n2,0.0,2.0,2.0,0.0\n"
                       "3,0.0,0.0,4.0,0.0\n");
  auto r = run_attn({"run", csv, "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["output"][3].size(), 4u) << r.out;
  EXPECT_NEAR(j["output"][3][2].get<double>(), 3.8220104175915623, 1e-12);
}

TEST(NoInput, IsAUsageErrorWithTheUsageLine) {
  auto r = run_attn({"run"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: no input; usage: attn run FILE... | --example NAME | --x FILE [--y FILE] "
            "| --q FILE --k FILE [--v FILE] [options] (attn run --help lists the options)\n");
  EXPECT_EQ(r.out, "");
  // Settings alone are no input either.
  EXPECT_EQ(run_attn({"run", "--heads", "2", "--causal"}).code, 2);
  // A matrix from a flag is an input.
  EXPECT_EQ(run_attn({"run", "--x", "-"}, "1,0\n0,1\n").code, 0);
}

// The option lines of `attn run --help`: "  --heads N   help text".
std::vector<std::string> option_lines(const std::string& help) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < help.size()) {
    const size_t end = help.find('\n', at);
    const std::string line = help.substr(at, end - at);
    if (line.rfind("  -", 0) == 0) lines.push_back(line);
    at = end == std::string::npos ? help.size() : end + 1;
  }
  return lines;
}

TEST(Help, RunStatesTheDefaultOfEveryOption) {
  const test::Run h = run_attn({"run", "--help"});
  ASSERT_EQ(h.code, 0);
  // Options without a default: what they name is the choice (a file, an
  // example, a switch that is off unless given).
  const std::regex no_default(
      R"(^  (-h,--help|--example|--x|--y|--q|--k|--v|--mask|--bias|--key-padding-mask|--valid-lens|)"
      R"(-w,--weights|--out-dir|--weights-out|--trace|--similarity|--average-heads|--check|)"
      R"(--expect|-q,--quiet|--emit-pytorch|--heatmap|--show|--vmin|--vmax|--ignore-first) )");
  int with_default = 0;
  for (const std::string& line : option_lines(h.out)) {
    if (std::regex_search(line, no_default)) continue;
    EXPECT_NE(line.find("(default"), std::string::npos) << line;
    ++with_default;
  }
  EXPECT_GE(with_default, 25);
  // The placeholders of docs/cli.md and the man page.
  for (const char* shown :
       {"  --heads N ", "  --temperature T ", "  --mask-fill X ", "  --dropout P ", "  --seed S ",
        "  --precision N ", "  --x FILE ", "  -o,--output FILE ", "  --mode NAME ",
        "  --title TEXT ", "  --color WHEN ", "  --query I ", "  --batch B ", "  --head H "}) {
    EXPECT_NE(h.out.find(shown), std::string::npos) << shown;
  }
  EXPECT_EQ(h.out.find(" VALUE "), std::string::npos) << h.out;
}

TEST(Help, QuietSaysWhatItSilences) {
  for (const char* cmd : {"run", "heatmap"}) {
    const test::Run h = run_attn({cmd, "--help"});
    const size_t at = h.out.find("  -q,--quiet");
    ASSERT_NE(at, std::string::npos) << cmd;
    const std::string line = h.out.substr(at, h.out.find('\n', at) - at);
    EXPECT_NE(line.find("no warnings"), std::string::npos) << line;
    EXPECT_NE(line.find("progress bar"), std::string::npos) << line;
    EXPECT_NE(line.find("errors are still printed"), std::string::npos) << line;
  }
}

TEST(Help, HelpCommandPrintsWhatDashDashHelpPrints) {
  for (const std::vector<std::string>& cmd : {std::vector<std::string>{},
                                              {"run"},
                                              {"heatmap"},
                                              {"examples"},
                                              {"examples", "show"},
                                              {"bench"}}) {
    std::vector<std::string> with_flag = cmd, with_command = {"help"};
    with_flag.push_back("--help");
    with_command.insert(with_command.end(), cmd.begin(), cmd.end());
    const test::Run a = run_attn(with_flag), b = run_attn(with_command);
    EXPECT_EQ(b.code, 0) << b.err;
    EXPECT_EQ(b.out, a.out) << (cmd.empty() ? "attn" : cmd[0]);
  }
  const test::Run bad = run_attn({"help", "rnu"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "attn: error: help: unknown command 'rnu'; did you mean 'run'?\n");
}

TEST(Color, AlwaysColoursThroughAPipeAndNeverDoesNot) {
  const test::Run always =
      run_attn({"run", "--example", "sweet", "--show", "--color", "always", "-o", "/dev/null"});
  ASSERT_EQ(always.code, 0) << always.err;
  EXPECT_NE(always.out.find("\x1b[48;2;"), std::string::npos) << "24-bit background cells";
  const test::Run trace = run_attn({"run", "--example", "sweet", "--trace", "--color=always"});
  EXPECT_NE(trace.out.find("\x1b[1m"), std::string::npos);
  // CLICOLOR_FORCE colours a pipe under auto; NO_COLOR wins over it.
  const test::Run forced =
      run_attn({"run", "--example", "sweet", "--trace"}, "", {"CLICOLOR_FORCE=1"});
  EXPECT_NE(forced.out.find("\x1b["), std::string::npos);
  const test::Run both =
      run_attn({"run", "--example", "sweet", "--trace"}, "", {"CLICOLOR_FORCE=1", "NO_COLOR=1"});
  EXPECT_EQ(both.out.find('\x1b'), std::string::npos);
  const test::Run never = run_attn({"run", "--example", "sweet", "--trace", "--color", "never"}, "",
                                   {"CLICOLOR_FORCE=1"});
  EXPECT_EQ(never.out.find('\x1b'), std::string::npos);
  const std::string w = temp_dir() + "/sweet_w.json";
  ASSERT_EQ(run_attn({"run", "--example", "sweet", "-w", "-o", w}).code, 0);
  const test::Run heatmap = run_attn({"heatmap", w, "--show", "--color", "always"});
  EXPECT_NE(heatmap.out.find("\x1b[48;2;"), std::string::npos) << heatmap.err;
  const test::Run bad = run_attn({"run", "--example", "sweet", "--color", "sometimes"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "attn: error: --color: 'sometimes' is not one of auto, always, never\n");
}

TEST(TitleAndDescription, ReplaceTheInputs) {
  const test::Run t = run_attn({"run", "--example", "sweet", "--title", "My run"});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_EQ(t.out.substr(0, 7), "My run\n");
  const test::Run d = run_attn(
      {"run", "--example", "sweet", "--trace", "--title", "T", "--description", "What it is"});
  EXPECT_EQ(d.out.substr(0, 13), "T\nWhat it is\n");
}

TEST(TitleAndDescription, RunLineFollowsValidLensFlag) {
  const test::Run a = run_attn({"run", "--example", "d2l_valid_lens"});
  EXPECT_NE(a.out.find("valid_lens [2, 6]"), std::string::npos) << a.out;
  const test::Run b = run_attn({"run", "--example", "d2l_valid_lens", "--valid-lens", "[3,6]"});
  EXPECT_NE(b.out.find("valid_lens [3, 6]"), std::string::npos) << b.out;
  EXPECT_EQ(b.out.find("[2, 6]"), std::string::npos) << b.out;
}

TEST(Version, NamesTheKernelsInstructionSet) {
  const test::Run v = run_attn({"--version"});
  EXPECT_TRUE(std::regex_search(
      v.out, std::regex(R"(, kernels: (AVX-512|AVX2\+FMA|generic) \((chosen at run time; )"
                        R"((AVX-512|AVX2\+FMA|generic)(, | and )[^)]* also built|)"
                        R"(the only kernels built for this CPU family)\)\)\n$)")))
      << v.out;
  // The kernels this CPU runs best (isa_test.cc checks ATTN_KERNEL's choice).
  EXPECT_NE(v.out.find("kernels: " + std::string(kernel::isa_name(kernel::best_isa())) + " ("),
            std::string::npos)
      << v.out;
}

TEST(Bench, TimesTheProblemAttnRunWouldBuild) {
  const test::Run r =
      run_attn({"bench", "--n",          "96",        "--d",     "8",       "--heads",
                "4",     "--kv-heads",   "2",         "--rope",  "--alibi", "--window",
                "16,0",  "--softcap",    "30",        "--sinks", "0.5",     "--seconds",
                "0",     "--no-weights", "--threads", "1",       "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"path\": \"streaming\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 heads, kv_heads 2, rope (theta 10000, half), softcap 30, alibi, "
                       "window [16, 0], sinks"),
            std::string::npos)
      << r.out;
  const test::Run kept = run_attn({"bench", "--n", "32", "--d", "4", "--seconds", "0", "--json"});
  ASSERT_EQ(kept.code, 0) << kept.err;
  EXPECT_NE(kept.out.find("\"path\": \"weights kept\""), std::string::npos) << kept.out;
  const test::Run bad = run_attn({"bench", "--heads", "8", "--kv-heads", "3"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "attn: error: bench: --kv-heads 3 does not divide --heads 8\n");
  const test::Run typo = run_attn({"bench", "--window", "x"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("--window"), std::string::npos) << typo.err;
}

TEST(Bench, SecondsTakeADecimalUpToAnHour) {
  const test::Run r =
      run_attn({"bench", "--n", "16", "--d", "4", "--seconds", "0.05", "--threads", "1", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"min_seconds\""), std::string::npos) << r.out;
  for (const char* bad : {"-1", "3601", "nan", "1s"}) {
    const test::Run e = run_attn({"bench", "--seconds", bad});
    EXPECT_EQ(e.code, 2) << bad;
    EXPECT_NE(e.err.find("attn: error: --seconds: "), std::string::npos) << e.err;
  }
}

// A switch's value is any word CLI11 reads as a boolean, as for any flag
// of attn: --rope=off is --rope=false, --alibi=yes is --alibi.
TEST(Switches, TakeTheWordsOfABoolean) {
  const auto off = run_attn({"run", "--example", "llama", "--rope=off"});
  ASSERT_EQ(off.code, 0) << off.err;
  EXPECT_EQ(off.out.find("rope"), std::string::npos) << off.out.substr(0, 200);
  const auto on = run_attn({"run", "--example", "sweet", "--alibi=yes"});
  ASSERT_EQ(on.code, 0) << on.err;
  EXPECT_NE(on.out.find("alibi"), std::string::npos) << on.out.substr(0, 200);
  const auto bad = run_attn({"run", "--example", "sweet", "--rope=maybe"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--rope"), std::string::npos) << bad.err;
}

// Two flags that set one setting are refused together, not silently one
// over the other.
TEST(Switches, SlidingWindowAndWindowTogetherAreRefused) {
  const auto r = run_attn({"run", "--example", "causal", "--window", "1", "--sliding-window", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --sliding-window and --window set the same thing; give one\n");
}

}  // namespace
}  // namespace attn
