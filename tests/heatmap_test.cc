// Heatmaps through the library: colormaps, panels (normalisation,
// downsampling), the laid-out figure decoded back from PNG with stb_image
// (an independent decoder), SVG well-formedness and content, the terminal
// preview, and the limits of extreme inputs. The flags and the commands
// that draw them: heatmap_cli_test.cc.
#include "attn/heatmap.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "heatmap/axes.h"
#include "heatmap/font.h"
#include "heatmap/panels.h"
#include "heatmap/scene.h"
#include "heatmap_util.h"
#include "test_util.h"

namespace attn {
namespace {

using heatmap::CellGrid;
using heatmap::Scene;
using test::decode;
using test::Image;
using test::labelled;
using test::occurrences;
using test::panels;
using test::read_text;
using test::source_path;
using test::Sweet;
using test::text_collisions;
using test::texts_of;
using test::well_formed_xml;

struct Causal {
  Problem p = test::problem(read_text(source_path("data/masks/causal.json")));
  Result r = compute(p, [] {
    ComputeRequest c;
    c.weights = true;
    return c;
  }());
  HeatmapData d = heatmap_from_result(p, r, HeatmapStage::kWeights);
};

int count_texts(const Scene& s, const std::string& role) {
  int n = 0;
  for (const heatmap::TextItem& t : s.texts) n += t.role == role;
  return n;
}

bool dark(Rgb c) { return c.r < 110 && c.g < 110 && c.b < 110; }

TEST(HeatmapColor, ViridisEndsAreMatplotlibs) {
  EXPECT_TRUE(colormap_color(Colormap::kViridis, 1.0) == (Rgb{253, 231, 37}));
  EXPECT_TRUE(colormap_color(Colormap::kViridis, 0.0) == (Rgb{68, 1, 84}));
  EXPECT_TRUE(colormap_color(Colormap::kMagma, 1.0) == (Rgb{252, 253, 191}));
  EXPECT_TRUE(colormap_color(Colormap::kGray, 1.0) == (Rgb{255, 255, 255}));
  // rdbu: blue below 0, near-white at the centre, red above.
  const Rgb mid = colormap_color(Colormap::kRdBu, 0.5);
  EXPECT_GT(mid.r, 240);
  EXPECT_GT(mid.b, 240);
  EXPECT_GT(colormap_color(Colormap::kRdBu, 0.0).b, colormap_color(Colormap::kRdBu, 0.0).r);
  EXPECT_GT(colormap_color(Colormap::kRdBu, 1.0).r, colormap_color(Colormap::kRdBu, 1.0).b);
}

TEST(HeatmapPanels, RowNormalizeDividesByTheRowMax) {
  const Tensor<double> t({2, 2}, Values<double>{1, 4, -2, 1});
  HeatmapOptions o;
  o.normalize = Normalize::kRow;
  const HeatmapData d = heatmap_from_tensor(t);
  const heatmap::Panels p = heatmap::build_panels(d, o, heatmap::plan_panels(d, o), 1);
  ASSERT_EQ(p.panels.size(), 1u);
  EXPECT_EQ(p.panels[0].values, (std::vector<double>{0.25, 1, -1, 0.5}));
  EXPECT_EQ(p.lo, -1);  // signed: the range is [-1, 1] and the map diverging
  EXPECT_EQ(p.hi, 1);
  EXPECT_EQ(p.colormap, Colormap::kRdBu);
}

TEST(HeatmapPanels, BlocksMergeByMeanOrMaxSkippingMaskedCells) {
  // 3x3 in 2x2 blocks: the edge blocks are partial.
  const Tensor<double> t({3, 3}, Values<double>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Values<uint8_t> masked = {0, 1, 1, 0, 0, 1, 0, 0, 0};
  HeatmapData d = heatmap_from_tensor(t);
  d.masked = masked.data();
  HeatmapOptions o;
  heatmap::Panels p = heatmap::build_panels(d, o, heatmap::plan_panels(d, o), 2);
  EXPECT_EQ(p.shown_rows, 2);
  EXPECT_EQ(p.block_note, "3x3 shown as 2x2: mean of 2x2 blocks");
  EXPECT_EQ(p.panels[0].values[0], (1 + 4 + 5) / 3.0);
  EXPECT_EQ(p.panels[0].state[1], heatmap::kMasked);  // 3 and 6 are both masked
  EXPECT_EQ(p.panels[0].values[2], 7.5);
  o.reduce = Reduce::kMax;
  p = heatmap::build_panels(d, o, heatmap::plan_panels(d, o), 2);
  EXPECT_EQ(p.panels[0].values[0], 5);
  EXPECT_EQ(p.panels[0].values[3], 9);
}

TEST(HeatmapPanels, HeadMeanCountsMaskedWeightsAsZero) {
  // Two heads of 1x2; head 1 masks key 1.
  const Tensor<double> t({2, 1, 2}, Values<double>{0.5, 0.5, 1, 0});
  const Values<uint8_t> masked = {0, 0, 0, 1};
  HeatmapData d = heatmap_from_tensor(t);
  d.masked = masked.data();
  HeatmapOptions o;
  const heatmap::PanelPlan plan = heatmap::plan_panels(d, o);
  ASSERT_EQ(plan.refs.size(), 3u);
  EXPECT_EQ(plan.refs[2].caption, "mean of heads");
  const heatmap::Panels p = heatmap::build_panels(d, o, plan, 1);
  EXPECT_EQ(p.panels[2].values, (std::vector<double>{0.75, 0.25}));
}

TEST(HeatmapPng, ValuesAreWrittenInContrastingInk) {
  Sweet s;
  const Scene scene = heatmap::layout_figure(s.d, HeatmapOptions{});
  std::vector<std::string> values;
  for (const heatmap::TextItem& t : scene.texts) {
    if (t.role != "value") continue;
    values.push_back(t.text);
    // Black on the yellow maximum, white on the dark purples.
    if (t.text == "0.85") {
      EXPECT_TRUE(t.color == (Rgb{0, 0, 0}));
    }
    if (t.text == "0.02") {
      EXPECT_TRUE(t.color == (Rgb{255, 255, 255}));
    }
  }
  ASSERT_EQ(values.size(), 16u);
  EXPECT_EQ(values[4], "0.08");
  EXPECT_EQ(values[7], "0.61");
}

TEST(HeatmapPng, LabelsAreDrawnBesideEveryRowAndAboveEveryColumn) {
  Sweet s;
  const Scene scene = heatmap::layout_figure(s.d, HeatmapOptions{});
  const Image im = decode(render_png(s.d, HeatmapOptions{}));
  const CellGrid g = panels(scene)[0];
  const int c = g.cell_w;
  for (int i = 0; i < 4; ++i) {
    int row_ink = 0, col_ink = 0;
    // The strip left of row i, and the strip above column i.
    for (int y = g.y + i * c + c / 2 - 8; y < g.y + i * c + c / 2 + 8; ++y) {
      for (int x = std::max(0, g.x - 80); x < g.x - 2; ++x) row_ink += dark(im.at(x, y));
    }
    for (int y = g.y - 24; y < g.y - 2; ++y) {
      for (int x = g.x + i * c + 4; x < g.x + (i + 1) * c - 4; ++x) col_ink += dark(im.at(x, y));
    }
    EXPECT_GT(row_ink, 20) << "row " << i;
    EXPECT_GT(col_ink, 20) << "column " << i;
  }
  EXPECT_EQ(count_texts(scene, "row-label"), 4);
  EXPECT_EQ(count_texts(scene, "col-label"), 4);
}

TEST(HeatmapPng, MaskedCellsAreHatchedNotZero) {
  Causal s;
  const Scene scene = heatmap::layout_figure(s.d, HeatmapOptions{});
  const Image im = decode(render_png(s.d, HeatmapOptions{}));
  const CellGrid g = panels(scene)[0];
  const int c = g.cell_w, inner = c - g.gap;
  int fill = 0, hatch = 0, other = 0;
  // Query 0 may not attend to key 1.
  for (int y = g.y; y < g.y + inner; ++y) {
    for (int x = g.x + c; x < g.x + c + inner; ++x) {
      const Rgb p = im.at(x, y);
      fill += p == masked_fill_color();
      hatch += p == masked_hatch_color();
      other += !(p == masked_fill_color()) && !(p == masked_hatch_color());
    }
  }
  EXPECT_EQ(other, 0);
  EXPECT_GT(fill, hatch);
  EXPECT_GT(hatch, inner);
  EXPECT_EQ(count_texts(scene, "value"), 6);  // masked cells carry no number
}

TEST(HeatmapPng, SameInputGivesIdenticalBytes) {
  Causal a, b;
  EXPECT_EQ(render_png(a.d, HeatmapOptions{}), render_png(b.d, HeatmapOptions{}));
  EXPECT_EQ(render_svg(a.d, HeatmapOptions{}), render_svg(b.d, HeatmapOptions{}));
}

TEST(HeatmapPng, LargeMatricesAreDownsampledWithinMaxSize) {
  const int64_t n = 3000;
  Tensor<double> t({n, n});
  for (int64_t i = 0; i < n * n; ++i) t[i] = static_cast<double>(i % 7);
  const HeatmapData d = heatmap_from_tensor(t);
  HeatmapOptions o;
  o.max_size = 600;
  const Scene scene = heatmap::layout_figure(d, o);
  EXPECT_LE(scene.width, 600);
  EXPECT_LE(scene.height, 600);
  const CellGrid g = panels(scene)[0];
  EXPECT_LT(g.rows, n);
  bool noted = false;
  for (const heatmap::TextItem& tx : scene.texts) {
    noted = noted || tx.text.find("3000x3000 shown as") != std::string::npos;
  }
  EXPECT_TRUE(noted);
  EXPECT_EQ(count_texts(scene, "value"), 0);
  EXPECT_LT(count_texts(scene, "row-label"), 40);  // thinned
}

TEST(HeatmapPng, FourHeadsOfTwoBatchesMakeOneGridWithMeans) {
  Tensor<double> t({2, 4, 3, 3});
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>(i % 5) / 4;
  const HeatmapData d = heatmap_from_tensor(t);
  const Scene scene = heatmap::layout_figure(d, HeatmapOptions{});
  EXPECT_EQ(panels(scene).size(), 10u);
  std::vector<std::string> captions;
  for (const heatmap::TextItem& tx : scene.texts) {
    if (tx.role == "caption") captions.push_back(tx.text);
  }
  ASSERT_EQ(captions.size(), 10u);
  EXPECT_EQ(captions[0], "batch 0, head 0");
  EXPECT_EQ(captions[4], "batch 0, mean of heads");
  EXPECT_EQ(captions[9], "batch 1, mean of heads");
  HeatmapOptions one;
  one.batch = 1;
  one.head = 2;
  EXPECT_EQ(panels(heatmap::layout_figure(d, one)).size(), 1u);
  one.head = 4;
  EXPECT_EQ(test::error_of([&] { render_png(d, one); }),
            "--head 4: out of range; the input has 4 heads (0 to 3)");
}

TEST(HeatmapSvg, IsWellFormedWithOneRectPerCellAndRealText) {
  Causal s;
  s.d.title = "a <causal> & \"masked\" example";
  const std::string svg = render_svg(s.d, HeatmapOptions{});
  std::string why;
  EXPECT_TRUE(well_formed_xml(svg, &why)) << why;
  EXPECT_EQ(occurrences(svg, "<rect class=\"cell\""), 6);
  EXPECT_EQ(occurrences(svg, "<rect class=\"cell masked\""), 6);
  EXPECT_EQ(occurrences(svg, "class=\"row-label\""), 3);
  EXPECT_EQ(occurrences(svg, "class=\"col-label\""), 4);
  EXPECT_NE(svg.find(">k3</text>"), std::string::npos);
  EXPECT_NE(svg.find("a &lt;causal&gt; &amp; &quot;masked&quot; example"), std::string::npos);
  EXPECT_NE(svg.find("fill=\"url(#hatch)\""), std::string::npos);
}

TEST(HeatmapSvg, ManyCellsAreEmbeddedAsOneImage) {
  Tensor<double> t({300, 300});
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>(i % 11);
  const std::string svg = render_svg(heatmap_from_tensor(t), HeatmapOptions{});
  std::string why;
  EXPECT_TRUE(well_formed_xml(svg, &why)) << why;
  EXPECT_EQ(occurrences(svg, "<rect class=\"cell"), 0);
  EXPECT_EQ(occurrences(svg, "data:image/png;base64,"), 1);
}

HeatmapData two_by_two(const Tensor<double>& t) {
  HeatmapData d = heatmap_from_tensor(t);
  d.row_labels = {"cat", "sweet"};
  d.col_labels = {"a", "b"};
  d.title = "two";
  return d;
}

TEST(HeatmapTerminal, TwoByTwoInShadeCharacters) {
  const Tensor<double> t({2, 2}, Values<double>{0, 1, 0.5, 0.25});
  const std::string got = render_terminal(two_by_two(t), HeatmapOptions{}, TerminalStyle{});
  EXPECT_EQ(got,
            "two\n"
            "      a  b\n"
            "cat      @@@\n"
            "sweet +++:::\n"
            "value: 0 [ .:-=+*#%@] 1\n");
}

TEST(HeatmapTerminal, TwoByTwoInTrueColour) {
  const Tensor<double> t({2, 2}, Values<double>{0, 1, 0.5, 0.25});
  const Values<uint8_t> masked = {0, 0, 0, 1};
  HeatmapData d = two_by_two(t);
  d.masked = masked.data();
  d.title.clear();
  TerminalStyle color;
  color.color = true;
  const std::string got = render_terminal(d, HeatmapOptions{}, color);
  const std::string bottom = "\x1b[48;2;68;1;84m", top = "\x1b[48;2;253;231;37m";
  const std::string mid = "\x1b[48;2;33;145;140m";
  const std::string masked_cell = "\x1b[38;2;160;160;160;48;2;226;226;226m";
  const std::string reset = "\x1b[0m";
  const std::string first =
      "      a  b\n"
      "cat   " +
      bottom + "   " + top + "   " + reset + "\n" + "sweet " + mid + "   " + masked_cell + "///" +
      reset + "\n";
  ASSERT_EQ(got.substr(0, first.size()), first);
  EXPECT_NE(got.find("value: 0 "), std::string::npos);
  EXPECT_NE(got.find(" 1   masked: " + masked_cell + "//" + reset + "\n"), std::string::npos);
}

TEST(HeatmapLimits, HugeValuesGetShortLabelsThatNeverOverlap) {
  // ±1.7e308: hi - lo overflows. The colour range, the tick positions and
  // the labels were computed from it: both end labels at the top, a tick
  // label of 309 digits, every cell in the bottom colour.
  const std::vector<Values<double>> cases = {
      {1.7e308, -1.7e308, 0, 1e308},          {1.7e308},
      {-1.7e308, -1.6e308, -1.5e308, -1e308}, {1e-300, 2e-300, 3e-300, -1.23e-300},
      {1e-12, 2e-12, 3e-12, 1.1e-11},
  };
  for (const auto& v : cases) {
    const int64_t n = static_cast<int64_t>(v.size());
    const Tensor<double> t(n == 4 ? Shape{2, 2} : Shape{1, 1}, Values<double>(v));
    const HeatmapData d = heatmap_from_tensor(t);
    const Scene scene = heatmap::layout_figure(d, HeatmapOptions{});
    EXPECT_EQ(text_collisions(scene), std::vector<std::string>{}) << v[0];
    for (const heatmap::TextItem& ti : scene.texts) {
      if (ti.role == "tick") {
        EXPECT_LE(ti.text.size(), 8u) << ti.text;
      }
    }
    // The SVG carries the same text.
    const std::string svg = render_svg(d, HeatmapOptions{});
    EXPECT_EQ(svg.find("00000000"), std::string::npos) << "a number written out in full";
  }
  // The colours follow the values: the largest cell has the top colour.
  const Tensor<double> t({2, 2}, Values<double>{1.7e308, -1.7e308, 0, 1e308});
  const HeatmapData d = heatmap_from_tensor(t);
  const Scene scene = heatmap::layout_figure(d, HeatmapOptions{});
  const std::vector<CellGrid> g = panels(scene);
  ASSERT_EQ(g.size(), 1u);
  const Image im = decode(render_png(d, HeatmapOptions{}));
  const int c = g[0].cell_w;
  EXPECT_TRUE(im.at(g[0].x + 2, g[0].y + 2) == colormap_color(Colormap::kRdBu, 1));
  EXPECT_TRUE(im.at(g[0].x + c + 2, g[0].y + 2) == colormap_color(Colormap::kRdBu, 0));
  EXPECT_TRUE(im.at(g[0].x + 2, g[0].y + c + 2) == colormap_color(Colormap::kRdBu, 0.5));
  std::vector<std::string> ticks;
  for (const heatmap::TextItem& ti : scene.texts) {
    if (ti.role == "tick") ticks.push_back(ti.text);
  }
  EXPECT_EQ(ticks, (std::vector<std::string>{"1.7e308", "-1.7e308", "-1e308", "0", "1e308"}));
}

TEST(HeatmapLimits, NumbersAreWrittenWithinEightCharacters) {
  using heatmap::end_text;
  using heatmap::tick_text;
  EXPECT_EQ(end_text(1.7e308), "1.7e308");
  EXPECT_EQ(end_text(-1.7976931348623157e308), "-1.8e308");
  EXPECT_EQ(end_text(-1.23e-300), "-1e-300");
  EXPECT_EQ(end_text(1.23e-5), "1.23e-5");
  EXPECT_EQ(end_text(0.853), "0.853");
  EXPECT_EQ(end_text(2048), "2048");
  EXPECT_EQ(end_text(-0.0), "0");
  EXPECT_EQ(tick_text(0.2, 0.2), "0.2");
  EXPECT_EQ(tick_text(250, 50), "250");
  EXPECT_EQ(tick_text(1e308, 1e308), "1e308");
  EXPECT_EQ(tick_text(1.2e308, 2e307), "1.2e308");
  EXPECT_EQ(tick_text(2e-12, 2e-12), "2e-12");
  EXPECT_EQ(tick_text(-1.2e-300, 2e-301), "");  // would need 9: the tick is left out
  const heatmap::Ticks t = heatmap::colorbar_ticks(-1.7e308, 1.7e308, 5);
  EXPECT_EQ(t.values, (std::vector<double>{-1e308, 0, 1e308}));
}

TEST(HeatmapLimits, MeansOfHugeValuesDoNotOverflow) {
  // Two heads of 1.7e308: their mean is 1.7e308, not inf. The means of
  // ordinary values are the same bits as a plain sum gives.
  const Tensor<double> t({2, 1, 2}, Values<double>{1.7e308, 0.1, 1.7e308, 0.2});
  const HeatmapData d = heatmap_from_tensor(t);
  HeatmapOptions o;
  const heatmap::PanelPlan plan = heatmap::plan_panels(d, o);
  const heatmap::Panels p = heatmap::build_panels(d, o, plan, 1);
  ASSERT_EQ(p.panels.size(), 3u);
  EXPECT_EQ(p.panels[2].values, (std::vector<double>{1.7e308, (0.1 + 0.2) / 2}));
  const heatmap::Panels blocks = heatmap::build_panels(d, o, plan, 2);
  EXPECT_EQ(blocks.panels[0].values, (std::vector<double>{(1.7e308 / 2 + 0.1 / 2)}));
}

TEST(HeatmapLimits, ManyPanelsAreRefusedBeforeDrawing) {
  // 1000 heads of 2x2 drew a 5988 x 5468 image at --max-size 2048 (and
  // 262,144 heads gigabytes). Panels of a grid keep 32 px: 1000 heads now
  // wrap into 2048 px, 5000 do not.
  const Tensor<double> fits({1000, 2, 2}, Values<double>(4000, 0.5));
  EXPECT_LE(decode(render_png(heatmap_from_tensor(fits), HeatmapOptions{})).w, 2048);
  const Tensor<double> t({5000, 2, 2}, Values<double>(20000, 0.5));
  HeatmapData d = heatmap_from_tensor(t);
  d.source = "h.json";
  const std::string e = test::error_of([&] { render_png(d, HeatmapOptions{}); });
  EXPECT_EQ(e,
            "h.json: the heatmap of 5001 panels needs 13717 × 7476 pixels, more than "
            "--max-size 2048; draw fewer panels with --head or --batch, or raise --max-size");
  EXPECT_EQ(test::error_of([&] { render_svg(d, HeatmapOptions{}); }), e);
  // One head fits; so do 5000 at a size that holds them.
  HeatmapOptions one;
  one.head = 7;
  EXPECT_EQ(decode(render_png(d, one)).w > 0, true);
  HeatmapOptions large;
  large.max_size = 16384;
  const Scene s = heatmap::layout_figure(d, large);
  EXPECT_LE(std::max(s.width, s.height), 16384);
  // At the largest --max-size there is nothing to raise.
  const Tensor<double> many({20000, 1, 1}, Values<double>(20000, 0.5));
  HeatmapOptions largest;
  largest.max_size = kLargestMaxSize;
  const std::string m =
      test::error_of([&] { heatmap::layout_figure(heatmap_from_tensor(many), largest); });
  EXPECT_NE(m.find("more than --max-size 16384; draw fewer panels with --head or --batch"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("raise"), std::string::npos) << m;
}

// fit_text as it was: cut one code point at a time, measuring each time
// (quadratic); the reference the one-pass version must agree with.
std::string fit_text_reference(const std::string& utf8, int max_width, int scale) {
  if (heatmap::text_extent(utf8, scale) <= max_width) return utf8;
  std::string s = utf8;
  while (!s.empty()) {
    size_t cut = s.size() - 1;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s.resize(cut);
    if (heatmap::text_extent(s + "…", scale) <= max_width) return s + "…";
  }
  return heatmap::text_extent("…", scale) <= max_width ? "…" : "";
}

TEST(HeatmapLimits, FitTextAgreesWithCuttingOneCodePointAtATime) {
  std::mt19937 rng(7);
  const std::vector<std::string> pieces = {"a", "W", "i", ".", " ", "é", "漢", "😀", "\t", "m"};
  for (int trial = 0; trial < 2000; ++trial) {
    std::string s;
    const int n = static_cast<int>(rng() % 30);
    for (int k = 0; k < n; ++k) s += pieces[rng() % pieces.size()];
    const int width = static_cast<int>(rng() % 300) - 10;
    const int scale = 1 + static_cast<int>(rng() % 2);
    EXPECT_EQ(heatmap::fit_text(s, width, scale), fit_text_reference(s, width, scale))
        << "'" << s << "' in " << width << " at scale " << scale;
    EXPECT_EQ(heatmap::text_extent_upto(s, scale, width),
              std::min(heatmap::text_extent(s, scale), width + 1));
  }
}

TEST(HeatmapLimits, MegabyteTitlesAndLabelsAreLaidOutInLinearTime) {
  // A 100,000-character title or label took over 25 s (50 s here): text
  // fitting measured every shorter prefix. Now it reads as far as fits.
  std::string words;
  while (words.size() < (1u << 20)) words += "word ";
  std::string accents;
  while (accents.size() < (1u << 20)) accents += "é";
  const std::string solid(1u << 20, 'b');
  const Tensor<double> t({2, 2}, Values<double>{0.1, 0.2, 0.3, 0.4});
  for (const std::string* text : std::vector<const std::string*>{&words, &accents, &solid}) {
    HeatmapData d = heatmap_from_tensor(t);
    d.title = *text;
    d.subtitle = *text;
    d.row_labels = {*text, "b"};
    d.col_labels = {"a", *text};
    d.value_name = *text;  // the colorbar's title
    const auto start = std::chrono::steady_clock::now();
    const Scene s = heatmap::layout_figure(d, HeatmapOptions{});
    const std::string png = render_png(d, HeatmapOptions{});
    const std::string svg = render_svg(d, HeatmapOptions{});
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // A guard against quadratic layout (minutes on a megabyte), not a
    // benchmark: about 0.2 s here, several times that under ASan on a busy CI.
    EXPECT_LT(secs, 15.0);
    EXPECT_LE(std::max(s.width, s.height), 2048);
    EXPECT_EQ(text_collisions(s), std::vector<std::string>{});
    for (const heatmap::TextItem& ti : s.texts) {
      EXPECT_LT(ti.text.size(), 400u) << ti.role;
      // Never a broken code point: every é keeps both of its bytes.
      // Labels are elided in the middle, the others at the end: "é…é", "éé…".
      if (text == &accents && ti.text.find("é") != std::string::npos && ti.role != "title") {
        const size_t dots = ti.text.find("…");
        ASSERT_NE(dots, std::string::npos) << ti.role;
        for (const std::string& body : {ti.text.substr(0, dots), ti.text.substr(dots + 3)}) {
          EXPECT_EQ(body.size() % 2, 0u) << ti.role;
          for (size_t i = 0; i + 1 < body.size(); i += 2) {
            ASSERT_EQ(body.substr(i, 2), "é") << ti.role;
          }
        }
      }
    }
  }
}

TEST(HeatmapText, TokenizerMarksAreDrawnAndOnlyMissingGlyphsWarn) {
  Sweet s;
  // GPT-2's Ġ and SentencePiece's ▁ are in DejaVu Sans: drawn, not '?'.
  s.d.row_labels = {"Ġthe", "▁the", "é", "?"};
  s.d.col_labels = s.d.row_labels;
  EXPECT_EQ(missing_glyph_warning(s.d, HeatmapOptions{}), "");
  const std::string with_marks = render_png(s.d, HeatmapOptions{});
  HeatmapData q = s.d;
  q.row_labels = {"?the", "?the", "?", "?"};
  q.col_labels = q.row_labels;
  EXPECT_NE(render_png(q, HeatmapOptions{}), with_marks);
  // Chinese is not: one warning names the label and the code point.
  s.d.row_labels = {"它", "喝", "x", "y"};
  s.d.col_labels = s.d.row_labels;
  s.d.source = "w.json";
  EXPECT_EQ(
      missing_glyph_warning(s.d, HeatmapOptions{})
          .rfind("w.json: the font DejaVu Sans has no glyph for U+5B83, U+559D in '它' and 1 more "
                 "label; drawn as boxes",
                 0),
      0u);
  // The box is drawn: the label's place is not blank.
  const heatmap::FontScope font(nullptr);
  EXPECT_EQ(heatmap::missing_glyphs("a它b"), std::vector<uint32_t>{0x5B83});
  EXPECT_GT(heatmap::text_extent("它", 2), 5);
}

TEST(HeatmapText, LongLabelsAreElidedInTheMiddleWithTheWholeLabelInTheTooltip) {
  HeatmapData d = labelled(3);
  d.row_labels[1] = "internationalization_of_everything";
  const Scene s = heatmap::layout_figure(d, HeatmapOptions{});
  const auto rows = texts_of(s, "row-label");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_NE(rows[1]->text.find("…"), std::string::npos) << rows[1]->text;
  EXPECT_EQ(rows[1]->text.substr(0, 5), "inter");
  EXPECT_EQ(rows[1]->text.substr(rows[1]->text.size() - 5), "thing");
  EXPECT_EQ(rows[1]->tooltip, "internationalization_of_everything");
  const std::string svg = render_svg(d, HeatmapOptions{});
  EXPECT_NE(svg.find("<title>internationalization_of_everything</title>"), std::string::npos);
  // Every cell says what it is.
  EXPECT_NE(svg.find("<title>row 0 &apos;tok0&apos;, column 1 &apos;tok1&apos;: 0.7</title>"),
            std::string::npos)
      << svg.substr(0, 3000);
}

TEST(HeatmapLayout, OnePanelHasNoCaptionLine) {
  // A single panel's caption is empty: the column labels follow the title
  // at once (an empty caption once took a line of its own).
  Sweet s;
  const Scene scene = heatmap::layout_figure(s.d, HeatmapOptions{});
  EXPECT_TRUE(texts_of(scene, "caption").empty());
  int title_bottom = 0;
  for (const auto* t : texts_of(scene, "title")) title_bottom = std::max(title_bottom, t->y);
  const int first_label = texts_of(scene, "col-label")[0]->y;
  EXPECT_LT(first_label - title_bottom, 2 * 24) << first_label << " " << title_bottom;
}

}  // namespace
}  // namespace attn
