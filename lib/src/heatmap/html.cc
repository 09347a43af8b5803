// HTML pages: the panels of a figure (the same panels, colour range and
// colormap as the PNG and SVG) as data inside one self-contained page whose
// script draws them. The numbers travel as base64 little-endian float32
// (float64 when a value does not fit float32), so a page of millions of
// cells stays tens of megabytes; every string from the input is a JSON
// string inside <script type="application/json">, escaped for that place
// (script_json), and the script only ever sets it as text. The numbers
// follow in their own <script type="text/plain"> elements.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/heatmap.h"
#include "heatmap/color.h"
#include "heatmap/html_page.h"
#include "heatmap/panels.h"

namespace attn {

namespace heatmap {

namespace {

using nlohmann::json;

// Base64 characters of `cells` cells of `bytes` bytes each.
int64_t encoded_size(int64_t cells, int64_t bytes) { return (cells * bytes + 2) / 3 * 4; }

// Whether float32 keeps every value to its 7 digits: finite values inside
// float32's normal range (or 0); NaN and infinities are float32 too.
bool fits_float32(const Panels& p) {
  for (const Panel& panel : p.panels) {
    for (double v : panel.values) {
      const double a = std::fabs(v);
      if (std::isfinite(v) && v != 0 && (a > FLT_MAX || a < FLT_MIN)) return false;
    }
  }
  return true;
}

void append_le(std::string& out, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((bits >> (8 * i)) & 0xFF);
}

std::string encode_values(const Panels& p, bool f32) {
  std::string raw;
  raw.reserve(p.panels.size() * p.panels[0].values.size() * (f32 ? 4 : 8));
  for (const Panel& panel : p.panels) {
    for (size_t i = 0; i < panel.values.size(); ++i) {
      const double v = panel.state[i] == kMissing ? std::nan("") : panel.values[i];
      if (f32) {
        const float f = static_cast<float>(v);
        uint32_t bits = 0;
        std::memcpy(&bits, &f, 4);
        append_le(raw, bits, 4);
      } else {
        uint64_t bits = 0;
        std::memcpy(&bits, &v, 8);
        append_le(raw, bits, 8);
      }
    }
  }
  return base64(raw);
}

std::string encode_states(const Panels& p) {
  std::string raw;
  for (const Panel& panel : p.panels) raw.append(panel.state.begin(), panel.state.end());
  return base64(raw);
}

// "queries" -> "query", "keys" -> "key": what one row or column is called.
std::string singular(const std::string& title) {
  if (title.size() > 3 && title.compare(title.size() - 3, 3, "ies") == 0)
    return title.substr(0, title.size() - 3) + "y";
  if (title.size() > 1 && title.back() == 's') return title.substr(0, title.size() - 1);
  return title;
}

json text_list(const std::vector<std::string>& labels) {
  json a = json::array();
  for (const std::string& l : labels) a.push_back(sanitize_utf8(l));
  return a;
}

// The block side: at most max_size cells a side, and the encoded numbers of
// all panels within kHtmlMaxDataBytes (at `bytes` a cell).
int64_t page_factor(const HeatmapData& d, int64_t panels, int max_size, int64_t bytes,
                    const std::string& source) {
  int64_t f = block_factor(d.rows, d.cols, max_size, max_size);
  const int64_t most = std::max(d.rows, d.cols);
  auto cells = [&](int64_t k) { return panels * ((d.rows + k - 1) / k) * ((d.cols + k - 1) / k); };
  if (encoded_size(cells(most), bytes) > kHtmlMaxDataBytes) {
    throw_input(source, "an HTML page of " + std::to_string(panels) + " panels needs more than " +
                            std::to_string(kHtmlMaxDataBytes >> 20) +
                            " MiB for its numbers, even at one cell a panel; draw fewer "
                            "panels with --head or --batch");
  }
  while (f < most && encoded_size(cells(f), bytes) > kHtmlMaxDataBytes) ++f;
  return f;
}

std::string write_html(const HeatmapData& d, const HeatmapOptions& o) {
  const PanelPlan plan = plan_panels(d, o);
  const int64_t n = static_cast<int64_t>(plan.refs.size());
  // First at float32, one state byte a cell when any is masked (a guess
  // that only costs a second pass when it is wrong).
  const int64_t state_bytes = d.masked ? 1 : 0;
  int64_t factor = page_factor(d, n, o.max_size, 4 + state_bytes, d.source);
  Panels p = build_panels(d, o, plan, factor);
  bool f32 = fits_float32(p);
  if (!f32) {
    const int64_t f64 = page_factor(d, n, o.max_size, 8 + state_bytes, d.source);
    if (f64 != factor) {
      factor = f64;
      p = build_panels(d, o, plan, factor);
    }
  }
  const bool states = p.any_masked || p.any_missing;

  json data;
  data["title"] = sanitize_utf8(d.title);
  data["subtitle"] = sanitize_utf8(d.subtitle);
  data["source"] = sanitize_utf8(d.source);
  data["scale_name"] = sanitize_utf8(p.scale_name);
  data["value_name"] = sanitize_utf8(d.value_name);
  data["row_title"] = sanitize_utf8(d.row_title);
  data["col_title"] = sanitize_utf8(d.col_title);
  data["row_name"] = sanitize_utf8(singular(d.row_title));
  data["col_name"] = sanitize_utf8(singular(d.col_title));
  data["batch_name"] = sanitize_utf8(d.batch_name);
  data["rows"] = p.shown_rows;
  data["cols"] = p.shown_cols;
  // The side of the source's blocks a shown cell stands for, and the source.
  const int64_t block = p.factor * std::max<int64_t>(d.cell_block, 1);
  data["source_rows"] = d.cell_block > 1 ? d.source_rows : p.rows;
  data["source_cols"] = d.cell_block > 1 ? d.source_cols : p.cols;
  data["factor"] = block;
  data["reduce"] = std::string(name(o.reduce));
  data["block_note"] = sanitize_utf8(p.block_note);
  // Labels name single cells; blocks are named by their index ranges.
  data["row_labels"] =
      block == 1 ? text_list(shown_tokens(d.row_labels, o.token_style)) : json::array();
  data["col_labels"] =
      block == 1 ? text_list(shown_tokens(d.col_labels, o.token_style)) : json::array();
  data["lo"] = p.lo;
  data["hi"] = p.hi;
  data["color_scale"] = p.scale == ColorScale::kLog     ? "log"
                        : p.scale == ColorScale::kPower ? "power"
                                                        : "linear";
  data["gamma"] = p.gamma;
  // Values in the cells as in the PNG: its digits, and --annotate.
  data["decimals"] = value_decimals(p, o);
  data["annotate"] = std::string(name(o.annotate));
  data["colormap"] = std::string(name(p.colormap));
  const Rgb* lut = colormap_lut(p.colormap);
  std::string lut_hex, ink;
  for (int i = 0; i < kLutSize; ++i) {
    lut_hex += hex(lut[i]).substr(1);
    ink += text_color_on(lut[i]) == Rgb{0, 0, 0} ? '0' : '1';
  }
  data["lut"] = lut_hex;
  data["lut_ink"] = ink;  // value text on each colour: 0 black, 1 white
  data["masked_fill"] = hex(masked_fill_color());
  data["masked_hatch"] = hex(masked_hatch_color());
  data["missing"] = hex(missing_color());
  json panels = json::array();
  for (size_t k = 0; k < plan.refs.size(); ++k) {
    const PanelRef& r = plan.refs[k];
    panels.push_back({{"batch", batch_id(d, r.batch)},
                      {"head", head_id(d, r.head)},
                      {"caption", sanitize_utf8(r.caption)}});
  }
  data["panels"] = panels;
  data["batches"] = d.batch;
  data["heads"] = d.heads;
  data["encoding"] = f32 ? "f32" : "f64";
  // A head summary's cells are heads: their patterns, drawn on hover.
  const bool patterns = d.cell_patterns && d.pattern_rows > 0 && plan.refs.size() == 1 &&
                        p.factor == 1 &&
                        static_cast<int64_t>(d.cell_patterns->size()) ==
                            d.rows * d.cols * d.pattern_rows * d.pattern_cols;
  data["pattern_rows"] = patterns ? d.pattern_rows : 0;
  data["pattern_cols"] = patterns ? d.pattern_cols : 0;
  data["pattern_title"] = sanitize_utf8(d.pattern_title);
  data["states"] = states;

  std::string out = html_page_start();
  out +=
      "<title>" + xml_text(d.title.empty() ? std::string("attn heatmap") : d.title) + "</title>\n";
  out += html_page_body();
  out += "<script type=\"application/json\" id=\"attn-data\">";
  out += script_json(data.dump(-1, ' ', false, json::error_handler_t::replace));
  out += "</script>\n";
  // The numbers in base64, whose alphabet cannot end a <script>.
  size_t numbers = out.size();
  out += "<script type=\"text/plain\" id=\"attn-values\">";
  out += encode_values(p, f32);
  out += "</script>\n";
  if (patterns) {
    Panels pat;
    Panel all;
    all.values = *d.cell_patterns;
    all.state.assign(all.values.size(), kValue);
    pat.panels.push_back(std::move(all));
    out += "<script type=\"text/plain\" id=\"attn-patterns\">";
    out += encode_values(pat, true);
    out += "</script>\n";
  }
  if (states) {
    out += "<script type=\"text/plain\" id=\"attn-states\">";
    out += encode_states(p);
    out += "</script>\n";
  }
  numbers = out.size() - numbers;
  out += html_page_end();
  if (static_cast<int64_t>(out.size()) > kHtmlMaxPageBytes) {
    throw_input(d.source, "the HTML page would take " + std::to_string(out.size()) +
                              " bytes, more than " + std::to_string(kHtmlMaxPageBytes >> 20) +
                              " MiB (" + std::to_string(out.size() - numbers) +
                              " of them labels, titles and the page itself); shorten the "
                              "labels, or write .png or .svg");
  }
  return out;
}

}  // namespace

}  // namespace heatmap

std::string render_html(const HeatmapData& d, const HeatmapOptions& o) {
  return heatmap::write_html(d, o);
}

int64_t html_panel_side(int64_t panels) {
  const int64_t cells = kHtmlMaxDataBytes / 4 * 3 / 4 / std::max<int64_t>(panels, 1);
  int64_t side = static_cast<int64_t>(std::sqrt(static_cast<double>(cells)));
  while (side * side > cells) --side;
  while ((side + 1) * (side + 1) <= cells) ++side;
  return std::max<int64_t>(side, 1);
}

}  // namespace attn
