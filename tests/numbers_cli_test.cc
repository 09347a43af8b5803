// Extreme numbers through the program: non-finite values refused in every
// matrix flag, scores of +-1e300 computed without overflow, and inputs of
// zero length or width refused with clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn {
namespace {

using test::read_text;
using test::run_attn;
using test::source_path;
using test::temp_dir;
using test::write_temp;

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

}  // namespace
}  // namespace attn
