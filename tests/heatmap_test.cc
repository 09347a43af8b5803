// Heatmaps: colormaps, panels (normalisation, downsampling), the laid-out
// figure decoded back from PNG with stb_image (an independent decoder),
// SVG well-formedness and content, the terminal preview, and the CLI.
#include "attn/heatmap.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "commands/heatmap_command.h"
#include "commands/heatmap_flags.h"
#include "heatmap/axes.h"
#include "heatmap/font.h"
#include "heatmap/panels.h"
#include "heatmap/scene.h"
#include "test_util.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

namespace attn {
namespace {

using heatmap::CellGrid;
using heatmap::Scene;
using test::read_text;
using test::run_attn;
using test::source_path;
using test::write_temp;

struct Image {
  int w = 0, h = 0;
  Values<uint8_t> rgb;
  Rgb at(int x, int y) const {
    const size_t i = (static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

Image decode(const std::string& png) {
  Image im;
  int n = 0;
  unsigned char* p = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(png.data()),
                                           static_cast<int>(png.size()), &im.w, &im.h, &n, 3);
  EXPECT_NE(p, nullptr) << "stb_image could not decode the PNG";
  if (p) {
    im.rgb.assign(p, p + static_cast<size_t>(im.w) * static_cast<size_t>(im.h) * 3);
    stbi_image_free(p);
  }
  return im;
}

// The blog example's weights (docs/spec.md): rows cat, milk, it, sweet.
struct Sweet {
  Problem p = test::problem(read_text(source_path("data/examples/sweet.json")));
  Result r = compute(p, [] {
    ComputeRequest c;
    c.weights = true;
    return c;
  }());
  HeatmapData d = heatmap_from_result(p, r, HeatmapStage::kWeights);
};

struct Causal {
  Problem p = test::problem(read_text(source_path("data/masks/causal.json")));
  Result r = compute(p, [] {
    ComputeRequest c;
    c.weights = true;
    return c;
  }());
  HeatmapData d = heatmap_from_result(p, r, HeatmapStage::kWeights);
};

// The grids that draw matrices (the legend swatches are 1x1 grids).
std::vector<CellGrid> panels(const Scene& s) {
  std::vector<CellGrid> out;
  for (const CellGrid& g : s.grids) {
    if (!g.legend) out.push_back(g);
  }
  return out;
}

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

TEST(HeatmapPng, SweetFigureHasTheLaidOutSizeAndWeightsOnAZeroToOneScale) {
  Sweet s;
  const Scene scene = heatmap::layout_figure(s.d, HeatmapOptions{});
  const Image im = decode(render_png(s.d, HeatmapOptions{}));
  EXPECT_EQ(im.w, scene.width);
  EXPECT_EQ(im.h, scene.height);
  EXPECT_LE(std::max(im.w, im.h), 2048);
  const std::vector<CellGrid> g = panels(scene);
  ASSERT_EQ(g.size(), 1u);
  ASSERT_EQ(g[0].rows, 4);
  // Weights are drawn on 0 to 1: the maximum, 0.853 (sweet -> sweet), sits
  // at 0.853 of viridis (a corner pixel of the cell, away from its value),
  // 0.25 at a quarter.
  const int c = g[0].cell_w;
  const double top = s.r.weights->values()[15];
  EXPECT_TRUE(im.at(g[0].x + 3 * c + 2, g[0].y + 3 * c + 2) ==
              colormap_color(Colormap::kViridis, top));
  EXPECT_TRUE(im.at(g[0].x + 2, g[0].y + 2) == colormap_color(Colormap::kViridis, 0.25));
  // --vmax auto: the data's maximum has the top colour.
  HeatmapOptions data_range;
  set_heatmap_flag(data_range, "--vmax", "auto");
  const Image im2 = decode(render_png(s.d, data_range));
  EXPECT_TRUE(im2.at(g[0].x + 3 * c + 2, g[0].y + 3 * c + 2) ==
              colormap_color(Colormap::kViridis, 1));
  EXPECT_TRUE(im2.at(g[0].x + 2, g[0].y + 2) == colormap_color(Colormap::kViridis, 0.25 / top));
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

using test::well_formed_xml;

int occurrences(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
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

TEST(HeatmapOptions, FlagsNameTheFlagInErrors) {
  HeatmapOptions o;
  EXPECT_EQ(
      test::error_of([&] { set_heatmap_flag(o, "--colormap", "jet"); }),
      "--colormap: 'jet' is not one of viridis, magma, gray, blues, rdbu, viridis_r, magma_r, "
      "gray_r, blues_r, rdbu_r");
  EXPECT_EQ(test::error_of([&] { set_heatmap_flag(o, "--normalize", "rows"); }),
            "--normalize: 'rows' is not one of none, row, col; did you mean 'row'?");
  EXPECT_EQ(test::error_of([&] { set_heatmap_flag(o, "--max-size", "20"); }),
            "--max-size: expected an integer from 256 to 16384, got '20'");
  set_heatmap_flag(o, "--vmax", "1");
  EXPECT_EQ(test::error_of([&] { set_heatmap_flag(o, "--vmin", "2"); }),
            "--vmin 2 must be below --vmax 1");
  EXPECT_EQ(test::error_of([] { parse_heatmap_stage_flag("weight"); }),
            "--of: 'weight' is not one of weights, scores, output, bias; did you mean 'weights'?");
}

TEST(HeatmapCli, RunDrawsTheBlogExample) {
  const std::string png = test::temp_dir() + "/sweet.png";
  auto r = run_attn({"run", source_path("data/examples/sweet.json"), "--heatmap", png});
  ASSERT_EQ(r.code, 0) << r.err;
  const Image im = decode(read_text(png));
  EXPECT_GT(im.w, 400);
  EXPECT_GT(im.h, 300);
  // Again: byte-identical.
  const std::string first = read_text(png);
  r = run_attn({"run", source_path("data/examples/sweet.json"), "--heatmap", png});
  EXPECT_EQ(read_text(png), first);
}

TEST(HeatmapCli, HeatmapCommandDrawsAMemberOfAResultDocument) {
  const std::string doc =
      write_temp("result.json", R"({"output": [[1, 2]], "weights": [[0.3, 0.7], [1, 0]]})");
  const std::string svg = test::temp_dir() + "/w.svg";
  auto r = run_attn({"heatmap", doc, "-o", svg, "--labels", "x,y"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = read_text(svg);
  EXPECT_EQ(occurrences(text, "<rect class=\"cell\""), 4);
  EXPECT_NE(text.find(">" + doc + ": weights</text>"), std::string::npos);
  r = run_attn({"heatmap", doc, "--key", "outptu", "-o", svg});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --key outptu: " + doc +
                       " has no member \"outptu\"; did you mean \"output\"?\n");
}

// A run whose inputs all come from flags names no document: its figure is
// titled by the files, escaped like any text (the names here are hostile),
// and a name that is not UTF-8 does not break the SVG or the PNG.
TEST(HeatmapCli, FigureOfFlagInputsIsTitledByItsFiles) {
  const std::string q = write_temp("q<&>.csv", "1,0\n0,1\n");
  const std::string k = write_temp("k\xff.csv", "1,0\n0,2\n");
  const std::string svg = test::temp_dir() + "/flags.svg", png = test::temp_dir() + "/flags.png";
  auto r = run_attn({"run", "--q", q, "--k", k, "--heatmap", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = read_text(svg);
  std::string why;
  EXPECT_TRUE(test::well_formed_xml(text, &why)) << why;
  // The title wraps where the temporary directory's name makes it long.
  EXPECT_NE(text.find(">Q " + test::temp_dir() + "/q&lt;&amp;&gt;.csv,"), std::string::npos);
  EXPECT_NE(text.find(".csv, K"), std::string::npos);
  EXPECT_NE(text.find(test::temp_dir() + "/k\xEF\xBF\xBD.csv</text>"), std::string::npos);
  EXPECT_EQ(text.find("flags&gt;"), std::string::npos);
  r = run_attn({"run", "--q", q, "--k", k, "--heatmap", png});
  EXPECT_EQ(r.code, 0) << r.err;
  // A title given wins.
  r = run_attn({"run", "--q", q, "--k", k, "--title", "mine", "--heatmap", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(read_text(svg).find(">mine</text>"), std::string::npos);
}

TEST(HeatmapCli, ShowPrintsThePreviewAfterTheTable) {
  const std::string csv = write_temp("m.csv", "q,a,b\ncat,0,1\nsweet,0.5,0.25\n");
  auto r = run_attn({"heatmap", csv, "--show"}, "", {"NO_COLOR=1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, csv +
                       "\n"
                       "[2][2]\n"
                       "      a  b\n"
                       "cat      @@@\n"
                       "sweet +++:::\n"
                       "value: 0 [ .:-=+*#%@] 1\n");
  r = run_attn({"run", source_path("data/masks/causal.json"), "--show", "-f", "json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --show would mix the preview into the json on stdout; write the data "
            "with -o FILE\n");
}

TEST(HeatmapCli, FlagMistakesAreUsageErrors) {
  auto r = run_attn({"run", source_path("data/examples/sweet.json"), "--heatmap", "w.jpg"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: w.jpg: a heatmap is written as .png, .svg or .html (chosen by the file "
            "name)\n");
  r = run_attn({"run", source_path("data/examples/sweet.json"), "--colormap", "magma"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --colormap needs --heatmap FILE or --show\n");
  r = run_attn({"heatmap", source_path("data/csv/causal_mask.csv")});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: heatmap: nothing to do; give -o FILE.png (or .svg, .html) or --show\n");
}

// ---- limits and extreme inputs ---------------------------------------------

// The box a text item covers, in pixels (see TextItem: horizontal text has
// its capitals in [y, y + 7·scale); vertical text reads upwards from its
// anchor along y, its capitals' top edge at x).
struct Box {
  int x0, y0, x1, y1;
};
Box box_of(const heatmap::TextItem& t) {
  const int w = heatmap::text_extent(t.text, t.scale), h = heatmap::kCapHeight * t.scale;
  const int start = t.anchor == heatmap::Anchor::kStart    ? 0
                    : t.anchor == heatmap::Anchor::kMiddle ? w / 2
                                                           : w;
  if (t.vertical) return {t.x, t.y - w + start, t.x + h, t.y + start};
  return {t.x - start, t.y, t.x - start + w, t.y + h};
}

// Every pair of texts that overlap, and every text outside the figure.
std::vector<std::string> text_collisions(const Scene& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.texts.size(); ++i) {
    const Box a = box_of(s.texts[i]);
    if (s.texts[i].text.empty()) continue;
    if (a.x0 < 0 || a.y0 < 0 || a.x1 > s.width || a.y1 > s.height) {
      out.push_back("'" + s.texts[i].text + "' leaves the figure");
    }
    for (size_t j = i + 1; j < s.texts.size(); ++j) {
      const Box b = box_of(s.texts[j]);
      if (s.texts[j].text.empty()) continue;
      if (a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1) {
        out.push_back("'" + s.texts[i].text + "' overlaps '" + s.texts[j].text + "'");
      }
    }
  }
  return out;
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

// --fit: a column is exactly 700 wide and at most 1000 tall, a slide within
// 1920 x 1080, and every token of a short sentence is labelled; a target
// beyond 16384 or beside --max-size is a usage error (exit 2).
TEST(HeatmapFit, TargetsBoundTheImageAndRefuseTheUnbounded) {
  const std::string stack = source_path("data/models/tiny-llama/attentions.npy");
  const std::string tokens = source_path("data/models/tiny-llama/tokens.json");
  for (const char* target : {"column", "slide", "900x600"}) {
    for (const char* layer : {"", "1"}) {
      std::vector<std::string> args = {"heatmap", stack, "--tokens", tokens, "--fit", target};
      if (*layer) args.insert(args.end(), {"--layer", layer});
      args.insert(args.end(), {"-o", "-"});
      auto r = run_attn(args);
      ASSERT_EQ(r.code, 0) << r.err;
      const Image im = decode(r.out);
      const std::string t = target;
      const int w = t == "column" ? 700 : t == "slide" ? 1920 : 900;
      const int h = t == "column" ? 1000 : t == "slide" ? 1080 : 600;
      if (t == "column") {
        EXPECT_EQ(im.w, w) << target << " " << layer;
      } else {
        EXPECT_LE(im.w, w) << target << " " << layer;
      }
      EXPECT_LE(im.h, h) << target << " " << layer;
    }
  }
  auto big = run_attn(
      {"run", "--example", "sweet", "--heatmap", "-", "-o", "/dev/null", "--fit", "100000x100000"});
  EXPECT_EQ(big.code, 2);
  EXPECT_EQ(big.err,
            "attn: error: --fit 100000x100000: the width must be from 256 to 16384 pixels\n");
  auto both = run_attn({"run", "--example", "sweet", "--heatmap", "-", "-o", "/dev/null", "--fit",
                        "slide", "--max-size", "900"});
  EXPECT_EQ(both.code, 2);
  EXPECT_EQ(both.err, "attn: error: give --fit TARGET or --max-size PX, not both\n");
  auto word = run_attn({"heatmap", stack, "--fit", "poster", "-o", "-"});
  EXPECT_EQ(word.code, 2);
  EXPECT_EQ(word.err,
            "attn: error: --fit: expected column, slide or WIDTHxHEIGHT in pixels (1200x800), got "
            "'poster'\n");
}

// A layer of 7 tokens in a column: every token labelled, the panels filling
// the width (the old --max-size 700 left half of it empty).
TEST(HeatmapFit, AColumnLabelsEveryTokenOfALayer) {
  const std::string svg = test::temp_dir() + "/layer1.svg";
  auto r = run_attn({"heatmap", source_path("data/models/tiny-llama/attentions.npy"), "--tokens",
                     source_path("data/models/tiny-llama/tokens.json"), "--layer", "1", "--fit",
                     "column", "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = read_text(svg);
  auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  // Each row of panels has all 7 row labels, the first row all 7 column labels.
  EXPECT_GT(count("class=\"row-label\""), 0);
  EXPECT_EQ(count("class=\"row-label\"") % 7, 0);
  EXPECT_GT(count("class=\"col-label\""), 0);
  EXPECT_EQ(count("class=\"col-label\"") % 7, 0);
  EXPECT_NE(text.find("width=\"700\""), std::string::npos);
}

TEST(HeatmapLimits, ManyHeadsThroughTheCli) {
  std::string j = "[";
  for (int i = 0; i < 262144; ++i) j += i ? ",[[0.5]]" : "[[0.5]]";
  const std::string f = write_temp("heads262144.json", j + "]");
  auto r = run_attn({"heatmap", f, "-o", test::temp_dir() + "/many.png"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: " + f +
                       ": the heatmap of 262145 panels needs 97697 × 53396 pixels, more than "
                       "--max-size 2048; draw fewer panels with --head or --batch, or raise "
                       "--max-size\n");
  auto one = run_attn({"heatmap", f, "--head", "262143", "-o", test::temp_dir() + "/one.png"});
  EXPECT_EQ(one.code, 0) << one.err;
}

TEST(HeatmapLimits, EmptyArraysAreNothingToDraw) {
  for (const auto& [name, text, what] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"e1.json", "[]", "(shape [0])"},
           {"e2.json", "[[]]", "(shape [1][0])"},
           {"e3.json", R"({"weights": []})", "(shape [0])"}}) {
    const std::string f = write_temp(name, text);
    const std::string png = test::temp_dir() + "/" + name + ".png";
    auto r = run_attn({"heatmap", f, "-o", png});
    EXPECT_EQ(r.code, 3) << text;
    const std::string place = name == "e3.json" ? f + ": weights" : f;
    EXPECT_EQ(r.err,
              "attn: error: " + place + ": nothing to draw: the array is empty " + what + "\n");
    EXPECT_FALSE(std::filesystem::exists(png));
    EXPECT_EQ(run_attn({"heatmap", f, "--show"}).code, 3);
  }
  // The library refuses too, whoever builds the data.
  HeatmapData d;
  d.rows = 0;
  d.cols = 3;
  EXPECT_EQ(test::error_of([&] { render_png(d, HeatmapOptions{}); }),
            "nothing to draw: the matrix is empty (0 rows, 3 columns)");
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

// --- Text, layout and numbers of figures for slides and papers ---

std::vector<const heatmap::TextItem*> texts_of(const Scene& s, const std::string& role) {
  std::vector<const heatmap::TextItem*> out;
  for (const heatmap::TextItem& t : s.texts) {
    if (t.role == role) out.push_back(&t);
  }
  return out;
}

HeatmapData labelled(int64_t n, int64_t heads = 1) {
  Values<double> v(static_cast<size_t>(heads * n * n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7) % 11) / 10.0;
  static std::vector<Tensor<double>> keep;  // the data outlives the figure
  keep.emplace_back(heads > 1 ? Shape{heads, n, n} : Shape{n, n}, std::move(v));
  HeatmapData d = heatmap_from_tensor(keep.back());
  for (int64_t i = 0; i < n; ++i) d.row_labels.push_back("tok" + std::to_string(i));
  d.col_labels = d.row_labels;
  return d;
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

TEST(HeatmapText, AFontFileDrawsWhatDejaVuLacksAndFallsBackForTheRest) {
  const std::string noto = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc";
  if (!std::filesystem::exists(noto)) GTEST_SKIP() << noto << " not installed (fonts-noto-cjk)";
  HeatmapOptions o;
  set_heatmap_flag(o, "--font", noto);
  Sweet s;
  s.d.row_labels = {"它", "喝", "Ġmilk", "甜"};  // Ġ is not in Noto Sans CJK: DejaVu draws it
  s.d.col_labels = s.d.row_labels;
  EXPECT_EQ(missing_glyph_warning(s.d, o), "");
  const std::string a = render_png(s.d, o), b = render_png(s.d, o);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, render_png(s.d, HeatmapOptions{}));
  EXPECT_NE(render_svg(s.d, o).find("font-family=\"Noto Sans CJK JP, sans-serif\""),
            std::string::npos);
  EXPECT_EQ(test::error_of([&] { set_heatmap_flag(o, "--font", source_path("README.md")); }),
            source_path("README.md") +
                ": not a TrueType or OpenType font (--font takes a .ttf, .otf or .ttc file)");
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

TEST(HeatmapLayout, EveryLabelIsShownUpTo64Tokens) {
  for (int64_t n : {49, 64}) {
    const HeatmapData d = labelled(n);
    const Scene s = heatmap::layout_figure(d, HeatmapOptions{});
    EXPECT_EQ(texts_of(s, "row-label").size(), static_cast<size_t>(n));
    EXPECT_EQ(texts_of(s, "col-label").size(), static_cast<size_t>(n));
    EXPECT_LE(std::max(s.width, s.height), 2048);
    EXPECT_EQ(text_collisions(s), std::vector<std::string>{}) << n;
  }
  // --labels-every and --cell-size as asked.
  HeatmapOptions o;
  set_heatmap_flag(o, "--labels-every", "7");
  set_heatmap_flag(o, "--cell-size", "10");
  const Scene s = heatmap::layout_figure(labelled(49), o);
  EXPECT_EQ(texts_of(s, "row-label").size(), 7u);
  EXPECT_EQ(panels(s)[0].cell_w, 10);
  set_heatmap_flag(o, "--cell-size", "200");
  EXPECT_EQ(test::error_of([&] { heatmap::layout_figure(labelled(49), o); }),
            "--cell-size 200 makes the heatmap 10097 × 9940 pixels, more than --max-size "
            "2048; choose smaller cells or a larger --max-size");
}

TEST(HeatmapLayout, GridsWrapToFitMaxSize) {
  // 17 heads and their mean in one row would be 18 panels wide.
  HeatmapData d = labelled(6, 17);
  d.head_axis = true;
  d.head_average = true;
  HeatmapOptions o;
  set_heatmap_flag(o, "--max-size", "1024");
  const Scene s = heatmap::layout_figure(d, o);
  EXPECT_LE(std::max(s.width, s.height), 1024);
  EXPECT_EQ(panels(s).size(), 18u);
  EXPECT_EQ(text_collisions(s), std::vector<std::string>{});
  // Through the program: the cross example's 18 panels in 512 px.
  const std::string png = test::temp_dir() + "/cross_shapes.png";
  const test::Run r =
      run_attn({"run", "--example", "cross_shapes", "--heatmap", png, "--max-size", "512", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  const Image im = decode(read_text(png));
  EXPECT_LE(std::max(im.w, im.h), 512);
  EXPECT_GT(im.h, 256);  // wrapped into rows, not a strip
}

TEST(HeatmapNumbers, ValuesFollowPrecisionAndCanBeLeftOut) {
  const Tensor<double> t({2, 2}, Values<double>{0.125, 0.875, 0.5, 0.5});
  const HeatmapData d = heatmap_from_tensor(t);
  auto values = [&](const HeatmapOptions& o) {
    std::vector<std::string> out;
    const heatmap::Scene scene = heatmap::layout_figure(d, o);  // texts_of points into it
    for (const auto* v : texts_of(scene, "value")) out.push_back(v->text);
    return out;
  };
  // Three decimals write these exactly: 0.125 is not shown as 0.12.
  EXPECT_EQ(values(HeatmapOptions{}),
            (std::vector<std::string>{"0.125", "0.875", "0.500", "0.500"}));
  HeatmapOptions o;
  set_heatmap_flag(o, "--precision", "1");
  EXPECT_EQ(values(o), (std::vector<std::string>{"0.1", "0.9", "0.5", "0.5"}));
  set_heatmap_flag(o, "--annotate", "never");
  EXPECT_EQ(values(o), std::vector<std::string>{});
  // always: even in 4-pixel cells.
  HeatmapOptions tiny;
  set_heatmap_flag(tiny, "--cell-size", "4");
  EXPECT_EQ(values(tiny), std::vector<std::string>{});
  set_heatmap_flag(tiny, "--annotate", "always");
  EXPECT_EQ(values(tiny).size(), 4u);
}

TEST(HeatmapCli, AJsonResultRedrawsTheRunsFigureByteForByte) {
  // Title, settings line, labels, the axes of the weights and the masked
  // cells travel in the result; the figure drawn from it is the run's.
  for (const std::string example : {"causal", "multihead", "key_padding", "d2l_valid_lens"}) {
    const std::string json = test::temp_dir() + "/" + example + ".json";
    const std::string a = test::temp_dir() + "/" + example + "_run.png";
    const std::string b = test::temp_dir() + "/" + example + "_redrawn.png";
    ASSERT_EQ(run_attn({"run", "--example", example, "-f", "json", "-w", "-o", json, "--heatmap", a,
                        "-q"})
                  .code,
              0);
    const test::Run r = run_attn({"heatmap", json, "-o", b});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_text(a), read_text(b)) << example;
  }
  // --expect reads the same file and compares only its numbers.
  const std::string json = test::temp_dir() + "/causal.json";
  EXPECT_EQ(
      run_attn({"run", "--example", "causal", "--expect", json, "-q", "-o", "/dev/null"}).code, 0);
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

namespace attn {
namespace {

// matplotlib's names: capitals and "_r" for the reversed map.
TEST(HeatmapOptions, MatplotlibColormapNames) {
  HeatmapOptions o;
  set_heatmap_flag(o, "--colormap", "Blues_r");
  ASSERT_TRUE(o.colormap.has_value());
  EXPECT_EQ(*o.colormap, Colormap::kBluesR);
  set_heatmap_flag(o, "--colormap", "RdBu");
  EXPECT_EQ(*o.colormap, Colormap::kRdBu);
  EXPECT_TRUE(diverging(Colormap::kRdBuR));
  for (const auto& [plain, reversed] : {std::pair{Colormap::kViridis, Colormap::kViridisR},
                                        {Colormap::kMagma, Colormap::kMagmaR},
                                        {Colormap::kGray, Colormap::kGrayR},
                                        {Colormap::kBlues, Colormap::kBluesR},
                                        {Colormap::kRdBu, Colormap::kRdBuR}}) {
    EXPECT_EQ(colormap_color(reversed, 0.0), colormap_color(plain, 1.0)) << name(reversed);
    EXPECT_EQ(colormap_color(reversed, 1.0), colormap_color(plain, 0.0)) << name(reversed);
  }
}

}  // namespace
}  // namespace attn
