#include "heatmap/color.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace attn::heatmap {

namespace {

struct Stop {
  int at;  // position in the 256-entry table
  Rgb c;
};

// viridis and magma (Smith & van der Walt, CC0), sampled every 8th entry of
// matplotlib's 256-entry tables and rounded to bytes; linear interpolation
// between the stops stays within 2/255 of the originals.
constexpr std::array<Rgb, 33> kViridis = {{
    {68, 1, 84},    {71, 13, 96},   {72, 24, 106},  {72, 35, 116},  {71, 45, 123},  {69, 55, 129},
    {66, 64, 134},  {62, 73, 137},  {59, 82, 139},  {55, 91, 141},  {51, 99, 141},  {47, 107, 142},
    {44, 114, 142}, {41, 122, 142}, {38, 130, 142}, {35, 137, 142}, {33, 145, 140}, {31, 152, 139},
    {31, 160, 136}, {34, 167, 133}, {40, 174, 128}, {50, 182, 122}, {63, 188, 115}, {78, 195, 107},
    {94, 201, 98},  {112, 207, 87}, {132, 212, 75}, {152, 216, 62}, {173, 220, 48}, {194, 223, 35},
    {216, 226, 25}, {236, 229, 27}, {253, 231, 37},
}};

constexpr std::array<Rgb, 33> kMagma = {{
    {0, 0, 4},       {3, 3, 18},      {10, 8, 34},     {19, 13, 52},    {29, 17, 71},
    {41, 17, 90},    {54, 16, 107},   {68, 15, 118},   {81, 18, 124},   {93, 23, 127},
    {106, 28, 129},  {118, 33, 129},  {131, 38, 129},  {144, 42, 129},  {156, 46, 127},
    {170, 51, 125},  {183, 55, 121},  {196, 60, 117},  {208, 65, 111},  {220, 72, 105},
    {231, 82, 99},   {239, 93, 94},   {245, 107, 92},  {249, 121, 93},  {252, 137, 97},
    {253, 152, 105}, {254, 167, 114}, {254, 182, 124}, {254, 196, 136}, {254, 211, 149},
    {253, 226, 163}, {252, 240, 178}, {252, 253, 191},
}};

// ColorBrewer Blues (9 classes), light to dark.
constexpr std::array<Rgb, 9> kBlues = {{
    {247, 251, 255},
    {222, 235, 247},
    {198, 219, 239},
    {158, 202, 225},
    {107, 174, 214},
    {66, 146, 198},
    {33, 113, 181},
    {8, 81, 156},
    {8, 48, 107},
}};

// ColorBrewer RdBu (11 classes) from blue (negative) through near-white (0)
// to red (positive), as matplotlib's RdBu_r: hot means large.
constexpr std::array<Rgb, 11> kRdBu = {{
    {5, 48, 97},
    {33, 102, 172},
    {67, 147, 195},
    {146, 197, 222},
    {209, 229, 240},
    {247, 247, 247},
    {253, 219, 199},
    {244, 165, 130},
    {214, 96, 77},
    {178, 24, 43},
    {103, 0, 31},
}};

constexpr std::array<Rgb, 2> kGray = {{{0, 0, 0}, {255, 255, 255}}};

// Evenly spaced stops over the table, the last one at index 255 exactly.
template <size_t N>
std::array<Rgb, kLutSize> build(const std::array<Rgb, N>& stops, int spacing) {
  std::array<Rgb, kLutSize> lut{};
  for (int i = 0; i < kLutSize; ++i) {
    size_t k = static_cast<size_t>(i / spacing);
    if (k >= N - 1) k = N - 2;
    const int a = static_cast<int>(k) * spacing;
    const int b = k + 1 == N - 1 ? kLutSize - 1 : a + spacing;
    const double f = static_cast<double>(i - a) / static_cast<double>(b - a);
    auto mix = [&](uint8_t x, uint8_t y) {
      return static_cast<uint8_t>(std::lround(x + f * (static_cast<double>(y) - x)));
    };
    lut[static_cast<size_t>(i)] = {mix(stops[k].r, stops[k + 1].r), mix(stops[k].g, stops[k + 1].g),
                                   mix(stops[k].b, stops[k + 1].b)};
  }
  return lut;
}

// Stops spread over 0..255 for tables that are not 8-spaced.
template <size_t N>
std::array<Rgb, kLutSize> build_spread(const std::array<Rgb, N>& stops) {
  std::array<Rgb, kLutSize> lut{};
  for (int i = 0; i < kLutSize; ++i) {
    const double pos = static_cast<double>(i) * static_cast<double>(N - 1) / (kLutSize - 1);
    size_t k = static_cast<size_t>(pos);
    if (k >= N - 1) k = N - 2;
    const double f = pos - static_cast<double>(k);
    auto mix = [&](uint8_t x, uint8_t y) {
      return static_cast<uint8_t>(std::lround(x + f * (static_cast<double>(y) - x)));
    };
    lut[static_cast<size_t>(i)] = {mix(stops[k].r, stops[k + 1].r), mix(stops[k].g, stops[k + 1].g),
                                   mix(stops[k].b, stops[k + 1].b)};
  }
  return lut;
}

double linear(uint8_t c) {
  const double s = c / 255.0;
  return s <= 0.04045 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4);
}

}  // namespace

const Rgb* colormap_lut(Colormap c) {
  static const std::array<Rgb, kLutSize> viridis = build(kViridis, 8);
  static const std::array<Rgb, kLutSize> magma = build(kMagma, 8);
  static const std::array<Rgb, kLutSize> gray = build_spread(kGray);
  static const std::array<Rgb, kLutSize> blues = build_spread(kBlues);
  static const std::array<Rgb, kLutSize> rdbu = build_spread(kRdBu);
  auto reversed = [](const std::array<Rgb, kLutSize>& a) {
    std::array<Rgb, kLutSize> r;
    std::reverse_copy(a.begin(), a.end(), r.begin());
    return r;
  };
  static const std::array<Rgb, kLutSize> viridis_r = reversed(viridis);
  static const std::array<Rgb, kLutSize> magma_r = reversed(magma);
  static const std::array<Rgb, kLutSize> gray_r = reversed(gray);
  static const std::array<Rgb, kLutSize> blues_r = reversed(blues);
  static const std::array<Rgb, kLutSize> rdbu_r = reversed(rdbu);
  switch (c) {
    case Colormap::kViridis:
      return viridis.data();
    case Colormap::kMagma:
      return magma.data();
    case Colormap::kGray:
      return gray.data();
    case Colormap::kBlues:
      return blues.data();
    case Colormap::kRdBu:
      return rdbu.data();
    case Colormap::kViridisR:
      return viridis_r.data();
    case Colormap::kMagmaR:
      return magma_r.data();
    case Colormap::kGrayR:
      return gray_r.data();
    case Colormap::kBluesR:
      return blues_r.data();
    case Colormap::kRdBuR:
      return rdbu_r.data();
  }
  return viridis.data();
}

}  // namespace attn::heatmap

namespace attn {

double ColorNorm::fraction(double v) const {
  if (scale == ColorScale::kLog) {
    if (std::isnan(v)) return v;
    if (!(v > 0)) return -1;
    return (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
  }
  const double t = heatmap::range_fraction(v, lo, hi);
  if (scale == ColorScale::kPower && t > 0) return std::pow(t, gamma);
  return t;
}

}  // namespace attn

namespace attn::heatmap {

Rgb missing_color() { return {150, 150, 150}; }

Rgb text_color_on(Rgb bg) {
  const double l = 0.2126 * linear(bg.r) + 0.7152 * linear(bg.g) + 0.0722 * linear(bg.b);
  const double on_black = (l + 0.05) / 0.05;
  const double on_white = 1.05 / (l + 0.05);
  return on_black >= on_white ? Rgb{0, 0, 0} : Rgb{255, 255, 255};
}

std::string hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

}  // namespace attn::heatmap

namespace attn {

Rgb colormap_color(Colormap c, double t) {
  return heatmap::colormap_lut(c)[heatmap::lut_index(t, 0.0, 1.0)];
}

Rgb masked_fill_color() { return {226, 226, 226}; }
Rgb masked_hatch_color() { return {160, 160, 160}; }

}  // namespace attn
