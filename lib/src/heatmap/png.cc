// PNG files through stb_image_write. Its zlib encoder and filter choice
// depend on the pixels alone (no time stamps, no text chunks), so equal
// figures give byte-identical files.
#include <limits>

#include "attn/error.h"
#include "attn/heatmap.h"
#include "heatmap/raster.h"
#include "heatmap/scene.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

namespace attn {

namespace heatmap {

namespace {

void append(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data),
                                             static_cast<size_t>(size));
}

}  // namespace

std::string encode_png(const Canvas& c) {
  std::string out;
  if (!stbi_write_png_to_func(append, &out, c.width, c.height, 3, c.rgb.data(), c.width * 3)) {
    throw_internal("png encoding failed for a " + std::to_string(c.width) + "x" +
                   std::to_string(c.height) + " image");
  }
  return out;
}

}  // namespace heatmap

std::string render_png(const HeatmapData& d, const HeatmapOptions& o) {
  return heatmap::encode_png(heatmap::rasterize(heatmap::layout_figure(d, o)));
}

}  // namespace attn
