// Figures at the size of real models, drawn by the program: the model view
// (layers as rows, heads as columns, named once on the margins), a stack's
// causal zeros drawn as masked, and a checkpoint's stack from --layer all.
// The head summary and the tokens' style through the library:
// model_view_test.cc.
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
#include "commands/heatmap_flags.h"
#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

using test::read_text;
using test::run_attn;
using test::temp_dir;
namespace fs = std::filesystem;
using test::model;

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// A causal stack [layers][1][heads][t][t]: every row a softmax over the
// keys at or before the query, exact zeros right of the diagonal.
std::string causal_stack(int64_t layers, int64_t heads, int64_t t) {
  Tensor<double> s({layers, 1, heads, t, t}, 0.0);
  for (int64_t p = 0; p < layers * heads; ++p) {
    for (int64_t i = 0; i < t; ++i) {
      double sum = 0;
      for (int64_t j = 0; j <= i; ++j) sum += std::exp(std::sin(0.7 * p + 1.3 * i + 0.4 * j));
      for (int64_t j = 0; j <= i; ++j) {
        s[(p * t + i) * t + j] = std::exp(std::sin(0.7 * p + 1.3 * i + 0.4 * j)) / sum;
      }
    }
  }
  const std::string path = temp_dir() + "/stack_" + std::to_string(layers) + "x" +
                           std::to_string(heads) + "x" + std::to_string(t) + ".npy";
  std::ofstream(path, std::ios::binary) << format_npy(s, DType::kF32);
  return path;
}

std::string tokens_file(int64_t t) {
  const std::string path = temp_dir() + "/tokens_" + std::to_string(t) + ".txt";
  std::ofstream out(path);
  const char* words[] = {"▁The", "▁cat", "▁sat", "▁on", "▁the", "▁mat"};
  for (int64_t i = 0; i < t; ++i) out << words[i % 6] << "\n";
  return path;
}

TEST(ModelGrid, NamesLayersAndHeadsOnceOnTheMargins) {
  const std::string svg = temp_dir() + "/mv12.svg";
  const test::Run r =
      run_attn({"heatmap", causal_stack(12, 12, 24), "--tokens", tokens_file(24), "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string s = read_text(svg);
  // Each head's and layer's name once, bold on the margins; no caption per panel.
  for (const char* name : {">H0<", ">H11<", ">mean<", ">L0<", ">L11<"}) {
    EXPECT_EQ(count(s, name), 1u) << name;
  }
  EXPECT_EQ(count(s, ">L3 H5<"), 0u);
  EXPECT_EQ(count(s, ">queries<"), 0u);  // said once, in the note under the grid
  EXPECT_NE(s.find("each panel: queries (rows) × keys (columns)"), std::string::npos);
  // 24 tokens in panels of a 2048 px figure do not fit: none on the axes.
  EXPECT_EQ(count(s, ">cat"), 0u);
  // The causal zeros are hatched, and the figure says why.
  EXPECT_NE(s.find("causal: the zeros right of the diagonal drawn as masked"), std::string::npos);
  EXPECT_NE(s.find(">masked<"), std::string::npos);
}

TEST(ModelGrid, TokensLabelTheFirstPanelsWhenTheyFitAndTheSizeHolds) {
  const std::string small = temp_dir() + "/mv2.svg";
  test::Run r =
      run_attn({"heatmap", causal_stack(2, 3, 6), "--tokens", tokens_file(6), "-o", small});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string s = read_text(small);
  // Beside each layer's first panel (2) and above each head's (3 + mean).
  EXPECT_EQ(count(s, ">cat</text>"), 2u + 4u) << s.substr(0, 2000);
  // Slide and column sizes: the PNG stays within --max-size.
  for (const char* size : {"1920", "700"}) {
    const std::string png = temp_dir() + "/mv_" + size + ".png";
    r = run_attn({"heatmap", causal_stack(12, 12, 24), "--max-size", size, "-o", png});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string bytes = read_text(png);
    ASSERT_GT(bytes.size(), 24u);
    auto be32 = [&](size_t at) {
      return (static_cast<unsigned char>(bytes[at]) << 24) |
             (static_cast<unsigned char>(bytes[at + 1]) << 16) |
             (static_cast<unsigned char>(bytes[at + 2]) << 8) |
             static_cast<unsigned char>(bytes[at + 3]);
    };
    EXPECT_LE(be32(16), static_cast<unsigned>(std::stoi(size)));
    EXPECT_LE(be32(20), static_cast<unsigned>(std::stoi(size)));
  }
}

// 64 layers × 64 heads: the figure stays within --max-size, the names of
// the heads are thinned to every 5th (and the mean), every layer named.
TEST(ModelGrid, SixtyFourBySixtyFourStaysWithinTheSize) {
  const std::string svg = temp_dir() + "/mv64.svg";
  const test::Run r = run_attn({"heatmap", causal_stack(64, 64, 8), "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string s = read_text(svg);
  const size_t w = s.find("width=\""), h = s.find("height=\"");
  ASSERT_NE(w, std::string::npos);
  EXPECT_LE(std::stoi(s.substr(w + 7)), 2048);
  EXPECT_LE(std::stoi(s.substr(h + 8)), 2048);
  EXPECT_EQ(count(s, ">H5<"), 1u);
  EXPECT_EQ(count(s, ">H6<"), 0u);
  EXPECT_EQ(count(s, ">mean<"), 1u);
  EXPECT_EQ(count(s, ">L63<"), 1u);
}

// --layers and --heads keep some rows and columns, named as the stack
// numbers them; bad lists are refused in one line.
TEST(ModelGrid, LayersAndHeadsPickRowsAndColumns) {
  const std::string stack = causal_stack(12, 12, 8), svg = temp_dir() + "/pick.svg";
  test::Run r = run_attn({"heatmap", stack, "--layers", "0-2,11", "--heads", "0,5,7", "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string s = read_text(svg);
  for (const char* name : {">L0<", ">L2<", ">L11<", ">H0<", ">H5<", ">H7<", ">mean<"}) {
    EXPECT_EQ(count(s, name), 1u) << name;
  }
  EXPECT_EQ(count(s, ">L3<"), 0u);
  EXPECT_NE(s.find("layers 0,1,2,11, heads 0,5,7"), std::string::npos);
  EXPECT_NE(s.find("L11 H7: "), std::string::npos);  // a cell's tooltip names the real ones
  EXPECT_NE(s.find("mean: of the heads drawn"), std::string::npos);
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--layers", "3-1"},
                                              {"--layers", "12"},
                                              {"--heads", "1,1"},
                                              {"--heads", "x"},
                                              {"--layers", "1", "--layer", "2"}}) {
    std::vector<std::string> args = {"heatmap", stack, "-o", svg};
    args.insert(args.end(), bad.begin(), bad.end());
    r = run_attn(args);
    EXPECT_EQ(r.code, 2) << bad[0] << " " << bad[1];
    EXPECT_NE(r.err.find(bad[0]), std::string::npos) << r.err;
  }
}

// NaN in a stack: drawn as such and named in the legend, in the model view
// and in the head summary; not an error.
TEST(ModelGrid, NanInAStackIsDrawnAsNan) {
  Tensor<double> s({2, 1, 2, 3, 3}, 1 / 3.0);
  s[4] = std::nan("");
  const std::string path = temp_dir() + "/nan.npy", svg = temp_dir() + "/nan.svg";
  std::ofstream(path, std::ios::binary) << format_npy(s, DType::kF64);
  test::Run r = run_attn({"heatmap", path, "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(read_text(svg).find(">nan<"), std::string::npos);
  r = run_attn({"heatmap", path, "--summary", "entropy", "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(read_text(svg).find(">nan<"), std::string::npos);
}

TEST(ModelGrid, AStackWithoutExactZerosIsNotMasked) {
  Tensor<double> s({2, 1, 2, 4, 4}, 0.25);
  s[3] = 0.0;  // one zero right of the diagonal is not a causal mask
  const std::string path = temp_dir() + "/uniform.npy", svg = temp_dir() + "/uniform.svg";
  std::ofstream(path, std::ios::binary) << format_npy(s, DType::kF64);
  const test::Run r = run_attn({"heatmap", path, "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_text(svg).find("masked"), std::string::npos);
}

TEST(HeadSummary, DrawnFromAStackFileAndRefusedForAMatrix) {
  const std::string png = temp_dir() + "/summary.png";
  const std::string stack = causal_stack(4, 6, 8);
  test::Run r = run_attn({"heatmap", stack, "--summary", "entropy", "-o", png});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string svg = temp_dir() + "/summary.svg";
  r = run_attn({"heatmap", stack, "--summary", "previous", "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string s = read_text(svg);
  EXPECT_NE(s.find("head summary: weight on the previous token"), std::string::npos);
  EXPECT_NE(s.find("layer 3, head 5: "), std::string::npos);  // a cell's tooltip
  r = run_attn({"heatmap", stack, "--summary", "first", "--ignore-first", "-o", svg});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--ignore-first"), std::string::npos) << r.err;
  r = run_attn({"heatmap", stack, "--summary", "prev", "-o", svg});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--summary: 'prev'"), std::string::npos) << r.err;
  const std::string matrix = temp_dir() + "/m.npy";
  std::ofstream(matrix, std::ios::binary) << format_npy(Tensor<double>({2, 2}, 0.5), DType::kF64);
  r = run_attn({"heatmap", matrix, "--summary", "first", "-o", svg});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("m.npy has shape [2][2], not a stack of attention weights"),
            std::string::npos)
      << r.err;
}

// The mean of the heads is drawn for weights (average_attn_weights), not
// for scores: a mean of logits before the softmax is not a map.
TEST(ModelGrid, NoMeanOfHeadsForScores) {
  const std::string w = test::temp_dir() + "/mh_weights.svg",
                    s = test::temp_dir() + "/mh_scores.svg";
  test::Run r =
      test::run_attn({"run", "--example", "multihead", "-o", "/dev/null", "--heatmap", w});
  ASSERT_EQ(r.code, 0) << r.err;
  r = test::run_attn(
      {"run", "--example", "multihead", "-o", "/dev/null", "--heatmap", s, "--of", "scores"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(test::read_text(w).find("mean of heads"), std::string::npos);
  EXPECT_EQ(test::read_text(s).find("mean of heads"), std::string::npos);
  // Asked for with --average-heads: one panel, named as the mean.
  r = test::run_attn({"run", "--example", "multihead", "-o", "/dev/null", "--heatmap", s, "--of",
                      "scores", "--average-heads"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(test::read_text(s).find("scores (mean of 4 heads)"), std::string::npos);
}

// --vmax qP and --ignore-first choose the colour range from the values
// drawn, and the colour bar says so; bad percentiles are refused.
TEST(ColorRange, PercentileAndFirstColumn) {
  const std::string stack = causal_stack(1, 1, 32), svg = test::temp_dir() + "/q.svg";
  test::Run r = test::run_attn({"heatmap", stack, "--vmax", "q90", "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(test::read_text(svg).find("top at the 90th percentile"), std::string::npos);
  r = test::run_attn({"heatmap", stack, "--ignore-first", "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(test::read_text(svg).find("range without the first column"), std::string::npos);
  for (const char* bad : {"q0", "q100.5", "q-1", "qx"}) {
    r = test::run_attn({"heatmap", stack, "--vmax", bad, "-o", svg});
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find("--vmax: "), std::string::npos) << r.err;
  }
  // Log and power scales: the colour bar says which; bad ones are refused.
  r = test::run_attn({"heatmap", stack, "--color-scale", "log", "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(test::read_text(svg).find("weights (log scale)"), std::string::npos);
  r = test::run_attn({"heatmap", stack, "--color-scale", "power:0.5", "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(test::read_text(svg).find("(power scale, gamma 0.5)"), std::string::npos);
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--color-scale", "power:0"},
                                              {"--color-scale", "power:-1"},
                                              {"--color-scale", "sqrt"},
                                              {"--color-scale", "log", "--vmin", "0"}}) {
    std::vector<std::string> args = {"heatmap", stack, "-o", svg};
    args.insert(args.end(), bad.begin(), bad.end());
    r = test::run_attn(args);
    EXPECT_EQ(r.code, 2) << bad[1];
    EXPECT_NE(r.err.find("--color-scale"), std::string::npos) << r.err;
  }
  ColorNorm log{0.001, 1, ColorScale::kLog, 1};
  EXPECT_DOUBLE_EQ(log.fraction(1), 1.0);
  EXPECT_NEAR(log.fraction(0.01), 1 / 3.0, 1e-15);
  EXPECT_LT(log.fraction(0), 0.0);  // the bottom colour
  EXPECT_TRUE(std::isnan(log.fraction(std::nan(""))));
  ColorNorm power{0, 4, ColorScale::kPower, 0.5};
  EXPECT_DOUBLE_EQ(power.fraction(1), 0.5);  // (1/4)^0.5
  // The percentile is NumPy's: of 0, 1, ..., 100 the 90th is 90.
  HeatmapOptions o;
  set_heatmap_flag(o, "--vmax", "q90");
  std::vector<double> v(101);
  for (int i = 0; i <= 100; ++i) v[static_cast<size_t>(i)] = i;
  HeatmapData d;
  d.values = v.data();
  d.rows = 1;
  d.cols = 101;
  const std::string drawn = render_svg(d, o);
  EXPECT_NE(drawn.find(">90<"), std::string::npos);  // the range's top end
}

// The gallery of docs/heatmaps.md: the script runs, and every figure is
// within the size it is designed for.
TEST(Gallery, TheScriptDrawsEveryFigureWithinItsSize) {
  if (test::sh("/usr/bin/python3 -c 'import numpy' 2>/dev/null").code != 0) {
    GTEST_SKIP() << "/usr/bin/python3 lacks NumPy (apt-get install python3-numpy): "
                    "scripts/make_gallery.sh not run";
  }
  const std::string out = test::temp_dir() + "/gallery";
  const test::Shell r =
      test::sh("bash " + test::quote(test::source_path("scripts/make_gallery.sh")) + " " +
               test::quote(ATTN_BINARY) + " " + test::quote(out));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto png_size = [](const std::string& bytes, size_t at) {
    return (static_cast<unsigned char>(bytes[at]) << 24) |
           (static_cast<unsigned char>(bytes[at + 1]) << 16) |
           (static_cast<unsigned char>(bytes[at + 2]) << 8) |
           static_cast<unsigned char>(bytes[at + 3]);
  };
  // --fit slide: within 1920 x 1080; --fit column: 700 wide, at most 1000 tall.
  for (const std::string target : {"slide", "column"}) {
    for (const std::string stem :
         {"model_view_12x12_", "model_view_24x14_", "layer3_", "layer3_head5_", "model_view_32x32_",
          "summary_previous_32x32_", "summary_entropy_32x32_", "causal_1024_"}) {
      const std::string name = stem + target + ".png";
      const std::string bytes = read_text(out + "/" + name);
      ASSERT_GT(bytes.size(), 24u) << name;
      const unsigned w = png_size(bytes, 16), h = png_size(bytes, 20);
      if (target == "slide") {
        EXPECT_LE(w, 1920u) << name;
        EXPECT_LE(h, 1080u) << name;
      } else {
        EXPECT_EQ(w, 700u) << name;
        EXPECT_LE(h, 1000u) << name;
      }
    }
  }
  // A model of 24 layers x 14 heads is landscape on a slide and fills it
  // (its height, here: the panels are square).
  const std::string wide = read_text(out + "/model_view_24x14_slide.png");
  EXPECT_GT(png_size(wide, 16), png_size(wide, 20));
  EXPECT_GT(png_size(wide, 20), 1000u);
  std::string why;
  EXPECT_TRUE(test::well_formed_xml(read_text(out + "/model_view_24x14_slide.svg"), &why)) << why;
  for (const char* name : {"model_view_32x32.svg", "summary_entropy_32x32.svg"}) {
    const std::string svg = read_text(out + "/" + name);
    std::string why;
    EXPECT_TRUE(test::well_formed_xml(svg, &why)) << name << ": " << why;
    EXPECT_LT(svg.size(), 4u << 20) << name;  // panels embedded as images, not rectangles
  }
  EXPECT_NE(read_text(out + "/summary_previous_32x32.html").find("attn-patterns"),
            std::string::npos);
}

// --layer all --heatmap FILE draws the model view of the stack it computed,
// with the tokens as labels, as attn heatmap draws the stack's file.
TEST(ModelView, LayerAllDrawsEveryLayersHeads) {
  const std::string dir = model("tiny-llama");
  const std::string svg = test::temp_dir() + "/model-view.svg";
  const std::string npy = test::temp_dir() + "/model-view.npy";
  const auto r = run_attn({"run", "--checkpoint", dir, "--text", "The cat sat on the mat",
                           "--layer", "all", "--heatmap", svg, "-o", npy});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const std::string drawn = read_text(svg);
  std::string why;
  EXPECT_TRUE(test::well_formed_xml(drawn, &why)) << why;
  // Layers and heads named on the margins, the tokens as read (the
  // word's space left out), each cell's tooltip naming its panel.
  for (const char* panel :
       {">L0<", ">L1<", ">H3<", ">mean<", ">cat<", "L1 H3: ", "&apos;cat&apos;"}) {
    EXPECT_NE(drawn.find(panel), std::string::npos) << panel;
  }
  // The cells are the stack's, as attn heatmap draws them from its file.
  const std::string again = test::temp_dir() + "/model-view-2.svg";
  const auto h =
      run_attn({"heatmap", npy, "-o", again, "--labels", "<s>,▁The,▁cat,▁sat,▁on,▁the,▁mat"});
  ASSERT_EQ(h.code, 0) << h.err;
  auto cells = [](const std::string& svg) {
    std::vector<std::string> titles;
    for (size_t at = svg.find("<title>L"); at != std::string::npos;
         at = svg.find("<title>L", at + 1)) {
      // "L1 H3: query 2 '...', key 1 '...': 0.25": the panel and the value.
      const std::string t = svg.substr(at, svg.find("</title>", at) - at);
      titles.push_back(t.substr(0, t.find(':')) + t.substr(t.rfind(':')));
    }
    return titles;
  };
  const std::vector<std::string> mine = cells(drawn);
  EXPECT_EQ(mine.size(), 2u * 5u * 49u);
  EXPECT_TRUE(mine == cells(read_text(again)));
  // A figure alone prints nothing; --of other than weights is one layer's.
  const auto only = run_attn({"run", "--checkpoint", dir, "--ids", "1,2,3", "--layer", "all",
                              "--heatmap", test::temp_dir() + "/only.png"});
  EXPECT_EQ(only.code, 0) << only.err;
  EXPECT_EQ(only.out, "");
  const auto scores = run_attn({"run", "--checkpoint", dir, "--ids", "1,2,3", "--layer", "all",
                                "--heatmap", test::temp_dir() + "/s.png", "--of", "scores"});
  EXPECT_EQ(scores.code, 2);
  EXPECT_EQ(scores.err,
            "attn: error: --layer all keeps every layer's weights only; --of scores goes with "
            "one layer (--layer N)\n");
}

// -o FILE.npy with --layer all is written while the stack grows (a layer
// at a time, on a thread of its own) and renamed over FILE at the end with
// the other outputs: the same bytes as the stack written whole
// (--weights-out), and nothing replaced, nothing left behind, when another
// output fails after the layers were computed.
TEST(ModelView, TheStackIsWrittenWhileItGrowsAllOrNone) {
  const std::string dir = test::temp_dir() + "/streamed_stack";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string m = model("tiny-llama");
  const std::string a = dir + "/a.npy", b = dir + "/b.npy";
  for (const char* dtype : {"f64", "f32"}) {
    const auto r = run_attn({"run", "--checkpoint", m, "--text", "The cat sat", "--layer", "all",
                             "--dtype", dtype, "-o", a, "--weights-out", b});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_text(a), read_text(b)) << dtype;
  }
  auto leftovers = [&] {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      n += e.path().filename().string().rfind(".attn-", 0) == 0;
    }
    return n;
  };
  EXPECT_EQ(leftovers(), 0);
  // The figure cannot be written: the stack's file stays as it was.
  const std::string full = dir + "/full.svg";
  fs::create_symlink("/dev/full", full);
  std::ofstream(a, std::ios::trunc) << "old";
  const auto f = run_attn({"run", "--checkpoint", m, "--text", "The cat sat", "--layer", "all",
                           "-o", a, "--heatmap", full});
  EXPECT_EQ(f.code, 4) << f.err;
  EXPECT_EQ(read_text(a), "old");
  EXPECT_EQ(leftovers(), 0);
}

}  // namespace
}  // namespace attn
