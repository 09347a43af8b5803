// Figures at the size of real models, through the library: the summary of
// each head (one cell per head, its queries where the mask puts them) and
// tokens as people read them. The model view drawn by the program (layers
// as rows, heads as columns, a stack's causal zeros drawn as masked):
// model_view_cli_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "attn/binary_array.h"
#include "attn/error.h"
#include "attn/heatmap.h"
#include "attn/npy.h"
#include "test_util.h"

namespace attn {
namespace {

using test::read_text;
using test::temp_dir;
namespace fs = std::filesystem;
using test::model;

TEST(TokenStyle, TokensAsPeopleReadThem) {
  using V = std::vector<std::string>;
  // Byte-level BPE: Ġ is a space, Ċ a newline, Ã© the two bytes of é.
  EXPECT_EQ(shown_tokens(V{"The", "Ġcat", "Ċ", "cafÃ©", "ĉ"}, TokenStyle::kReadable),
            (V{"The", "cat", "↵", "café", "⇥"}));
  // SentencePiece: ▁ is a space; byte-fallback pieces are their bytes.
  EXPECT_EQ(
      shown_tokens(V{"<s>", "▁the", "<0x0A>", "<0xE4>", "▁", "<0xZZ>"}, TokenStyle::kReadable),
      (V{"<s>", "the", "↵", "\\xE4", "␣", "<0xZZ>"}));
  // The marker style keeps the word's space visible; raw keeps everything.
  EXPECT_EQ(shown_tokens(V{"▁the", "▁cat"}, TokenStyle::kMarker), (V{"␣the", "␣cat"}));
  EXPECT_EQ(shown_tokens(V{"▁the", "Ġcat"}, TokenStyle::kRaw), (V{"▁the", "Ġcat"}));
  // Repeated tokens are told apart by their position.
  EXPECT_EQ(shown_tokens(V{"▁the", "▁cat", "▁the"}, TokenStyle::kReadable),
            (V{"the₀", "cat", "the₂"}));
  // WordPiece's continuation stays as it is.
  EXPECT_EQ(shown_tokens(V{"[CLS]", "play", "##ing"}, TokenStyle::kReadable),
            (V{"[CLS]", "play", "##ing"}));
  // Latin Extended-A letters are byte stand-ins too, but without Ġ or Ċ the
  // labels are text: Polish and Turkish words as they are, and a ▁ among
  // them keeps SentencePiece's reading.
  EXPECT_EQ(shown_tokens(V{"ł", "ć", "İstanbul"}, TokenStyle::kReadable),
            (V{"ł", "ć", "İstanbul"}));
  EXPECT_EQ(shown_tokens(V{"▁się", "▁ma"}, TokenStyle::kReadable), (V{"się", "ma"}));
  // Control characters and stray bytes by value.
  EXPECT_EQ(shown_tokens(V{std::string("a\x01"), "b\xFF"}, TokenStyle::kReadable),
            (V{"a\\x01", "b\\xFF"}));
}

// A [1][1][3][3][3] stack as mapped bytes: head 0 looks at the previous
// token (the first row at itself), head 1 at the first token, head 2 is
// uniform over the keys up to the query.
BinaryArray summary_stack() {
  const double w[3][3][3] = {{{1, 0, 0}, {1, 0, 0}, {0, 1, 0}},
                             {{1, 0, 0}, {1, 0, 0}, {1, 0, 0}},
                             {{1, 0, 0}, {0.5, 0.5, 0}, {1 / 3.0, 1 / 3.0, 1 / 3.0}}};
  std::string cells(sizeof w, '\0');
  std::memcpy(&cells[0], w, sizeof w);
  BinaryArray a;
  a.type = ElementType::kF64;
  a.shape = {1, 1, 3, 3, 3};
  a.keep = FileBytes::from_string(std::move(cells));
  a.data = reinterpret_cast<const unsigned char*>(a.keep.view().data());
  return a;
}

TEST(HeadSummary, OneCellPerHeadHoldsTheMeanOverTheRows) {
  const BinaryArray a = summary_stack();
  auto cells = [&](HeadStat s) {
    const HeatmapData d = head_summary(a, StackChoice{}, s, "s");
    EXPECT_EQ(d.rows, 1);
    EXPECT_EQ(d.cols, 3);
    return std::vector<double>(d.values, d.values + 3);
  };
  // The stack is causal: row 0 sees a single key and is left out, so
  // every statistic is the mean over rows 1 and 2.
  const std::vector<double> prev = cells(HeadStat::kPrevious);
  EXPECT_DOUBLE_EQ(prev[0], 1.0);
  EXPECT_DOUBLE_EQ(prev[1], 0.5);
  EXPECT_DOUBLE_EQ(prev[2], (0.5 + 1 / 3.0) / 2);
  const std::vector<double> first = cells(HeadStat::kFirst);
  EXPECT_DOUBLE_EQ(first[0], 0.5);
  EXPECT_DOUBLE_EQ(first[1], 1.0);
  const std::vector<double> self = cells(HeadStat::kSelf);
  EXPECT_DOUBLE_EQ(self[0], 0.0);
  EXPECT_DOUBLE_EQ(self[2], (0.5 + 1 / 3.0) / 2);
  const std::vector<double> entropy = cells(HeadStat::kEntropy);
  EXPECT_DOUBLE_EQ(entropy[0], 0.0);
  EXPECT_NEAR(entropy[2], (std::log(2.0) + std::log(3.0)) / 2, 1e-15);
  const std::vector<double> distance = cells(HeadStat::kDistance);
  EXPECT_DOUBLE_EQ(distance[0], 1.0);  // 1, 1
  EXPECT_DOUBLE_EQ(distance[1], 1.5);  // 1, 2
  EXPECT_EQ(parse_head_stat("previous"), HeadStat::kPrevious);
  EXPECT_THROW(parse_head_stat("prev"), Error);
}

// More keys than queries: a top-left causal stack keeps query i at key i,
// one that sees past the first key (a KV cache) puts it at i + k - q.
TEST(HeadSummary, QueriesSitWhereTheMaskPutsThem) {
  auto self_of = [](std::vector<double> w) {
    std::string cells(w.size() * sizeof(double), '\0');
    std::memcpy(&cells[0], w.data(), cells.size());
    BinaryArray a;
    a.type = ElementType::kF64;
    a.shape = {1, 1, 1, 2, 4};
    a.keep = FileBytes::from_string(std::move(cells));
    a.data = reinterpret_cast<const unsigned char*>(a.keep.view().data());
    return head_summary(a, StackChoice{}, HeadStat::kSelf, "s").values[0];
  };
  // Top-left and causal: query 0 sees key 0 alone and is left out.
  EXPECT_DOUBLE_EQ(self_of({1, 0, 0, 0, 0.5, 0.5, 0, 0}), 0.5);
  EXPECT_DOUBLE_EQ(self_of({0.25, 0.25, 0.25, 0.25, 0.1, 0.1, 0.1, 0.7}), (0.25 + 0.7) / 2);
}

}  // namespace
}  // namespace attn
