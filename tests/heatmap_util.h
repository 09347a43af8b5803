// Helpers of the heatmap tests, shared by the library's (heatmap_test.cc)
// and the program's (heatmap_cli_test.cc): PNGs decoded back with
// stb_image (an independent decoder), the blog example's figure, and the
// texts and panels of a laid-out scene.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attn/heatmap.h"
#include "heatmap/font.h"
#include "heatmap/scene.h"
#include "test_util.h"

namespace attn::test {

using heatmap::CellGrid;
using heatmap::Scene;

struct Image {
  int w = 0, h = 0;
  Values<uint8_t> rgb;
  Rgb at(int x, int y) const {
    const size_t i = (static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

// A PNG decoded to RGB (a failure to decode fails the test).
Image decode(const std::string& png);

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

// The grids that draw matrices (the legend swatches are 1x1 grids).
std::vector<CellGrid> panels(const Scene& s);

int occurrences(const std::string& s, const std::string& what);

// The box a text item covers, in pixels (see TextItem: horizontal text has
// its capitals in [y, y + 7·scale); vertical text reads upwards from its
// anchor along y, its capitals' top edge at x).
struct Box {
  int x0, y0, x1, y1;
};

Box box_of(const heatmap::TextItem& t);

// Every pair of texts that overlap, and every text outside the figure.
std::vector<std::string> text_collisions(const Scene& s);

std::vector<const heatmap::TextItem*> texts_of(const Scene& s, const std::string& role);

// An n x n figure (of `heads` heads) labelled tok0, tok1, ...
HeatmapData labelled(int64_t n, int64_t heads = 1);

}  // namespace attn::test
