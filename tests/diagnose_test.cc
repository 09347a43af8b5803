// A failed check's summary and diagnosis. Each case in tests/diagnose/ is an
// attention written in PyTorch with one mistake planted
// (tests/diagnose/make_planted.py); attn runs the attention as meant with
// --expect ref.npy, and the check must name the mistake (and the flag that
// reproduces it, when one does).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace attn {
namespace {

using test::run_attn;

const std::string kDir = ATTN_SOURCE_DIR "/tests/diagnose/";

struct Planted {
  std::string name;               // the case's folder
  std::vector<std::string> args;  // the attention as meant
  std::string cause;              // the "likely cause:" line's text
};

std::string case_name(const testing::TestParamInfo<Planted>& info) { return info.param.name; }

class Diagnose : public testing::TestWithParam<Planted> {};

TEST_P(Diagnose, NamesThePlantedMistake) {
  const Planted& c = GetParam();
  const std::string d = kDir + c.name + "/";
  std::vector<std::string> args = {"run",       "--q", d + "q.npy", "--k",
                                   d + "k.npy", "--v", d + "v.npy"};
  for (std::string a : c.args) {
    if (a.rfind("@", 0) == 0) a = d + a.substr(1);  // a file of the case
    args.push_back(a);
  }
  args.insert(args.end(), {"--expect", d + "ref.npy", "-q"});
  const test::Run r = run_attn(args);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("\nlikely cause: " + c.cause + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nwhy: The expected numbers "), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Planted, Diagnose,
    testing::Values(
        Planted{"causal_forgotten",
                {"--causal"},
                "the reference has no causal mask (--causal=false reproduces the expected "
                "numbers)"},
        Planted{"causal_extra",
                {},
                "the reference is causal and this run is not (--causal reproduces the expected "
                "numbers)"},
        Planted{"causal_wrong_side", {"--causal"}, "the causal mask on the wrong side"},
        Planted{"causal_bottom_right",
                {"--causal"},
                "the causal mask aligned at the other corner (--causal bottom-right reproduces "
                "the expected numbers)"},
        Planted{"causal_bottom_right_rope",
                {"--causal", "--rope"},
                "the causal mask aligned at the other corner (--causal bottom-right reproduces "
                "the expected numbers)"},
        Planted{"mask_polarity",
                {"--mask", "@mask.npy"},
                "the mask read with the other polarity (keep/block) (--mask-convention keep "
                "reproduces the expected numbers)"},
        Planted{"mask_transposed", {"--mask", "@mask.npy"}, "the mask transposed"},
        Planted{"softmax_axis", {}, "the softmax over the wrong axis"},
        Planted{"scale_twice",
                {},
                "the scale applied twice (--scale dk reproduces the expected numbers)"},
        Planted{"scale_missing",
                {},
                "no scaling of the scores (--scale none reproduces the expected numbers)"},
        Planted{"heads_split", {"--heads", "2"}, "heads split in the wrong order"},
        Planted{"rope_layout",
                {"--rope"},
                "the other RoPE layout (--rope-layout interleaved reproduces the expected "
                "numbers)"},
        Planted{"gqa_tiled", {}, "key/value heads tiled instead of repeated per group"}),
    case_name);

// The flag a diagnosis names does reproduce the reference.
TEST(DiagnoseFix, TheNamedFlagReproducesTheReference) {
  const std::string d = kDir + "causal_bottom_right/";
  const test::Run r = run_attn({"run", "--q", d + "q.npy", "--k", d + "k.npy", "--v", d + "v.npy",
                                "--causal", "bottom-right", "--expect", d + "ref.npy", "-q"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("check passed: all 16 values match"), std::string::npos) << r.out;
}

// The summary comes first: how many, the largest difference and where,
// and which heads and rows differ and which match; then at most twenty
// values. No cause is named when none of the mistakes gives the numbers.
TEST(DiagnoseSummary, SaysWhereTheyDifferBeforeTheValues) {
  const std::string d = kDir + "gqa_tiled/";
  // gqa_tiled's reference with the run's own reading of the heads: only
  // the heads that read another key/value head differ.
  const test::Run r = run_attn({"run", "--q", d + "q.npy", "--k", d + "k.npy", "--v", d + "v.npy",
                                "--expect", d + "ref.npy", "-q"});
  EXPECT_EQ(r.code, 1);
  const size_t summary = r.out.find("check FAILED: 48 of 96 values differ\n");
  ASSERT_NE(summary, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  largest difference ", summary), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  heads: 1, 2 differ; 0, 3 match\n", summary), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  query rows: all 6 differ\n", summary), std::string::npos) << r.out;
  const size_t table = r.out.find("\nposition ");
  EXPECT_GT(table, summary);
  EXPECT_NE(r.out.find("... 28 more mismatches not shown"), std::string::npos) << r.out;

  // A reference of another shape: an input error naming both shapes.
  const test::Run n = run_attn({"run", "--q", d + "q.npy", "--k", d + "k.npy", "--v", d + "v.npy",
                                "--expect", kDir + "causal_forgotten/ref.npy", "-q"});
  EXPECT_EQ(n.code, 3) << n.out << n.err;
  EXPECT_NE(n.err.find("expected output has shape [6][8] but the result has shape [1][4][6][4]"),
            std::string::npos)
      << n.err;
  // A reference no mistake explains: the summary, no cause.
  const test::Run m = run_attn(
      {"run", "--q", kDir + "causal_forgotten/q.npy", "--k", kDir + "causal_forgotten/k.npy", "--v",
       kDir + "causal_forgotten/v.npy", "--expect", kDir + "mask_transposed/ref.npy", "-q"});
  EXPECT_EQ(m.code, 1);
  EXPECT_NE(m.out.find("check FAILED: "), std::string::npos) << m.out;
  EXPECT_EQ(m.out.find("likely cause:"), std::string::npos) << m.out;
}

// Mistakes of windows and positions, against references attn computes
// with the setting the reference meant: the run with the other setting
// names it.
struct Reading {
  std::vector<std::string> reference, run;
  std::string cause;
};

TEST(DiagnoseReadings, WindowsAndRopePositions) {
  const std::string d = kDir + "causal_bottom_right_rope/";  // Q [2][8], K and V [6][8]
  const std::vector<std::string> qkv = {"--q", d + "q.npy", "--k", d + "k.npy", "--v", d + "v.npy"};
  const std::vector<Reading> readings = {
      {{"--example", "sweet", "--causal", "--sliding-window", "2"},
       {"--example", "sweet", "--causal", "--window", "2"},
       "the sliding window one key too wide (--sliding-window 2 reproduces the expected "
       "numbers)"},
      {{"--example", "sweet", "--causal", "--sliding-window", "2"},
       {"--example", "sweet", "--causal"},
       "the reference has a sliding window this run forgot (--sliding-window 2 reproduces the "
       "expected numbers)"},
      {{"--example", "sweet", "--causal"},
       {"--example", "sweet", "--causal", "--sliding-window", "2"},
       "the reference has no sliding window (--window -1 reproduces the expected numbers)"},
      {{"@", "--rope"},
       {"@", "--rope", "--q-offset", "4"},
       "the queries' RoPE positions left at 0"},
      {{"@", "--rope", "--q-offset", "4"},
       {"@", "--rope"},
       "the queries' RoPE positions missing in this run (--q-offset 4 reproduces the expected "
       "numbers)"},
  };
  int n = 0;
  for (const Reading& c : readings) {
    auto args = [&](const std::vector<std::string>& given) {
      std::vector<std::string> a = {"run"};
      for (const std::string& g : given) {
        if (g == "@") {
          a.insert(a.end(), qkv.begin(), qkv.end());
        } else {
          a.push_back(g);
        }
      }
      return a;
    };
    const std::string ref = test::temp_dir() + "/reading" + std::to_string(n++) + ".npy";
    std::vector<std::string> make = args(c.reference);
    make.insert(make.end(), {"-o", ref});
    ASSERT_EQ(run_attn(make).code, 0);
    std::vector<std::string> check = args(c.run);
    check.insert(check.end(), {"--expect", ref, "-q"});
    const test::Run r = run_attn(check);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.out.find("\nlikely cause: " + c.cause + "\n"), std::string::npos) << r.out;
  }
}

// A float32 reference checked at float64's tolerance: one line says so and
// gives the tolerances to try; no page of values.
TEST(DiagnoseSummary, AFloat32ReferenceGetsItsTolerance) {
  const std::string ref = test::temp_dir() + "/sweet_f32.json";
  ASSERT_EQ(
      run_attn({"run", "--example", "sweet", "--dtype", "f32", "-f", "json", "-w", "-o", ref}).code,
      0);
  const test::Run r = run_attn({"run", "--example", "sweet", "--expect", ref});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("\nthe expected numbers look like float32 (differences ~9e-08): try "
                       "--rtol 1.3e-06 --atol 1e-05\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("MISMATCH"), std::string::npos) << r.out;
  // With the tolerance it names, the check passes.
  EXPECT_EQ(
      run_attn({"run", "--example", "sweet", "--expect", ref, "--rtol", "1.3e-6", "--atol", "1e-5"})
          .code,
      0);
}

}  // namespace
}  // namespace attn
