// The JSON writer: string escaping, the two number styles, nesting and the
// three layouts, and tensors as results and traces lay them out. Where the
// writer keeps text nlohmann::json used to write, nlohmann's dump() is the
// oracle; elsewhere the expected text is written out by hand.
#include "io/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "attn/escape.h"

namespace attn {
namespace {

using namespace std::string_literals;

std::string nlohmann_dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string shortest(double v) {
  std::string out;
  JsonWriter(out).number(v);
  return out;
}

std::string grisu(double v) {
  std::string out;
  JsonWriter(out, NumberStyle::kNlohmann).number(v);
  return out;
}

TEST(JsonWriter, EscapesQuoteBackslashAndControls) {
  EXPECT_EQ(json_string("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(json_string("\b\f\n\r\t"), R"("\b\f\n\r\t")");
  EXPECT_EQ(json_string("\x01\x1f"s + '\0'), R"("\u0001\u001f\u0000")");
}

TEST(JsonWriter, KeepsOtherCharactersAsUtf8) {
  // DEL and the line separators stay as they are (script_json escapes
  // U+2028 and U+2029 where the text goes into a <script>).
  EXPECT_EQ(json_string("\x7f"), "\"\x7f\"");
  EXPECT_EQ(json_string("caf\xC3\xA9 \xE2\x80\xA8 \xF0\x9F\x98\x80"),
            "\"caf\xC3\xA9 \xE2\x80\xA8 \xF0\x9F\x98\x80\"");
  EXPECT_EQ(json_string("</script>"), R"("</script>")");
}

TEST(JsonWriter, ReplacesInvalidUtf8) {
  EXPECT_EQ(json_string("a\xFF"
                        "b"),
            "\"a\xEF\xBF\xBD"
            "b\"");
  EXPECT_EQ(json_string("\xC3"), "\"\xEF\xBF\xBD\"");
}

TEST(JsonWriter, EscapesEveryByteAsNlohmannDoes) {
  for (int c = 0; c < 0x80; ++c) {
    const std::string s = "x"s + static_cast<char>(c) + "y";
    EXPECT_EQ(json_string(s), nlohmann_dump(s)) << "byte " << c;
  }
}

TEST(JsonWriter, ShortestNumbers) {
  EXPECT_EQ(shortest(0.1), "0.1");
  EXPECT_EQ(shortest(1.0), "1");
  EXPECT_EQ(shortest(-0.0), "-0");
  EXPECT_EQ(shortest(1e-7), "1e-07");
  EXPECT_EQ(shortest(12345000000000.0), "1.2345e+13");
  EXPECT_EQ(shortest(1.0 / 3), "0.3333333333333333");
  std::string out;
  JsonWriter(out).number(0.1f);
  EXPECT_EQ(out, "0.1");
}

TEST(JsonWriter, NonFiniteNumbersAreStrings) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(shortest(std::nan("")), R"("nan")");
  EXPECT_EQ(shortest(inf), R"("inf")");
  EXPECT_EQ(grisu(-inf), R"("-inf")");
  std::string out;
  JsonWriter(out).number(std::numeric_limits<float>::infinity());
  EXPECT_EQ(out, R"("inf")");
}

TEST(JsonWriter, NlohmannNumbers) {
  EXPECT_EQ(grisu(1.0), "1.0");
  EXPECT_EQ(grisu(0.0), "0.0");
  EXPECT_EQ(grisu(-0.0), "-0.0");
  EXPECT_EQ(grisu(1e20), "1e+20");
  EXPECT_EQ(grisu(1e-7), "1e-07");
  EXPECT_EQ(grisu(12345000000000.0), "12345000000000.0");
}

TEST(JsonWriter, NlohmannNumbersMatchItsDump) {
  std::mt19937_64 gen(7);
  std::uniform_int_distribution<uint64_t> bits;
  for (int i = 0; i < 20000; ++i) {
    double v = 0;
    const uint64_t b = bits(gen);
    std::memcpy(&v, &b, sizeof v);
    if (!std::isfinite(v)) continue;
    ASSERT_EQ(grisu(v), nlohmann_dump(v)) << "bits " << b;
  }
  for (double v : {0.5, 2.0, 1e15, 1e16, 123.456, 1e-5, 5e-324, 1.7976931348623157e308}) {
    EXPECT_EQ(grisu(v), nlohmann_dump(v));
  }
}

TEST(JsonWriter, Integers) {
  std::string out;
  JsonWriter w(out);
  w.begin_array(JsonLayout::kInline);
  w.integer(0).integer(-1).integer(std::numeric_limits<int64_t>::min());
  w.integer(std::numeric_limits<int64_t>::max()).end_array();
  EXPECT_EQ(out, "[0, -1, -9223372036854775808, 9223372036854775807]");
}

TEST(JsonWriter, BlockLayoutAsNlohmannIndentsIt) {
  std::string out;
  JsonWriter w(out, NumberStyle::kNlohmann);
  w.begin_object(JsonLayout::kBlock);
  w.key("a").begin_object(JsonLayout::kBlock).key("file").string("x.json").end_object();
  w.key("shape").begin_array(JsonLayout::kBlock).integer(2).integer(3).end_array();
  w.key("kl").null().key("ok").boolean(true).key("x").number(0.5);
  w.end_object();
  nlohmann::ordered_json j;
  j["a"] = {{"file", "x.json"}};
  j["shape"] = {2, 3};
  j["kl"] = nullptr;
  j["ok"] = true;
  j["x"] = 0.5;
  EXPECT_EQ(out, j.dump(2));
}

TEST(JsonWriter, EmptyContainers) {
  // A block container closes on its own line even when empty (nlohmann
  // would write "[]"); the other layouts write "[]" and "{}".
  std::string out;
  JsonWriter w(out);
  w.begin_object(JsonLayout::kBlock);
  w.key("values").begin_array(JsonLayout::kBlock).end_array();
  w.key("labels").begin_array(JsonLayout::kInline).end_array();
  w.key("data").begin_object(JsonLayout::kCompact).end_object();
  w.end_object();
  EXPECT_EQ(out, "{\n  \"values\": [\n  ],\n  \"labels\": [],\n  \"data\": {}\n}");
}

TEST(JsonWriter, CompactLayoutAsNlohmannWritesIt) {
  std::string out;
  JsonWriter w(out, NumberStyle::kNlohmann);
  w.begin_object(JsonLayout::kCompact);
  w.key("a").strings({"x", "y"}, JsonLayout::kCompact);
  w.key("b").begin_array(JsonLayout::kCompact);
  w.begin_object(JsonLayout::kCompact).key("c").integer(1).end_object();
  w.end_array();
  w.key("d").number(2.0).end_object();
  EXPECT_EQ(out, R"({"a":["x","y"],"b":[{"c":1}],"d":2.0})");
}

TEST(JsonWriter, InlineInsideBlock) {
  std::string out;
  JsonWriter w(out);
  w.begin_object(JsonLayout::kBlock);
  w.key("labels").begin_object(JsonLayout::kInline);
  w.key("queries").strings({"a", "b"}).key("keys").strings({}).end_object();
  w.key("title").string("t");
  w.end_object();
  EXPECT_EQ(out,
            "{\n  \"labels\": {\"queries\": [\"a\", \"b\"], \"keys\": []},\n"
            "  \"title\": \"t\"\n}");
}

TEST(JsonWriter, WrapAlignsPastTheOpeningBracket) {
  std::string out;
  JsonWriter w(out);
  w.begin_object(JsonLayout::kBlock);
  w.key("steps").begin_array(JsonLayout::kBlock);
  w.begin_object(JsonLayout::kInline).key("index").integer(1);
  w.wrap().key("row_labels").strings({"a"}).key("col_labels").strings({"b"});
  w.wrap().key("values").begin_array(JsonLayout::kBlock);
  w.begin_array(JsonLayout::kInline).integer(1).integer(2).end_array();
  w.end_array().end_object().end_array().end_object();
  EXPECT_EQ(out,
            "{\n"
            "  \"steps\": [\n"
            "    {\"index\": 1,\n"
            "     \"row_labels\": [\"a\"], \"col_labels\": [\"b\"],\n"
            "     \"values\": [\n"
            "      [1, 2]\n"
            "    ]}\n"
            "  ]\n"
            "}");
}

TEST(JsonWriter, TensorsOneInnermostRowALine) {
  Tensor<double> t({2, 2, 3}, Values<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0.5});
  std::string out = "x = ";
  JsonWriter w(out);
  write_json_tensor(w, t, DType::kF64);
  EXPECT_EQ(out,
            "x = [\n"
            "  [\n"
            "    [1, 2, 3],\n"
            "    [4, 5, 6]\n"
            "  ],\n"
            "  [\n"
            "    [7, 8, 9],\n"
            "    [10, 11, 0.5]\n"
            "  ]\n"
            "]");
}

TEST(JsonWriter, TensorsAtAnIndentAndAsFloat32) {
  std::string out = "  \"w\": ";
  JsonWriter w(out, NumberStyle::kShortest, 2);
  write_json_tensor(w, Tensor<double>({2, 1}, Values<double>{0.1, 1.0 / 3}), DType::kF32);
  EXPECT_EQ(out, "  \"w\": [\n    [0.1],\n    [0.33333334]\n  ]");
  out.clear();
  JsonWriter v(out);
  write_json_tensor(v, Tensor<double>({3}, Values<double>{1, std::nan(""), 3}), DType::kF64);
  EXPECT_EQ(out, R"([1, "nan", 3])");
}

}  // namespace
}  // namespace attn
