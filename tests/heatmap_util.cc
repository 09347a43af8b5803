// The shared heatmap helpers (heatmap_util.h), and stb_image compiled once
// for every test program.
#include "heatmap_util.h"

#include <string>
#include <utility>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

namespace attn::test {

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

std::vector<CellGrid> panels(const Scene& s) {
  std::vector<CellGrid> out;
  for (const CellGrid& g : s.grids) {
    if (!g.legend) out.push_back(g);
  }
  return out;
}

int occurrences(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

Box box_of(const heatmap::TextItem& t) {
  const int w = heatmap::text_extent(t.text, t.scale), h = heatmap::kCapHeight * t.scale;
  const int start = t.anchor == heatmap::Anchor::kStart    ? 0
                    : t.anchor == heatmap::Anchor::kMiddle ? w / 2
                                                           : w;
  if (t.vertical) return {t.x, t.y - w + start, t.x + h, t.y + start};
  return {t.x - start, t.y, t.x - start + w, t.y + h};
}

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

std::vector<const heatmap::TextItem*> texts_of(const Scene& s, const std::string& role) {
  std::vector<const heatmap::TextItem*> out;
  for (const heatmap::TextItem& t : s.texts) {
    if (t.role == role) out.push_back(&t);
  }
  return out;
}

HeatmapData labelled(int64_t n, int64_t heads) {
  Values<double> v(static_cast<size_t>(heads * n * n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7) % 11) / 10.0;
  static std::vector<Tensor<double>> keep;  // the data outlives the figure
  keep.emplace_back(heads > 1 ? Shape{heads, n, n} : Shape{n, n}, std::move(v));
  HeatmapData d = heatmap_from_tensor(keep.back());
  for (int64_t i = 0; i < n; ++i) d.row_labels.push_back("tok" + std::to_string(i));
  d.col_labels = d.row_labels;
  return d;
}

}  // namespace attn::test
