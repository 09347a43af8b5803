// The terminal preview: one block of 24-bit background colour per cell (two
// or more characters wide, as a character is about twice as tall as wide),
// or one shade-ramp character per cell without colour; labels, a one-line
// scale and a legend for masked cells. Wide matrices are downsampled to the
// terminal width like the figure is to max_size.
#include <algorithm>
#include <string>

#include "attn/escape.h"
#include "attn/heatmap.h"
#include "heatmap/axes.h"
#include "heatmap/color.h"
#include "heatmap/panels.h"

namespace attn {

namespace {

using heatmap::kMasked;
using heatmap::kMissing;

constexpr const char* kRamp = " .:-=+*#%@";  // light to dark: low to high
constexpr int kRampSize = 10;
constexpr int kMaxLabelChars = 12;
constexpr int64_t kMaxRows = 64;  // lines of cells per panel

// Length and prefix in code points (labels may be UTF-8).
size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string first_code_points(const std::string& s, size_t n) {
  size_t i = 0, seen = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == n) break;
      ++seen;
    }
  }
  return s.substr(0, i);
}

std::string pad(const std::string& s, size_t width) {
  std::string t = first_code_points(s, width);
  return t + std::string(width - code_points(t), ' ');
}

// Labels come from the input: terminal_text keeps escape sequences in them
// from reaching the terminal.
std::string label(const std::vector<std::string>& names, int64_t i, int64_t n) {
  return static_cast<int64_t>(names.size()) == n ? terminal_text(names[static_cast<size_t>(i)])
                                                 : std::to_string(i);
}

std::string sgr_bg(Rgb c) {
  return "\x1b[48;2;" + std::to_string(c.r) + ";" + std::to_string(c.g) + ";" +
         std::to_string(c.b) + "m";
}

std::string sgr_fg_bg(Rgb fg, Rgb bg) {
  return "\x1b[38;2;" + std::to_string(fg.r) + ";" + std::to_string(fg.g) + ";" +
         std::to_string(fg.b) + ";48;2;" + std::to_string(bg.r) + ";" + std::to_string(bg.g) + ";" +
         std::to_string(bg.b) + "m";
}

const char* kReset = "\x1b[0m";

// One cell, `w` characters wide.
std::string cell(const heatmap::Panels& p, const Rgb* lut, double v, uint8_t state, int w,
                 bool color) {
  if (!color) {
    if (state == kMasked) return std::string(static_cast<size_t>(w), 'x');
    if (state == kMissing) return std::string(static_cast<size_t>(w), '?');
    const int i = heatmap::lut_index(p.norm(), v);
    const int k = (i * (kRampSize - 1) + (heatmap::kLutSize - 1) / 2) / (heatmap::kLutSize - 1);
    return std::string(static_cast<size_t>(w), kRamp[k]);
  }
  if (state == kMasked) {
    return sgr_fg_bg(masked_hatch_color(), masked_fill_color()) +
           std::string(static_cast<size_t>(w), '/');
  }
  if (state == kMissing)
    return sgr_bg(heatmap::missing_color()) + std::string(static_cast<size_t>(w), ' ');
  return sgr_bg(lut[heatmap::lut_index(p.norm(), v)]) + std::string(static_cast<size_t>(w), ' ');
}

}  // namespace

std::string render_terminal(const HeatmapData& given, const HeatmapOptions& o,
                            const TerminalStyle& style) {
  HeatmapData d = given;  // shares the numbers; the labels as shown
  d.row_labels = shown_tokens(given.row_labels, o.token_style);
  d.col_labels = shown_tokens(given.col_labels, o.token_style);
  const heatmap::PanelPlan plan = heatmap::plan_panels(d, o);
  // Row labels, then cells of w characters: w fits the column labels (up to
  // 6 characters) when the terminal is wide enough, else 2, else blocks of
  // columns are merged.
  size_t lw = 1, cw = 1;
  for (int64_t i = 0; i < d.rows; ++i)
    lw = std::max(lw, code_points(label(d.row_labels, i, d.rows)));
  for (int64_t i = 0; i < d.cols; ++i)
    cw = std::max(cw, code_points(label(d.col_labels, i, d.cols)));
  lw = std::min<size_t>(lw, kMaxLabelChars);
  const int room = std::max(style.width - static_cast<int>(lw) - 1, 8);
  int w = static_cast<int>(std::clamp<size_t>(cw + 1, 3, 7));
  if (d.cols * w > room) w = 2;
  const int64_t f = heatmap::block_factor(d.rows, d.cols, kMaxRows, room / w);
  const heatmap::Panels p = heatmap::build_panels(d, o, plan, f);
  const Rgb* lut = heatmap::colormap_lut(p.colormap);
  const bool labels_fit = f == 1 && w >= 3;

  std::string out;
  if (!d.title.empty()) out += terminal_text(d.title) + "\n";
  if (!d.subtitle.empty()) out += terminal_text(d.subtitle) + "\n";
  for (const heatmap::Panel& panel : p.panels) {
    if (!panel.caption.empty()) out += terminal_text(panel.caption) + "\n";
    // Column labels, or source column numbers at round steps.
    std::string head(lw + 1, ' ');
    if (labels_fit) {
      for (int64_t c = 0; c < d.cols; ++c) {
        std::string l = label(d.col_labels, c, d.cols);
        head += pad(first_code_points(l, static_cast<size_t>(w - 1)), static_cast<size_t>(w));
      }
    } else {
      const int64_t digits = static_cast<int64_t>(std::to_string(d.cols - 1).size());
      const int64_t step = heatmap::nice_step(static_cast<double>(digits + 1) / w);
      std::string line;
      for (int64_t c = 0; c < p.shown_cols; c += step) {
        const std::string n = std::to_string(c * f);
        const size_t at = static_cast<size_t>(c * w);
        if (line.size() > at) continue;
        line += std::string(at - line.size(), ' ') + n;
      }
      head += line;
    }
    while (!head.empty() && head.back() == ' ') head.pop_back();
    out += head + "\n";
    for (int64_t r = 0; r < p.shown_rows; ++r) {
      out += pad(label(d.row_labels, r * f, d.rows), lw) + " ";
      for (int64_t c = 0; c < p.shown_cols; ++c) {
        const size_t i = static_cast<size_t>(r * p.shown_cols + c);
        out += cell(p, lut, panel.values[i], panel.state[i], w, style.color);
      }
      if (style.color) out += kReset;
      out += "\n";
    }
  }
  // The scale: the range ends around the ramp of colours or characters.
  out += p.scale_name + ": " + heatmap::end_text(p.lo) + " ";
  if (style.color) {
    for (int k = 0; k < 24; ++k) out += sgr_bg(lut[(k * (heatmap::kLutSize - 1) + 11) / 23]) + " ";
    out += kReset;
  } else {
    out += std::string("[") + kRamp + "]";
  }
  out += " " + heatmap::end_text(p.hi);
  if (p.any_masked) {
    out += "   masked: " + cell(p, lut, 0, kMasked, 2, style.color) + (style.color ? kReset : "");
  }
  if (p.any_missing)
    out += "   nan: " + cell(p, lut, 0, kMissing, 2, style.color) + (style.color ? kReset : "");
  out += "\n";
  if (!p.block_note.empty()) out += p.block_note + "\n";
  return out;
}

}  // namespace attn
