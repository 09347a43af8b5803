// Heatmaps: colormaps, panels (normalisation, downsampling), the laid-out
// figure decoded back from PNG with stb_image (an independent decoder),
// SVG well-formedness and content, the terminal preview, and the CLI.
#include "attn/heatmap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attn/heatmap_command.h"
#include "heatmap_panels.h"
#include "heatmap_scene.h"
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
  std::vector<uint8_t> rgb;
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

// The blog example's weights (CONTRACT §6): rows cat, milk, it, sweet.
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
  const Tensor<double> t({2, 2}, std::vector<double>{1, 4, -2, 1});
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
  const Tensor<double> t({3, 3}, std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  const std::vector<uint8_t> masked = {0, 1, 1, 0, 0, 1, 0, 0, 0};
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
  const Tensor<double> t({2, 1, 2}, std::vector<double>{0.5, 0.5, 1, 0});
  const std::vector<uint8_t> masked = {0, 0, 0, 1};
  HeatmapData d = heatmap_from_tensor(t);
  d.masked = masked.data();
  HeatmapOptions o;
  const heatmap::PanelPlan plan = heatmap::plan_panels(d, o);
  ASSERT_EQ(plan.refs.size(), 3u);
  EXPECT_EQ(plan.refs[2].caption, "mean of heads");
  const heatmap::Panels p = heatmap::build_panels(d, o, plan, 1);
  EXPECT_EQ(p.panels[2].values, (std::vector<double>{0.75, 0.25}));
}

TEST(HeatmapPng, SweetFigureHasTheLaidOutSizeAndTheTopColourAtTheMaximum) {
  Sweet s;
  const Scene scene = heatmap::layout_figure(s.d, HeatmapOptions{});
  const Image im = decode(render_png(s.d, HeatmapOptions{}));
  EXPECT_EQ(im.w, scene.width);
  EXPECT_EQ(im.h, scene.height);
  EXPECT_LE(std::max(im.w, im.h), 2048);
  const std::vector<CellGrid> g = panels(scene);
  ASSERT_EQ(g.size(), 1u);
  ASSERT_EQ(g[0].rows, 4);
  // The maximum, 0.853 (sweet -> sweet), has viridis' top colour; a corner
  // pixel of the cell, away from the value written in it.
  const int c = g[0].cell_w;
  EXPECT_TRUE(im.at(g[0].x + 3 * c + 2, g[0].y + 3 * c + 2) ==
              colormap_color(Colormap::kViridis, 1));
  // The range starts at 0 for weights: 0.25 sits at 0.25 / 0.853 of it.
  const double top = s.r.weights->values()[15];
  EXPECT_TRUE(im.at(g[0].x + 2, g[0].y + 2) == colormap_color(Colormap::kViridis, 0.25 / top));
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

// Well-formedness: tags nest and close, attributes are quoted, and the only
// entities are the five of XML.
bool well_formed(const std::string& x, std::string* why) {
  std::vector<std::string> open;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == '&') {
      const size_t semi = x.find(';', i);
      const std::string e = x.substr(i, semi == std::string::npos ? 0 : semi - i + 1);
      if (e != "&amp;" && e != "&lt;" && e != "&gt;" && e != "&quot;" && e != "&apos;") {
        *why = "bad entity at " + std::to_string(i);
        return false;
      }
    }
    if (x[i] != '<') continue;
    const size_t end = x.find('>', i);
    if (end == std::string::npos) return *why = "unclosed tag", false;
    const std::string tag = x.substr(i + 1, end - i - 1);
    i = end;
    if (tag[0] == '?') continue;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return *why = "mismatched </" + tag, false;
      open.pop_back();
      continue;
    }
    size_t quotes = 0;
    for (char c : tag) quotes += c == '"';
    if (quotes % 2) return *why = "unbalanced quotes in <" + tag, false;
    if (tag.back() != '/') open.push_back(tag.substr(0, tag.find(' ')));
  }
  if (!open.empty()) return *why = "unclosed <" + open.back(), false;
  return true;
}

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
  EXPECT_TRUE(well_formed(svg, &why)) << why;
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
  EXPECT_TRUE(well_formed(svg, &why)) << why;
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
  const Tensor<double> t({2, 2}, std::vector<double>{0, 1, 0.5, 0.25});
  const std::string got = render_terminal(two_by_two(t), HeatmapOptions{}, TerminalStyle{});
  EXPECT_EQ(got,
            "two\n"
            "      a  b\n"
            "cat      @@@\n"
            "sweet +++:::\n"
            "value: 0 [ .:-=+*#%@] 1\n");
}

TEST(HeatmapTerminal, TwoByTwoInTrueColour) {
  const Tensor<double> t({2, 2}, std::vector<double>{0, 1, 0.5, 0.25});
  const std::vector<uint8_t> masked = {0, 0, 0, 1};
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
  EXPECT_EQ(test::error_of([&] { set_heatmap_flag(o, "--colormap", "jet"); }),
            "--colormap: 'jet' is not one of viridis, magma, gray, blues, rdbu");
  EXPECT_EQ(test::error_of([&] { set_heatmap_flag(o, "--normalize", "rows"); }),
            "--normalize: 'rows' is not one of none, row, col; did you mean 'row'?");
  EXPECT_EQ(test::error_of([&] { set_heatmap_flag(o, "--max-size", "20"); }),
            "--max-size: expected an integer from 256 to 16384, got '20'");
  set_heatmap_flag(o, "--vmax", "1");
  EXPECT_EQ(test::error_of([&] { set_heatmap_flag(o, "--vmin", "2"); }),
            "--vmin 2 must be below --vmax 1");
  EXPECT_EQ(test::error_of([] { parse_heatmap_stage_flag("weight"); }),
            "--of: 'weight' is not one of weights, scores, output; did you mean 'weights'?");
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
            "attn: error: w.jpg: a heatmap is written as .png or .svg (chosen by the file name)\n");
  r = run_attn({"run", source_path("data/examples/sweet.json"), "--colormap", "magma"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: --colormap needs --heatmap FILE or --show\n");
  r = run_attn({"heatmap", source_path("data/csv/causal_mask.csv")});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "attn: error: heatmap: nothing to do; give -o FILE.png (or .svg) or --show\n");
}

}  // namespace
}  // namespace attn
