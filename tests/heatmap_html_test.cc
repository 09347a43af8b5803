// The HTML heatmap page: self-contained (nothing fetched), its data block
// escaped for <script> whatever the labels hold, the same colours and range
// as the PNG, bounded in size, written by `run --heatmap` and `heatmap -o`;
// and, where Debian's chromium runs, the page opened headless and driven
// through the DevTools protocol (tests/html_page_check.py): no console
// errors, a hovered cell's tooltip, a hovered token's lines, the panel
// selectors.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/escape.h"
#include "attn/heatmap.h"
#include "heatmap/color.h"
#include "heatmap/panels.h"
#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

using nlohmann::json;
using test::read_text;
using test::run_attn;
using test::source_path;

// The text between `open` and the next "</script>".
std::string element(const std::string& html, const std::string& open) {
  const size_t at = html.find(open);
  if (at == std::string::npos) return "";
  const size_t start = at + open.size();
  return html.substr(start, html.find("</script>", start) - start);
}

json page_data(const std::string& html) {
  return json::parse(element(html, "<script type=\"application/json\" id=\"attn-data\">"));
}

std::vector<uint8_t> unbase64(const std::string& s) {
  std::vector<uint8_t> out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char* p = std::strchr(k, c);
    if (c == '=' || !p) continue;
    acc = (acc << 6) | static_cast<uint32_t>(p - k);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

std::vector<float> page_floats(const std::string& html) {
  const std::vector<uint8_t> b =
      unbase64(element(html, "<script type=\"text/plain\" id=\"attn-values\">"));
  std::vector<float> out(b.size() / 4);
  for (size_t i = 0; i < out.size(); ++i) {
    const uint32_t bits = b[4 * i] | (b[4 * i + 1] << 8) | (b[4 * i + 2] << 16) |
                          (static_cast<uint32_t>(b[4 * i + 3]) << 24);
    std::memcpy(&out[i], &bits, 4);
  }
  return out;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

struct Sweet {
  Problem p = test::problem(read_text(source_path("data/examples/sweet.json")));
  Result r = test::compute_json(read_text(source_path("data/examples/sweet.json")));
  HeatmapData d = heatmap_from_result(p, r, HeatmapStage::kWeights);
};

TEST(HeatmapHtml, FetchesNothing) {
  Sweet s;
  const std::string html = render_html(s.d, HeatmapOptions{});
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_NE(html.find("content=\"default-src 'none'; script-src 'unsafe-inline'; style-src "
                      "'unsafe-inline'\""),
            std::string::npos);
  // The one URL is the SVG namespace, a name that is never fetched.
  EXPECT_EQ(count(html, "http://") + count(html, "https://"),
            count(html, "http://www.w3.org/2000/svg"));
  for (const char* s : {" src=", " href=", "<link", "@import", "url(", "fetch(", "XMLHttpRequest",
                        "<iframe", "<object", "<embed", "import("}) {
    EXPECT_EQ(html.find(s), std::string::npos) << s;
  }
  EXPECT_TRUE(is_valid_utf8(html));
  // Deterministic: the same figure gives the same bytes.
  EXPECT_EQ(html, render_html(s.d, HeatmapOptions{}));
}

TEST(HeatmapHtml, HostileLabelsStayText) {
  const std::vector<std::string> labels = {"</script><script>document.title='pwned'</script>",
                                           "a\"b'c\\d",
                                           "<!--",
                                           "x\xE2\x80\xA8y",
                                           "&amp;<b>",
                                           "bad\xFF"};
  std::vector<double> v(labels.size() * labels.size(), 0.1);
  HeatmapData d;
  d.values = v.data();
  d.rows = d.cols = static_cast<int64_t>(labels.size());
  d.row_labels = d.col_labels = labels;
  d.title = "</title><script>alert(1)</script>";
  d.subtitle = "]]></script>\xE2\x80\xA9";
  const std::string html = render_html(d, HeatmapOptions{});
  // The page's own script elements only: data, values, the script.
  EXPECT_EQ(count(html, "</script>"), 3u);
  EXPECT_EQ(count(html, "<script"), 3u);
  EXPECT_EQ(html.find("<!--"), std::string::npos);
  EXPECT_EQ(html.find("\xE2\x80\xA8"), std::string::npos);
  EXPECT_EQ(html.find("\xE2\x80\xA9"), std::string::npos);
  EXPECT_NE(html.find("<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>"),
            std::string::npos);
  EXPECT_TRUE(is_valid_utf8(html));
  const json data = page_data(html);
  ASSERT_EQ(data["row_labels"].size(), labels.size());
  // As shown (a stray byte as \xFF, a newline as ↵), and with
  // --token-style raw as given, made valid UTF-8.
  const std::vector<std::string> shown = shown_tokens(labels, TokenStyle::kReadable);
  for (size_t i = 0; i < labels.size(); ++i) {
    EXPECT_EQ(data["row_labels"][i].get<std::string>(), sanitize_utf8(shown[i]));
  }
  HeatmapOptions raw;
  raw.token_style = TokenStyle::kRaw;
  const json raw_data = page_data(render_html(d, raw));
  for (size_t i = 0; i < labels.size(); ++i) {
    EXPECT_EQ(raw_data["row_labels"][i].get<std::string>(), sanitize_utf8(labels[i]));
  }
  EXPECT_EQ(data["title"].get<std::string>(), d.title);
  EXPECT_EQ(data["subtitle"].get<std::string>(), d.subtitle);
}

TEST(HeatmapHtml, ScriptJsonEscapesWhatEndsAScript) {
  EXPECT_EQ(script_json(R"(["</script>","<!--","a&b","]]>"])"),
            R"(["\u003c/script\u003e","\u003c!--","a\u0026b","]]\u003e"])");
  EXPECT_EQ(script_json("\"\xE2\x80\xA8\xE2\x80\xA9\xE2\x80\xA7\""),
            "\"\\u2028\\u2029\xE2\x80\xA7\"");
  const std::string hostile = "</SCRIPT>\xE2\x80\xA8<!-- & >";
  EXPECT_EQ(json::parse(script_json(json_string(hostile))).get<std::string>(), hostile);
}

// The page carries the PNG's colour table and range, and the panels' values.
TEST(HeatmapHtml, SameColoursRangeAndValuesAsThePng) {
  Sweet s;
  HeatmapOptions o;
  o.colormap = Colormap::kMagma;
  const std::string html = render_html(s.d, o);
  const json data = page_data(html);
  const heatmap::PanelPlan plan = heatmap::plan_panels(s.d, o);
  const heatmap::Panels p = heatmap::build_panels(s.d, o, plan, 1);
  EXPECT_EQ(data["lo"].get<double>(), p.lo);
  EXPECT_EQ(data["hi"].get<double>(), p.hi);
  EXPECT_EQ(data["colormap"], "magma");
  const std::string lut = data["lut"];
  ASSERT_EQ(lut.size(), 6u * heatmap::kLutSize);
  const Rgb* want = heatmap::colormap_lut(Colormap::kMagma);
  for (int i = 0; i < heatmap::kLutSize; i += 17) {
    EXPECT_EQ("#" + lut.substr(static_cast<size_t>(6 * i), 6), heatmap::hex(want[i])) << i;
  }
  EXPECT_EQ(data["encoding"], "f32");
  const std::vector<float> values = page_floats(html);
  ASSERT_EQ(values.size(), p.panels[0].values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(values[i], static_cast<float>(p.panels[0].values[i])) << i;
  }
  EXPECT_EQ(data["rows"], 4);
  EXPECT_EQ(data["row_labels"], json({"cat", "milk", "it", "sweet"}));
  EXPECT_EQ(data["row_name"], "query");
  EXPECT_EQ(data["col_name"], "key");
}

TEST(HeatmapHtml, ValuesBeyondFloat32TravelAsFloat64) {
  std::vector<double> v = {1e300, -2.5, 1e-320, 0.1};
  HeatmapData d;
  d.values = v.data();
  d.rows = d.cols = 2;
  const std::string html = render_html(d, HeatmapOptions{});
  EXPECT_EQ(page_data(html)["encoding"], "f64");
  const std::vector<uint8_t> b =
      unbase64(element(html, "<script type=\"text/plain\" id=\"attn-values\">"));
  ASSERT_EQ(b.size(), 32u);
  for (size_t i = 0; i < 4; ++i) {
    uint64_t bits = 0;
    for (int k = 0; k < 8; ++k) bits |= static_cast<uint64_t>(b[8 * i + k]) << (8 * k);
    double x = 0;
    std::memcpy(&x, &bits, 8);
    EXPECT_EQ(x, v[i]);
  }
}

// Masked cells and NaN travel as states; the mean of heads is a panel.
TEST(HeatmapHtml, MaskedCellsHeadsAndTheirMean) {
  const Result r = test::compute_json(read_text(source_path("data/examples/multihead.json")));
  const Problem p = test::problem(read_text(source_path("data/examples/multihead.json")));
  const HeatmapData d = heatmap_from_result(p, r, HeatmapStage::kWeights);
  const json data = page_data(render_html(d, HeatmapOptions{}));
  ASSERT_EQ(data["panels"].size(), 10u);  // 2 batches x (4 heads + mean)
  EXPECT_EQ(data["panels"][4],
            json({{"batch", 0}, {"head", -1}, {"caption", "batch 0, mean of heads"}}));
  EXPECT_EQ(data["batch_name"], "batch");

  const Problem pc = test::problem(read_text(source_path("data/examples/causal.json")));
  const Result rc = test::compute_json(read_text(source_path("data/examples/causal.json")));
  const std::string html = render_html(heatmap_from_result(pc, rc, HeatmapStage::kWeights), {});
  EXPECT_TRUE(page_data(html)["states"].get<bool>());
  const std::vector<uint8_t> st =
      unbase64(element(html, "<script type=\"text/plain\" id=\"attn-states\">"));
  ASSERT_EQ(st.size(), 64u);
  EXPECT_EQ(st[0 * 8 + 1], heatmap::kMasked);  // "the" may not see "cat"
  EXPECT_EQ(st[1 * 8 + 0], heatmap::kValue);
}

// Many large panels are reduced until their numbers fit the page's bound.
TEST(HeatmapHtml, LargePanelsAreReducedToTheBound) {
  const int64_t heads = 3, n = 2048;
  std::vector<double> v(static_cast<size_t>(heads * n * n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 1000) / 1000;
  HeatmapData d;
  d.values = v.data();
  d.heads = heads;
  d.head_axis = d.head_average = true;
  d.rows = d.cols = n;
  const std::string html = render_html(d, HeatmapOptions{});
  EXPECT_LE(static_cast<int64_t>(html.size()), kHtmlMaxPageBytes);
  const json data = page_data(html);
  // 4 panels of 2048^2 float32 need 89 MB in base64; of 1024^2, 22 MB.
  EXPECT_EQ(data["factor"], 2);
  EXPECT_EQ(data["rows"], 1024);
  EXPECT_EQ(data["block_note"], "2048x2048 shown as 1024x1024: mean of 2x2 blocks");
  // --max-size bounds a panel's side as in the PNG.
  HeatmapOptions o;
  o.max_size = 512;
  o.head = 0;
  EXPECT_EQ(page_data(render_html(d, o))["rows"], 512);
}

TEST(HeatmapHtml, PagesOverTheBoundAreRefused) {
  std::vector<double> v = {0.5, 0.5};
  HeatmapData d;
  d.values = v.data();
  d.rows = 1;
  d.cols = 2;
  d.source = "big.json";
  d.col_labels = {std::string(40 << 20, 'a'), std::string(30 << 20, 'b')};
  const std::string e = test::error_of([&] { render_html(d, HeatmapOptions{}); });
  EXPECT_NE(e.find("big.json: the HTML page would take "), std::string::npos) << e;
  EXPECT_NE(e.find(" bytes, more than 64 MiB ("), std::string::npos) << e;
}

TEST(HeatmapHtml, PanelSideOfAStackFitsTheBound) {
  EXPECT_EQ(html_panel_side(1), 3434);   // 60 MiB of base64: 11,796,480 float32
  EXPECT_EQ(html_panel_side(156), 274);  // 12 layers x (12 heads + mean)
  EXPECT_GE(html_panel_side(int64_t{1} << 40), 1);
}

// ---- the CLI ----------------------------------------------------------------

TEST(HeatmapCli, WritesHtmlPages) {
  const std::string dir = test::temp_dir();
  auto r = run_attn({"run", source_path("data/examples/sweet.json"), "-q", "-o", "/dev/null",
                     "--heatmap", dir + "/w.html"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = read_text(dir + "/w.html");
  EXPECT_EQ(page_data(html)["value_name"], "weights");
  r = run_attn({"heatmap", source_path("data/models/tiny-llama/attentions.npy"), "--tokens",
                source_path("data/models/tiny-llama/tokens.json"), "-o", dir + "/view.html"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json data = page_data(read_text(dir + "/view.html"));
  EXPECT_EQ(data["batch_name"], "layer");
  EXPECT_EQ(data["panels"].size(), 10u);  // 2 layers x (4 heads + mean)
  EXPECT_EQ(data["panels"][9]["caption"], "L1 mean");
  EXPECT_EQ(data["factor"], 1);
  EXPECT_EQ(data["row_labels"].size(), 7u);
  r = run_attn({"heatmap", source_path("data/csv/causal_mask.csv")});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: heatmap: nothing to do; give -o FILE.png (or .svg, .html) or --show\n");
}

// A 300-token stack of 16 layers x 12 heads: 208 panels, whose numbers fit
// the page at 238 cells a side; each panel is reduced 2x2 as it is read,
// its cells named by the source's indices.
TEST(HeatmapCli, ModelViewPagesStayBounded) {
  const std::string dir = test::temp_dir();
  const int64_t L = 16, H = 12, T = 300;
  std::string npy = "\x93NUMPY\x01";
  npy += '\0';
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(L) +
                       ", 1, " + std::to_string(H) + ", " + std::to_string(T) + ", " +
                       std::to_string(T) + "), }";
  header.resize(118, ' ');
  header += '\n';
  npy += static_cast<char>(header.size() & 0xFF);
  npy += static_cast<char>(header.size() >> 8);
  npy += header;
  const float w = 1.0f / static_cast<float>(T);
  std::string cells(sizeof(float), '\0');
  std::memcpy(&cells[0], &w, sizeof(float));
  std::string body;
  body.reserve(static_cast<size_t>(L * H * T * T) * 4);
  for (int64_t i = 0; i < L * H * T * T; ++i) body += cells;
  test::write_temp("stack.npy", npy + body);
  body.clear();
  body.shrink_to_fit();
  const auto r = run_attn({"heatmap", dir + "/stack.npy", "-o", dir + "/view.html"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = read_text(dir + "/view.html");
  EXPECT_LE(static_cast<int64_t>(html.size()), kHtmlMaxPageBytes);
  const json data = page_data(html);
  EXPECT_EQ(data["panels"].size(), 208u);
  EXPECT_EQ(data["rows"], 150);
  EXPECT_EQ(data["factor"], 2);
  EXPECT_EQ(data["source_rows"], 300);
}

// ---- in a browser -----------------------------------------------------------

// Runs tests/html_page_check.py on a page; skips (with the reason) where
// python3 or chromium is missing or chromium cannot run.
json drive(const std::string& page, const std::vector<std::string>& flags) {
  if (test::find_program("python3").empty()) return json{{"skip", "python3 is not installed"}};
  std::string cmd =
      "python3 " + test::quote(source_path("tests/html_page_check.py")) + " " + test::quote(page);
  for (const std::string& f : flags) cmd += " " + test::quote(f);
  const test::Shell s = test::sh("timeout 120 " + cmd);
  if (s.code == 77) return json{{"skip", s.err}};
  EXPECT_EQ(s.code, 0) << s.out << s.err;
  if (s.code != 0) return json();
  return json::parse(s.out);
}

#define DRIVE(var, page, ...)                                                                \
  const json var = drive(page, __VA_ARGS__);                                                 \
  if (var.contains("skip"))                                                                  \
    GTEST_SKIP() << "chromium cannot run the page here: " << var["skip"].get<std::string>(); \
  ASSERT_TRUE(var.is_object())

size_t shown(const json& links) { return links["shown"].size(); }

TEST(HtmlPage, HoverACellAndAToken) {
  const std::string dir = test::temp_dir();
  auto r = run_attn({"run", source_path("data/examples/causal.json"), "-q", "-o", "/dev/null",
                     "--heatmap", dir + "/causal.html"});
  ASSERT_EQ(r.code, 0) << r.err;
  DRIVE(got, dir + "/causal.html", {"--cell", "5,2", "--token", "k:2"});
  EXPECT_EQ(got["ready"], true) << got.dump();
  EXPECT_EQ(got["errors"], json::array()) << got.dump();
  // Row 5 is "mat", column 2 "sat"; its weight to six digits.
  const Result res = test::compute_json(read_text(source_path("data/examples/causal.json")));
  char value[32];
  std::snprintf(value, sizeof value, "%.6g", res.weights->data()[5 * 8 + 2]);
  EXPECT_EQ(got["tooltip"], std::string("query\tmat (5)\nkey\tsat (2)\nweights\t") + value)
      << got.dump();
  EXPECT_EQ(got["tooltip_after_leave"], true);
  // Hovering a cell isolates its query's lines in the head view: 6 keys seen.
  EXPECT_EQ(shown(got["links_on_cell_hover"]), 6u);
  // All 36 unmasked cells are lines; hovering key "sat" keeps its 6.
  EXPECT_EQ(shown(got["links_before"]), 36u);
  EXPECT_EQ(got["token"], "sat");
  ASSERT_EQ(shown(got["links_on_token_hover"]), 6u) << got.dump();
  for (const json& l : got["links_on_token_hover"]["shown"]) EXPECT_EQ(l[1], 2);
  EXPECT_EQ(got["active_tokens"], json({"sat"}));
  EXPECT_EQ(got["links_after_leave"], 36);
}

TEST(HtmlPage, HostileLabelsAreShownNotRun) {
  const std::string dir = test::temp_dir();
  const std::string csv =
      "q,</script><script>document.title='pwned'</script>,<img src=x "
      "onerror=\"document.title='x'\">\n"
      "a,0.25,0.75\nb,0.5,0.5\n";
  test::write_temp("hostile.csv", csv);
  auto r = run_attn(
      {"heatmap", dir + "/hostile.csv", "--title", "<b>bold?</b>", "-o", dir + "/hostile.html"});
  ASSERT_EQ(r.code, 0) << r.err;
  DRIVE(got, dir + "/hostile.html", {"--cell", "0,0"});
  EXPECT_EQ(got["errors"], json::array()) << got.dump();
  EXPECT_EQ(got["title"], "<b>bold?</b>");
  EXPECT_EQ(got["heading"], "<b>bold?</b>");
  EXPECT_EQ(got["tooltip"],
            "row\ta (0)\ncolumn\t</script><script>document.title='pwned'</script> (0)\nvalue\t0.25")
      << got.dump();
}

TEST(HtmlPage, ModelViewChoosesLayerAndHead) {
  const std::string dir = test::temp_dir();
  auto r = run_attn({"heatmap", source_path("data/models/tiny-llama/attentions.npy"), "--tokens",
                     source_path("data/models/tiny-llama/tokens.json"), "-o", dir + "/view.html"});
  ASSERT_EQ(r.code, 0) << r.err;
  DRIVE(got, dir + "/view.html", {"--cell", "3,1", "--select", "select-batch=1"});
  EXPECT_EQ(got["errors"], json::array()) << got.dump();
  EXPECT_EQ(got["caption"], "L0 H0");
  EXPECT_EQ(got["caption_after_select"], "L1 H0");
  DRIVE(mean, dir + "/view.html", {"--select", "select-head=-1"});
  EXPECT_EQ(mean["caption_after_select"], "L0 mean");
  EXPECT_EQ(mean["errors"], json::array()) << mean.dump();
}

// A head summary's page: hovering a cell names the layer and head and draws
// that head's weights in the tooltip; the head view is left out.
TEST(HtmlPage, HeadSummaryShowsTheHeadOnHover) {
  const std::string dir = test::temp_dir();
  auto r = run_attn({"heatmap", source_path("data/models/tiny-llama/attentions.npy"), "--summary",
                     "previous", "-o", dir + "/summary.html"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json data = page_data(read_text(dir + "/summary.html"));
  EXPECT_EQ(data["pattern_rows"], 7);
  EXPECT_EQ(data["pattern_cols"], 7);
  DRIVE(got, dir + "/summary.html", {"--cell", "1,2"});
  EXPECT_EQ(got["errors"], json::array()) << got.dump();
  const std::string tip = got["tooltip"].get<std::string>();
  EXPECT_EQ(tip.rfind("layer\t1\nhead\t2\nweight on the previous token\t", 0), 0u) << tip;
  EXPECT_NE(tip.find("the head's weights (colours from 0 to its largest)"), std::string::npos)
      << tip;
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// The page's style sheet and script are pasted into <style> and <script>
// as they are, and the page is split at its marker lines: neither file may
// close its element early or hold a marker of its own.
TEST(HtmlPageFiles, CannotCloseTheirElementsOrHoldAMarker) {
  const std::string css = test::read_text(test::source_path("lib/src/heatmap/page/page.css"));
  const std::string js = test::read_text(test::source_path("lib/src/heatmap/page/page.js"));
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  EXPECT_EQ(lower(css).find("</style"), std::string::npos);
  EXPECT_EQ(lower(js).find("</script"), std::string::npos);
  EXPECT_EQ(lower(js).find("<!--"), std::string::npos);
  for (const std::string* text : {&css, &js}) {
    for (const char* marker : {"{{page.css}}", "{{page.js}}", "{{title}}", "{{data}}"}) {
      EXPECT_EQ(text->find(marker), std::string::npos) << marker;
    }
  }
}

}  // namespace
}  // namespace attn
