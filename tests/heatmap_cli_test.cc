// Heatmaps through the program and its flags: --heatmap, attn heatmap,
// --show, --fit, the flags' values and mistakes (commands/heatmap_flags.h),
// fonts, and a JSON result that redraws its run's figure byte for byte.
// The figures as the library draws them: heatmap_test.cc.
#include "attn/heatmap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "commands/heatmap_command.h"
#include "commands/heatmap_flags.h"
#include "heatmap/font.h"
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
using test::run_attn;
using test::source_path;
using test::Sweet;
using test::text_collisions;
using test::texts_of;
using test::write_temp;

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
