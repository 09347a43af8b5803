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
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/heatmap.h"
#include "heatmap/color.h"
#include "heatmap/html_page.h"
#include "heatmap/panels.h"
#include "io/json_writer.h"

namespace attn {

namespace heatmap {

namespace {

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

  // The side of the source's blocks a shown cell stands for, and the source.
  const int64_t block = p.factor * std::max<int64_t>(d.cell_block, 1);
  const Rgb* lut = colormap_lut(p.colormap);
  std::string lut_hex, ink;
  for (int i = 0; i < kLutSize; ++i) {
    lut_hex += hex(lut[i]).substr(1);
    ink += text_color_on(lut[i]) == Rgb{0, 0, 0} ? '0' : '1';
  }
  // A head summary's cells are heads: their patterns, drawn on hover.
  const bool patterns = d.cell_patterns && d.pattern_rows > 0 && plan.refs.size() == 1 &&
                        p.factor == 1 &&
                        static_cast<int64_t>(d.cell_patterns->size()) ==
                            d.rows * d.cols * d.pattern_rows * d.pattern_cols;
  // Labels name single cells; blocks are named by their index ranges.
  const std::vector<std::string> none;
  const std::vector<std::string> row_labels =
      block == 1 ? shown_tokens(d.row_labels, o.token_style) : none;
  const std::vector<std::string> col_labels =
      block == 1 ? shown_tokens(d.col_labels, o.token_style) : none;

  // The members in alphabetical order (the page reads them by name), with
  // nlohmann's numbers, as the page's data has always been written.
  std::string data;
  JsonWriter w(data, NumberStyle::kNlohmannNull);
  w.begin_object(JsonLayout::kCompact);
  // Values in the cells as in the PNG: its digits, and --annotate.
  w.key("annotate").string(name(o.annotate));
  w.key("batch_name").string(d.batch_name);
  w.key("batches").integer(d.batch);
  w.key("block_note").string(p.block_note);
  w.key("col_labels").strings(col_labels, JsonLayout::kCompact);
  w.key("col_name").string(singular(d.col_title));
  w.key("col_title").string(d.col_title);
  w.key("color_scale")
      .string(p.scale == ColorScale::kLog     ? "log"
              : p.scale == ColorScale::kPower ? "power"
                                              : "linear");
  w.key("colormap").string(name(p.colormap));
  w.key("cols").integer(p.shown_cols);
  w.key("decimals").integer(value_decimals(p, o));
  w.key("encoding").string(f32 ? "f32" : "f64");
  w.key("factor").integer(block);
  w.key("gamma").number(p.gamma);
  w.key("heads").integer(d.heads);
  w.key("hi").number(p.hi);
  w.key("lo").number(p.lo);
  w.key("lut").string(lut_hex);
  w.key("lut_ink").string(ink);  // value text on each colour: 0 black, 1 white
  w.key("masked_fill").string(hex(masked_fill_color()));
  w.key("masked_hatch").string(hex(masked_hatch_color()));
  w.key("missing").string(hex(missing_color()));
  w.key("panels").begin_array(JsonLayout::kCompact);
  for (const PanelRef& r : plan.refs) {
    w.begin_object(JsonLayout::kCompact);
    w.key("batch").integer(batch_id(d, r.batch));
    w.key("caption").string(r.caption);
    w.key("head").integer(head_id(d, r.head));
    w.end_object();
  }
  w.end_array();
  w.key("pattern_cols").integer(patterns ? d.pattern_cols : 0);
  w.key("pattern_rows").integer(patterns ? d.pattern_rows : 0);
  w.key("pattern_title").string(d.pattern_title);
  w.key("reduce").string(name(o.reduce));
  w.key("row_labels").strings(row_labels, JsonLayout::kCompact);
  w.key("row_name").string(singular(d.row_title));
  w.key("row_title").string(d.row_title);
  w.key("rows").integer(p.shown_rows);
  w.key("scale_name").string(p.scale_name);
  w.key("source").string(d.source);
  w.key("source_cols").integer(d.cell_block > 1 ? d.source_cols : p.cols);
  w.key("source_rows").integer(d.cell_block > 1 ? d.source_rows : p.rows);
  w.key("states").boolean(states);
  w.key("subtitle").string(d.subtitle);
  w.key("title").string(d.title);
  w.key("value_name").string(d.value_name);
  w.end_object();

  std::string out = html_page_start();
  out +=
      "<title>" + xml_text(d.title.empty() ? std::string("attn heatmap") : d.title) + "</title>\n";
  out += html_page_body();
  out += "<script type=\"application/json\" id=\"attn-data\">";
  out += script_json(data);
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
