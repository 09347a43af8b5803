// Readers and numbers through the program: the JSON reader's messages,
// integers from flags checked as integers, text checked as UTF-8,
// overflowing scores refused, and the similarity tables kept inside JSON
// and CSV documents. The JSON reader's budgets through the library:
// input_budget_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/json.h"
#include "test_util.h"

namespace attn {
namespace {

using test::error_of;
using test::run_attn;
using test::source_path;
using test::write_temp;

TEST(JsonBudget, RaggedArraysStillNameTheRow) {
  const std::string f =
      write_temp("ragged3d.json", R"({"X": [[[1, 2], [3, 4]], [[1, 2, 3], [4, 5, 6]]]})");
  auto r = run_attn({"run", f});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err,
            "attn: error: " + f +
                ": X[1][0]: has 3 elements where X[1][0] has 2 (ragged array; expected shape "
                "[2][2][2])\n");
}

TEST(JsonBudget, MessagesQuoteAtMostSixtyCharactersAndEscapeControls) {
  const std::string key(100000, 'x');
  const std::string f = write_temp("longkey.json", "{\"" + key + "\\u0000y\": 1, \"X\": [[1]]}");
  auto r = run_attn({"run", f});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + f + ": unknown key \"" + std::string(60, 'x') +
                       "...\" (closest accepted key: \"X\"); accepted keys: " +
                       r.err.substr(r.err.find("accepted keys: ") + 15));
  EXPECT_LT(r.err.size(), 600u);
  const std::string f2 = write_temp("nulkey.json", "{\"a\\u0000b\": 1}");
  auto n = run_attn({"run", f2});
  EXPECT_NE(n.err.find("unknown key \"a\\u0000b\""), std::string::npos) << n.err;
}

TEST(IntegerFlags, ValidLensAreIntegersRangeChecked) {
  const std::string sweet = source_path("data/examples/sweet.json");
  auto big = run_attn({"run", sweet, "--valid-lens", "99999999999999999999"});
  EXPECT_EQ(big.code, 2);
  EXPECT_EQ(big.err,
            "attn: error: --valid-lens: 99999999999999999999 is too large; a valid length "
            "is at most 9007199254740992 (any length >= the key count masks nothing)\n");
  auto huge = run_attn({"run", sweet, "--valid-lens", std::string(400, '9')});
  EXPECT_EQ(huge.code, 2);
  EXPECT_NE(huge.err.find("is too large"), std::string::npos) << huge.err;
  auto json_form = run_attn({"run", sweet, "--valid-lens", "[1e300]"});
  EXPECT_EQ(json_form.code, 2) << json_form.err;
  auto ok = run_attn({"run", sweet, "--valid-lens", "9007199254740992", "-f", "json"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(test::without_settings(ok.out),
            test::without_settings(run_attn({"run", sweet, "-f", "json"}).out));  // masks nothing
}

TEST(IntegerFlags, SeedTakesTheWholeUnsignedRange) {
  const std::string sweet = source_path("data/examples/sweet.json");
  auto ok = run_attn({"run", sweet, "--dropout", "0.5", "--seed", "18446744073709551615"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  auto over = run_attn({"run", sweet, "--seed", "18446744073709551616"});
  EXPECT_EQ(over.code, 2);
  EXPECT_EQ(over.err,
            "attn: error: --seed: expected an integer from 0 to 18446744073709551615, got "
            "'18446744073709551616'\n");
}

TEST(Overflow, ScoresPastTheRangeAreRefusedInBothDtypes) {
  const std::string f = write_temp("huge.json", R"({"X": [[1e200, 0], [0, 1e200]]})");
  for (const char* dtype : {"f64", "f32"}) {
    auto r = run_attn({"run", f, "--dtype", dtype});
    EXPECT_EQ(r.code, 3) << dtype;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(run_attn({"run", f}).err,
            "attn: error: " + f +
                ": the score of query 0, key 0 is inf: it overflows the float64 "
                "range; scale the inputs down\n");
  // 1e-307 keeps the scores finite (8e307): one-hot rows, computed exactly;
  // 1e-308 does not.
  const std::string t = source_path("data/examples/sweet.json");
  auto fine = run_attn({"run", t, "--temperature", "1e-307", "-w", "-f", "json"});
  EXPECT_EQ(fine.code, 0) << fine.err;
  EXPECT_EQ(nlohmann::json::parse(fine.out)["weights"][3][3], 1.0);
  auto temp = run_attn({"run", t, "--temperature", "1e-308"});
  EXPECT_EQ(temp.code, 3);
  EXPECT_NE(temp.err.find("overflows the float64 range"), std::string::npos) << temp.err;
  // In float32, 1e20 squared is past 3.4e38; in float64 it is fine.
  const std::string g = write_temp("f32.json", R"({"X": [[1e20, 0], [0, 1e20]]})");
  EXPECT_EQ(run_attn({"run", g, "--dtype", "f64"}).code, 0);
  auto f32 = run_attn({"run", g, "--dtype", "f32"});
  EXPECT_EQ(f32.code, 3);
  EXPECT_NE(f32.err.find("overflows the float32 range"), std::string::npos) << f32.err;
  const std::string h = write_temp("f32big.json", R"({"X": [[1e39, 0], [0, 1]]})");
  EXPECT_EQ(
      run_attn({"run", h, "--dtype", "f32"}).err,
      "attn: error: " + h + ": the value 1e+39 is outside the float32 range; use --dtype f64\n");
  // So is a soft cap or a sink logit past it: in float32 it would be inf.
  const std::string x = write_temp("f32x.json", R"({"X": [[1, 0], [0, 1]]})");
  for (const char* flag : {"--softcap", "--sinks"}) {
    EXPECT_EQ(
        run_attn({"run", x, "--dtype", "f32", flag, "1e39"}).err,
        "attn: error: " + x + ": the value 1e+39 is outside the float32 range; use --dtype f64\n")
        << flag;
    EXPECT_EQ(run_attn({"run", x, "--dtype", "f64", flag, "1e39"}).code, 0) << flag;
  }
}

TEST(Similarity, StaysInsideJsonAndCsvDocuments) {
  const std::string sweet = source_path("data/examples/sweet.json");
  auto j = run_attn({"run", sweet, "--similarity", "-f", "json"});
  ASSERT_EQ(j.code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["similarity"]["input"][2][1], 8.0);  // it·milk = 2·1 + 2·3
  EXPECT_EQ(doc["similarity"]["output"].size(), 4u);
  auto c = run_attn({"run", sweet, "--similarity", "-f", "csv"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("# similarity_input [4][4]\n"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("# similarity_output [4][4]\n"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("Similarity"), std::string::npos) << c.out;
}

TEST(TextInput, NonUtf8CsvAndFlagsAreRefused) {
  const std::string f = write_temp("latin1.csv", "name,a,b\ncaf\xe9,1,2\ntea,3,4\n");
  auto r = run_attn({"run", f});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + f +
                       ":2:4: byte 0xe9 is not UTF-8 (a Latin-1 or Windows "
                       "file?); save the file as UTF-8\n");
  auto l = run_attn({"run", source_path("data/examples/sweet.json"), "--labels", "a,b,c,\xe9"});
  EXPECT_EQ(l.code, 2);
  EXPECT_EQ(l.err, "attn: error: --labels: byte 6 is not UTF-8; labels must be UTF-8 text\n");
}

TEST(TextInput, LoneCarriageReturnsAreNamed) {
  const std::string f = write_temp("mac.csv", "1,2\r3,4\r");
  auto r = run_attn({"run", f});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + f +
                       ":1:4: lines end with a lone CR (old Mac line endings); convert them to LF "
                       "or CRLF\n");
}

TEST(SmallPoints, AnOptionGivenTwiceSaysSo) {
  auto r = run_attn({"run", "--example", "sweet", "-f", "json", "-f", "csv"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --format: given 2 times; give it once\n");
  auto h = run_attn({"run", "--heads", "2000000", "--example", "sweet"});
  EXPECT_EQ(h.code, 2);
  EXPECT_NE(h.err.find("up to 1000000"), std::string::npos) << h.err;
}

TEST(SmallPoints, ABareJsonArrayIsX) {
  auto bare = run_attn({"run", "-", "-f", "json"}, "[[1, 2], [3, 4]]");
  ASSERT_EQ(bare.code, 0) << bare.err;
  const std::string f = write_temp("wrapped.json", R"({"X": [[1, 2], [3, 4]]})");
  EXPECT_EQ(bare.out, run_attn({"run", f, "-f", "json"}).out);
}

TEST(SmallPoints, EmptyLabelsBiasWithoutWeightAndFlagLabelCounts) {
  const std::string a = write_temp("emptylabels.json", R"({"X": [[1, 0], [0, 1]], "labels": []})");
  EXPECT_EQ(run_attn({"run", a}).err,
            "attn: error: " + a +
                ": labels: an empty list; give one label per row, or leave the key out\n");
  const std::string b =
      write_temp("bo.json", R"({"X": [[1, 0], [0, 1]], "params": {"b_o": [1, 2]}})");
  auto bo = run_attn({"run", b});
  EXPECT_EQ(bo.code, 3);
  EXPECT_EQ(bo.err, "attn: error: " + b +
                        ": params.b_o: b_o without W_o: the output bias belongs to "
                        "the output projection; give W_o too (an identity matrix "
                        "for a bias alone)\n");
  auto lab = run_attn({"run", source_path("data/examples/sweet.json"), "--labels", "a,b"});
  EXPECT_EQ(lab.code, 2);
  EXPECT_EQ(lab.err, "attn: error: --labels: 2 labels for 4 queries\n");
}

}  // namespace
}  // namespace attn
