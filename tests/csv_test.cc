#include "attn/csv.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace attn {
namespace {

using test::error_of;

std::string csv_error(const std::string& text, CellKind kind = CellKind::kFinite) {
  return error_of([&] { parse_csv(text, "x.csv", kind); });
}

TEST(Csv, CommaSeparated) {
  CsvMatrix m = parse_csv("1,2,3\n4,5,6\n", "x.csv");
  EXPECT_EQ(m.values.shape(), (Shape{2, 3}));
  EXPECT_EQ(m.values.values(), (Values<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(m.row_labels.empty());
  EXPECT_TRUE(m.column_labels.empty());
}

TEST(Csv, NumpySavetxtDefaultIsSpaceSeparated) {
  CsvMatrix m = parse_csv(
      "1.000000000000000000e+00 2.500000000000000000e+00\n"
      "-3.000000000000000000e+00 4.000000000000000000e-01\n",
      "x.txt");
  EXPECT_EQ(m.values.values(), (Values<double>{1, 2.5, -3, 0.4}));
  EXPECT_EQ(m.delimiter, ' ');
}

TEST(Csv, TabAndSemicolonAndRunsOfSpaces) {
  EXPECT_EQ(parse_csv("1\t2\n3\t4\n", "t").values.values(), (Values<double>{1, 2, 3, 4}));
  EXPECT_EQ(parse_csv("1;2\n3;4\n", "t").values.values(), (Values<double>{1, 2, 3, 4}));
  EXPECT_EQ(parse_csv("  1    2\n3 4  \n", "t").values.values(), (Values<double>{1, 2, 3, 4}));
  EXPECT_EQ(parse_csv("1 , 2\r\n3 ,4\r\n", "t").values.values(), (Values<double>{1, 2, 3, 4}));
}

TEST(Csv, CommentsAndBlankLinesAreSkipped) {
  CsvMatrix m = parse_csv("# made by numpy\n\n1,2  # first row\n# middle\n3,4\n\n", "t");
  EXPECT_EQ(m.values.shape(), (Shape{2, 2}));
  EXPECT_EQ(m.values.values(), (Values<double>{1, 2, 3, 4}));
}

TEST(Csv, HeaderAndLabelColumn) {
  CsvMatrix m = parse_csv("token,d0,d1\ncat,2,2\nmilk,1,3\n", "t");
  EXPECT_EQ(m.values.shape(), (Shape{2, 2}));
  EXPECT_EQ(m.row_labels, (std::vector<std::string>{"cat", "milk"}));
  EXPECT_EQ(m.column_labels, (std::vector<std::string>{"d0", "d1"}));
}

TEST(Csv, HeaderWithoutCornerCell) {
  CsvMatrix m = parse_csv("cat,milk\ncat,0.5,0.5\nmilk,0.1,0.9\n", "t");
  EXPECT_EQ(m.column_labels, (std::vector<std::string>{"cat", "milk"}));
  EXPECT_EQ(m.row_labels, (std::vector<std::string>{"cat", "milk"}));
  EXPECT_EQ(m.values.values(), (Values<double>{0.5, 0.5, 0.1, 0.9}));
}

TEST(Csv, HeaderOnly) {
  CsvMatrix m = parse_csv("a,b\n1,2\n", "t");
  EXPECT_EQ(m.column_labels, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(m.row_labels.empty());
}

TEST(Csv, PandasToCsvIndexColumnNamesTheRows) {
  // df.to_csv() of a DataFrame with the default index and integer columns:
  // the empty first header cell says the first column is the index.
  CsvMatrix m =
      parse_csv(",0,1,2,3\n0,0.0,2.0,2.0,0.0\n1,0.0,1.0,3.0,0.0\n2,0.0,0.0,4.0,0.0\n", "t");
  EXPECT_EQ(m.values.shape(), (Shape{3, 4}));
  EXPECT_EQ(m.values.values(), (Values<double>{0, 2, 2, 0, 0, 1, 3, 0, 0, 0, 4, 0}));
  EXPECT_EQ(m.row_labels, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(m.column_labels, (std::vector<std::string>{"0", "1", "2", "3"}));
  // Named columns and a token index, as df.set_index(...).to_csv() without
  // an index name writes them.
  CsvMatrix n = parse_csv(",d0,d1\ncat,2,2\nmilk,1,3\n", "t");
  EXPECT_EQ(n.row_labels, (std::vector<std::string>{"cat", "milk"}));
  EXPECT_EQ(n.column_labels, (std::vector<std::string>{"d0", "d1"}));
  EXPECT_EQ(n.values.values(), (Values<double>{2, 2, 1, 3}));
  // A header with the empty corner but rows of another width is an error.
  EXPECT_EQ(csv_error(",a,b\n0,1\n"),
            "x.csv:1:1: header has 3 columns but the data rows have 2 (line 2)");
}

TEST(Csv, QuotedLabels) {
  CsvMatrix m = parse_csv("\"New, York\",1\n\"say \"\"hi\"\"\",2\n", "t");
  EXPECT_EQ(m.row_labels, (std::vector<std::string>{"New, York", "say \"hi\""}));
}

TEST(Csv, ByteOrderMarkIsSkipped) {
  EXPECT_EQ(parse_csv("\xEF\xBB\xBF"
                      "1,2\n",
                      "t")
                .values.values(),
            (Values<double>{1, 2}));
}

TEST(Csv, MaskCellsAcceptBooleans) {
  CsvMatrix m = parse_csv("0,1\ntrue,false\n", "t", CellKind::kBool);
  EXPECT_EQ(m.values.values(), (Values<double>{0, 1, 1, 0}));
  EXPECT_EQ(csv_error("0,2\n", CellKind::kBool),
            "x.csv:1:3: mask cells must be true/false or 0/1, got 2");
}

TEST(Csv, BiasAcceptsMinusInf) {
  CsvMatrix m = parse_csv("0,-inf\n-1.5,0\n", "t", CellKind::kExtended);
  EXPECT_EQ(m.values[1], -INFINITY);
}

TEST(Csv, RaggedRowsNameLineAndColumn) {
  EXPECT_EQ(csv_error("1,2\n3,4,5\n"),
            "x.csv:2:5: row has 3 columns; expected 2 as in line 1 (ragged rows)");
  EXPECT_EQ(csv_error("1,2,3\n4,5\n"),
            "x.csv:2:4: row has 2 columns; expected 3 as in line 1 (ragged rows)");
}

TEST(Csv, BadCellsNameLineAndColumn) {
  EXPECT_EQ(csv_error("1,2\n3,abc\n"), "x.csv:2:3: expected a number, got 'abc'");
  EXPECT_EQ(csv_error("1,2\n3,\n"), "x.csv:2:3: empty cell; expected a number");
  EXPECT_EQ(csv_error("1,2\n3,nan\n"), "x.csv:2:3: non-finite value 'nan' is not allowed here");
  EXPECT_EQ(csv_error("1,2\n3,1e999\n"), "x.csv:2:3: number out of the double range: 1e999");
}

TEST(Csv, MixedDelimitersAreExplained) {
  EXPECT_EQ(csv_error("1,2\n3;4,5\n"),
            "x.csv:2:1: expected a number, got '3;4' (mixed delimiters? this file uses ',')");
  EXPECT_EQ(
      csv_error("1;2\n3,5;4\n"),
      "x.csv:2:1: expected a number, got '3,5' (decimal commas are not supported; write '.')");
}

TEST(Csv, QuotedNumbersAreTextAndSaidSo) {
  // A first row of bare and quoted numbers is neither a header nor data.
  EXPECT_EQ(csv_error("\"1.5\",2\n3,4\n"),
            "x.csv:1:1: the first row mixes quoted and bare numbers, so it is neither a header "
            "nor data; a number in quotes is text: write data without quotes, or quote every "
            "name of a header");
  // Under a header, a quoted number where a number belongs.
  EXPECT_EQ(csv_error("a,b\n1,\"2.5\"\n"),
            "x.csv:2:3: expected a number, got the quoted text \"2.5\"; a number in quotes is "
            "text in CSV: remove the quotes");
  // A header of quoted numbers is a header of names (years, say).
  CsvMatrix m = parse_csv("\"2019\",\"2020\"\n1,2\n", "x.csv");
  EXPECT_EQ(m.column_labels, (std::vector<std::string>{"2019", "2020"}));
  EXPECT_EQ(m.values.values(), (Values<double>{1, 2}));
}

TEST(Csv, EmptyFiles) {
  EXPECT_EQ(csv_error(""), "x.csv: empty file; expected a matrix of numbers");
  EXPECT_EQ(csv_error("# only a comment\n\n"), "x.csv: empty file; expected a matrix of numbers");
  EXPECT_EQ(csv_error("a,b\n"), "x.csv:1:1: a header row but no data rows");
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// Rows after the first two go through the fast reader; every problem there
// must still get the careful path's message.
TEST(CsvFastRows, ErrorsAfterTheFirstRows) {
  auto err = [](const std::string& t) { return test::error_of([&] { parse_csv(t, "x.csv"); }); };
  EXPECT_EQ(err("1,2\n3,4\n5,6\n7,8,9\n"),
            "x.csv:4:5: row has 3 columns; expected 2 as in line 1 (ragged rows)");
  EXPECT_EQ(err("1,2\n3,4\n5,6\n7\n"),
            "x.csv:4:2: row has 1 column; expected 2 as in line 1 (ragged rows)");
  EXPECT_EQ(err("1,2\n3,4\n5,x\n"), "x.csv:3:3: expected a number, got 'x'");
  EXPECT_EQ(err("1,2\n3,4\n5,\n"), "x.csv:3:3: empty cell; expected a number");
  EXPECT_EQ(err("1,2\n3,4\n5,nan\n"), "x.csv:3:3: non-finite value 'nan' is not allowed here");
  EXPECT_EQ(err("1 2\n3 4\n5 6 7\n"),
            "x.csv:3:5: row has 3 columns; expected 2 as in line 1 (ragged rows)");
}

TEST(CsvFastRows, LabelsCommentsAndQuotesAfterTheFirstRows) {
  CsvMatrix m = parse_csv("t,a,b\nx,1,2\ny,3,4  # note\n\n\"z, q\",5,6\nw , 7 , 8\n", "t");
  EXPECT_EQ(m.row_labels, (std::vector<std::string>{"x", "y", "z, q", "w"}));
  EXPECT_EQ(m.values.values(), (Values<double>{1, 2, 3, 4, 5, 6, 7, 8}));
  CsvMatrix s = parse_csv("a 1 2\nb 3 4\nc\t5\t6\n", "t");
  EXPECT_EQ(s.row_labels, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(s.values.values(), (Values<double>{1, 2, 3, 4, 5, 6}));
}

TEST(CsvFastRows, ManyRowsKeepEveryValue) {
  std::string t;
  for (int i = 0; i < 1000; ++i)
    t += std::to_string(i) + ",+" + std::to_string(i * 0.5) + ",-1e-3\r\n";
  CsvMatrix m = parse_csv(t, "t");
  EXPECT_EQ(m.values.shape(), (Shape{1000, 3}));
  EXPECT_EQ(m.values[3 * 999], 999);
  EXPECT_EQ(m.values[3 * 999 + 1], 499.5);
  EXPECT_EQ(m.values[3 * 999 + 2], -1e-3);
}

}  // namespace
}  // namespace attn
