#include "attn/json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn {
namespace {

using test::error_of;

std::string parse_error(const std::string& text) {
  return error_of([&] { json::parse(text, "in.json"); });
}

TEST(Json, NumericArraysArePacked) {
  json::Value v = json::parse("[1, -2.5, 3e2, 0]", "t");
  ASSERT_TRUE(v.is_array());
  ASSERT_TRUE(v.packed());
  EXPECT_EQ(v.numbers(), (std::vector<double>{1, -2.5, 300, 0}));
}

TEST(Json, MixedArraysKeepEveryElement) {
  json::Value v = json::parse("[1, \"-inf\", 2]", "t");
  ASSERT_FALSE(v.packed());
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v.items()[0].as_number(), 1);
  EXPECT_EQ(v.items()[1].as_string(), "-inf");
  EXPECT_EQ(v.items()[2].as_number(), 2);
}

TEST(Json, ObjectsKeepOrderAndFindKeys) {
  json::Value v = json::parse(R"({"b": true, "a": null, "c": {"d": []}})", "t");
  ASSERT_EQ(v.members().size(), 3u);
  EXPECT_EQ(v.members()[0].key, "b");
  EXPECT_TRUE(v.find("b")->as_bool());
  EXPECT_TRUE(v.find("a")->is_null());
  EXPECT_EQ(v.find("c")->find("d")->size(), 0u);
  EXPECT_EQ(v.find("zz"), nullptr);
}

TEST(Json, NumbersAreCorrectlyRounded) {
  json::Value v = json::parse("[0.1, 1e-310, 1.7976931348623157e308, -0, 1e-400, 1E+2]", "t");
  EXPECT_EQ(v.numbers()[0], 0.1);
  EXPECT_EQ(v.numbers()[1], 1e-310);
  EXPECT_EQ(v.numbers()[2], 1.7976931348623157e308);
  EXPECT_TRUE(std::signbit(v.numbers()[3]));
  EXPECT_EQ(v.numbers()[4], 0.0);  // underflow gives 0, as Python's json does
  EXPECT_EQ(v.numbers()[5], 100.0);
}

TEST(Json, TooLargeNumbersAreErrorsWithTheirPlace) {
  EXPECT_EQ(parse_error("[1, 1e400]"), "in.json:1:5: number out of the double range: 1e400");
  EXPECT_EQ(parse_error("[-1e400]"), "in.json:1:2: number out of the double range: -1e400");
}

TEST(Json, StringEscapesAndUnicode) {
  json::Value v = json::parse(R"(["a\"b\\c\/\n\t", "\u00e9\u4e2d", "\ud83d\ude00", "中文"])", "t");
  EXPECT_EQ(v.items()[0].as_string(), "a\"b\\c/\n\t");
  EXPECT_EQ(v.items()[1].as_string(), "é中");
  EXPECT_EQ(v.items()[2].as_string(), "😀");
  EXPECT_EQ(v.items()[3].as_string(), "中文");
}

TEST(Json, LeadingByteOrderMarkIsAllowed) {
  json::Value v = json::parse("\xEF\xBB\xBF{\"a\": 1}", "t");
  EXPECT_EQ(v.find("a")->as_number(), 1);
}

TEST(Json, ErrorsNameLineAndColumn) {
  EXPECT_EQ(parse_error("{\n  \"a\": [1, 2,]\n}"), "in.json:2:13: trailing comma before ']'");
  EXPECT_EQ(parse_error("{\"a\": 1,}"), "in.json:1:8: trailing comma before '}'");
  EXPECT_EQ(parse_error("[1 2]"),
            "in.json:1:4: expected ',' or ']' after an array element, got '2'");
  EXPECT_EQ(parse_error("{\"a\" 1}"), "in.json:1:6: expected ':' after the key \"a\", got '1'");
  EXPECT_EQ(parse_error("{a: 1}"), "in.json:1:2: expected a key in double quotes, got 'a'");
  EXPECT_EQ(parse_error("['a']"),
            "in.json:1:2: strings must be in double quotes, not single quotes");
}

TEST(Json, ColumnsCountCharactersNotBytes) {
  EXPECT_EQ(parse_error("[\"中文\", x]"),
            "in.json:1:8: expected a value, got 'x' (strings need double quotes; literals are "
            "true, false, null)");
}

TEST(Json, NonStandardNumbersGetHints) {
  EXPECT_EQ(parse_error("[NaN]"),
            "in.json:1:2: 'NaN' is not valid JSON; write the string \"nan\" where a non-finite "
            "value is meant");
  EXPECT_EQ(parse_error("[-Infinity]"),
            "in.json:1:2: '-Infinity' is not valid JSON; write the string \"inf\" or \"-inf\" "
            "where an infinite value is meant");
  EXPECT_EQ(parse_error("[Infinity]"),
            "in.json:1:2: 'Infinity' is not valid JSON; write the string \"inf\" or \"-inf\" "
            "where an infinite value is meant");
  EXPECT_EQ(parse_error("[01]"), "in.json:1:2: invalid number: leading zeros are not allowed");
  EXPECT_EQ(parse_error("[1.]"), "in.json:1:4: invalid number: expected a digit after '.'");
  EXPECT_EQ(parse_error("[.5]"),
            "in.json:1:2: invalid number: write a digit before '.' (0.5, not .5)");
  EXPECT_EQ(parse_error("[+1]"), "in.json:1:2: invalid number: a leading '+' is not allowed");
  EXPECT_EQ(parse_error("[1e]"), "in.json:1:4: invalid number: expected a digit in the exponent");
  EXPECT_EQ(parse_error("[-]"), "in.json:1:3: invalid number: expected a digit after '-'");
}

TEST(Json, CommentsAreRejected) {
  EXPECT_EQ(parse_error("{\n// note\n\"a\": 1}"), "in.json:2:1: comments are not allowed in JSON");
  EXPECT_EQ(parse_error("[1, /* x */ 2]"), "in.json:1:5: comments are not allowed in JSON");
}

TEST(Json, TruncatedDocuments) {
  EXPECT_EQ(parse_error(""), "in.json:1:1: empty document; expected a JSON value");
  EXPECT_EQ(parse_error("   \n "), "in.json:2:2: empty document; expected a JSON value");
  EXPECT_EQ(parse_error("{\"X\": [[1, 2], [3"),
            "in.json:1:18: unexpected end of input inside an array; expected ',' or ']'");
  EXPECT_EQ(parse_error("{\"X\": "),
            "in.json:1:7: unexpected end of input; expected a value for \"X\"");
  EXPECT_EQ(parse_error("[\"abc"),
            "in.json:1:6: unexpected end of input inside a string; missing '\"'");
  EXPECT_EQ(parse_error("{\"a\": 1"),
            "in.json:1:8: unexpected end of input inside an object; expected ',' or '}'");
}

TEST(Json, TrailingContentIsAnError) {
  EXPECT_EQ(parse_error("{} {}"), "in.json:1:4: unexpected '{' after the end of the document");
  EXPECT_EQ(parse_error("[1]]"), "in.json:1:4: unexpected ']' after the end of the document");
}

TEST(Json, DuplicateKeysAreAnError) {
  EXPECT_EQ(parse_error("{\"X\": 1, \"X\": 2}"), "in.json:1:10: duplicate key \"X\"");
}

TEST(Json, BadStrings) {
  EXPECT_EQ(parse_error("[\"a\nb\"]"),
            "in.json:1:4: end of line inside a string; missing '\"' or write \\n");
  EXPECT_EQ(parse_error("[\"a\\qb\"]"), "in.json:1:4: invalid escape '\\q' in a string");
  EXPECT_EQ(parse_error("[\"\\u12\"]"), "in.json:1:7: invalid \\u escape: expected 4 hex digits");
  EXPECT_EQ(parse_error("[\"\\udc00\"]"),
            "in.json:1:3: invalid \\u escape: unpaired low surrogate");
  EXPECT_EQ(parse_error("[\"\xff\"]"), "in.json:1:3: invalid UTF-8 in a string");
  EXPECT_EQ(parse_error(std::string("[\"a\x01\"]")),
            "in.json:1:4: control character in a string; escape it (e.g. \\t, \\u0001)");
}

TEST(Json, BinaryGarbageIsNamedByByte) {
  EXPECT_EQ(parse_error(std::string("\x89PNG\r\n", 6)),
            "in.json:1:1: expected a value, got byte 0x89");
  EXPECT_EQ(parse_error(std::string("\0", 1)), "in.json:1:1: expected a value, got byte 0x00");
}

TEST(Json, NestingDepthIsLimited) {
  std::string ok(64, '[');
  ok += std::string(64, ']');
  EXPECT_NO_THROW(json::parse(ok, "t"));
  std::string deep(65, '[');
  deep += std::string(65, ']');
  EXPECT_EQ(parse_error(deep), "in.json:1:65: nesting deeper than 64 levels");
}

TEST(Json, HundredThousandBracketsGiveAnErrorNotACrash) {
  EXPECT_EQ(parse_error(std::string(100000, '[')), "in.json:1:65: nesting deeper than 64 levels");
}

TEST(Json, LineColumnOfOffsets) {
  using LC = std::pair<int64_t, int64_t>;
  EXPECT_EQ(json::line_column("ab\ncd", 0), LC(1, 1));
  EXPECT_EQ(json::line_column("ab\ncd", 4), LC(2, 2));
  EXPECT_EQ(json::line_column("\xEF\xBB\xBFxy", 4), LC(1, 2));
}

TEST(Json, ASinkTakesTheMembersOfTheObjectAtItsPathOnly) {
  std::vector<std::string> keys, taken;
  json::MemberSink sink;
  sink.path = {"model", "vocab"};
  sink.take = [&](const std::string& key, const json::Value& value) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) return false;
    keys.push_back(key);
    taken.push_back(key + "=" + json::describe(value));
    return true;
  };
  const json::Value v = json::parse(
      R"({"vocab": {"x": 1}, "model": {"a": {"vocab": {"y": 2}}, "vocab": {"b": 1, "c": [3]}}})",
      "in.json", json::Limits(), sink);
  EXPECT_EQ(taken, (std::vector<std::string>{"b=1", "c=an array"}));
  // The object stays in the tree, empty; the others are whole.
  ASSERT_NE(v.find("model"), nullptr);
  EXPECT_TRUE(v.find("model")->find("vocab")->members().empty());
  EXPECT_EQ(v.find("vocab")->members().size(), 1u);
  EXPECT_EQ(v.find("model")->find("a")->find("vocab")->members().size(), 1u);
  // A key the sink has is a duplicate key, placed at its quote.
  EXPECT_EQ(error_of([&] {
              json::parse(R"({"model": {"vocab": {"d": 1, "d": 2}}})", "in.json", json::Limits(),
                          sink);
            }),
            "in.json:1:30: duplicate key \"d\"");
}

}  // namespace
}  // namespace attn
