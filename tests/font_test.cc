// --font files: read with FreeType, so a crafted font is drawn (with boxes
// where its glyphs are broken) or refused in one line, never a crash. The
// crafted fonts are built here, each a few hundred bytes: the ones that
// crashed stb_truetype (tests/fuzz/make_font_seeds.py writes the same for
// the fuzzer).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/heatmap.h"
#include "fuzz/font_entry.h"
#include "heatmap/font.h"
#include "test_util.h"

namespace attn {
namespace {

using test::error_of;
using test::run_attn;
using test::write_temp;

// --- A TrueType font in bytes, as make_font_seeds.py builds it ---

std::string be16(int v) {
  return {static_cast<char>((v >> 8) & 0xFF), static_cast<char>(v & 0xFF)};
}
std::string be32(uint32_t v) { return be16(static_cast<int>(v >> 16)) + be16(static_cast<int>(v)); }

// An sfnt of the tables in tag order; `offsets` overrides where the
// directory says a table is.
std::string sfnt(const std::map<std::string, std::string>& tables,
                 const std::map<std::string, uint32_t>& offsets = {}) {
  std::string head =
      be32(0x00010000) + be16(static_cast<int>(tables.size())) + be16(16) + be16(0) + be16(0);
  std::string records, body;
  uint32_t at = static_cast<uint32_t>(12 + 16 * tables.size());
  for (const auto& [tag, data] : tables) {
    const auto o = offsets.find(tag);
    const uint32_t where = o != offsets.end() ? o->second : at + static_cast<uint32_t>(body.size());
    records += tag + be32(0) + be32(where) + be32(static_cast<uint32_t>(data.size()));
    body += data + std::string((4 - data.size() % 4) % 4, '\0');
  }
  return head + records + body;
}

// One contour of four on-curve points: a square from (50, 0) to (550, 700).
std::string square() {
  std::string g = be16(1) + be16(50) + be16(0) + be16(550) + be16(700) + be16(3) + be16(0);
  g += std::string(4, '\x01');
  for (int dx : {50, 0, 500, 0}) g += be16(dx);
  for (int dy : {0, 700, 0, -700}) g += be16(dy);
  return g;
}

// A composite glyph of one component, glyph `of`.
std::string composite(int of) {
  return be16(-1) + be16(0) + be16(0) + be16(600) + be16(700) + be16(0x0002) + be16(of) +
         std::string(2, '\0');
}

// Format 4: space to '~' to glyph 1, 'a' and 'e' to glyph 2, through the
// glyphIdArray; segCountX2 and the subtable's offset as given.
std::string cmap4(int seg_count_x2 = 4, uint32_t subtable_at = 12) {
  std::string sub = be16(4) + be16(0) + be16(0) + be16(seg_count_x2) + be16(4) + be16(1) + be16(0);
  // endCode, the pad, startCode; idDelta, idRangeOffset (two slots on: the
  // glyphIdArray).
  sub += be16(0x7E) + be16(0xFFFF) + be16(0) + be16(0x20) + be16(0xFFFF);
  sub += be16(0) + be16(1) + be16(4) + be16(0);
  for (int c = 0x20; c <= 0x7E; ++c) sub += be16(c == 'a' || c == 'e' ? 2 : 1);
  sub.replace(2, 2, be16(static_cast<int>(sub.size())));
  return be16(0) + be16(1) + be16(3) + be16(1) + be32(subtable_at) + sub;
}

struct FontParts {
  std::vector<std::string> glyphs = {"", square(), composite(1)};
  std::string cmap = cmap4();
  std::string loca;  // "" : the glyphs' own
};

std::string font(const FontParts& p) {
  std::string glyf, loca;
  loca += be16(0);
  for (const std::string& g : p.glyphs) {
    glyf += g + std::string(g.size() % 2, '\0');
    loca += be16(static_cast<int>(glyf.size() / 2));
  }
  const int n = static_cast<int>(p.glyphs.size());
  std::string head = be32(0x00010000) + be32(0x00010000) + be32(0) + be32(0x5F0F3CF5) + be16(0) +
                     be16(1000) + std::string(16, '\0') + be16(0) + be16(0) + be16(600) +
                     be16(700) + be16(0) + be16(8) + be16(2) + be16(0) + be16(0);
  std::string hhea = be32(0x00010000) + be16(800) + be16(-200) + be16(0) + be16(700) + be16(0) +
                     be16(0) + be16(600) + be16(1) + be16(0) + be16(0) + std::string(8, '\0') +
                     be16(0) + be16(n);
  std::string maxp = be32(0x00010000) + be16(n) + be16(4) + be16(1) + be16(4) + be16(1) + be16(2);
  maxp += std::string(12, '\0') + be16(1) + be16(1);
  std::string hmtx;
  for (int i = 0; i < n; ++i) hmtx += be16(700) + be16(50);
  return sfnt({{"cmap", p.cmap},
               {"glyf", glyf},
               {"head", head},
               {"hhea", hhea},
               {"hmtx", hmtx},
               {"loca", p.loca.empty() ? loca : p.loca},
               {"maxp", maxp}});
}

std::string refused(const std::string& path) {
  return path + ": not a TrueType or OpenType font (--font takes a .ttf, .otf or .ttc file)";
}

// A small figure, its text drawn with the font.
HeatmapData small_figure() {
  static const double values[] = {0.25, 0.75, 0.5, 0.5};
  static const std::vector<std::string> labels = {"Hat", "eat"};
  HeatmapData d;
  d.values = values;
  d.rows = d.cols = 2;
  d.title = "The cat drank the milk";
  d.row_labels = labels;
  d.col_labels = labels;
  return d;
}

// Loads the font from a file: refused with the one-line message, or drawn
// (boxes for what it cannot draw) as text and as a whole figure.
void expect_drawn_or_refused(const std::string& name, const std::string& bytes) {
  SCOPED_TRACE(name);
  const std::string path = write_temp(name, bytes);
  std::shared_ptr<const Font> f;
  const std::string error = error_of([&] { f = load_font(path); });
  if (!f) {
    EXPECT_EQ(error, refused(path));
    return;
  }
  const heatmap::FontScope scope(f.get());
  const std::string text = "The cat drank the milk, Ġ它";
  EXPECT_GT(heatmap::text_extent(text, 2), 0);
  heatmap::GlyphCache cache;
  for (bool bold : {false, true}) {
    const heatmap::GlyphCache::Line line = cache.place(text, 2, bold);
    EXPECT_EQ(line.width, heatmap::text_extent(text, 2, bold));
    for (const auto& g : line.glyphs) {
      EXPECT_EQ(g.image->alpha.size(), static_cast<size_t>(g.image->w * g.image->h));
    }
  }
  (void)heatmap::missing_glyphs(text);
  HeatmapOptions o;
  o.font = f;
  EXPECT_FALSE(render_png(small_figure(), o).empty());
  EXPECT_FALSE(render_svg(small_figure(), o).empty());
}

TEST(Font, ATinyValidFontDrawsItsGlyphs) {
  const std::string path = write_temp("valid.ttf", font({}));
  const std::shared_ptr<const Font> f = load_font(path);
  const heatmap::FontScope scope(f.get());
  EXPECT_EQ(heatmap::svg_font_family(), "sans-serif, sans-serif");  // no name table
  EXPECT_TRUE(heatmap::missing_glyphs("Hat").empty());
  heatmap::GlyphCache cache;
  const heatmap::GlyphCache::Line line = cache.place("H", 2, false);
  ASSERT_EQ(line.glyphs.size(), 1u);
  const heatmap::GlyphImage& h = *line.glyphs[0].image;
  // The square is the capitals' height, 7 pixels a unit of scale (700
  // units: 0.02 pixel a unit), 500 units wide, and on the pixel grid: solid.
  EXPECT_EQ(h.h, heatmap::kCapHeight * 2);
  EXPECT_EQ(h.w, 10);
  EXPECT_EQ(std::count(h.alpha.begin(), h.alpha.end(), 255), h.w * h.h);
  expect_drawn_or_refused("valid.ttf", font({}));
}

TEST(Font, ACmapSubtablePastTheEndIsNoCrash) {
  FontParts p;
  p.cmap = cmap4(4, 0x7FFF0000);
  expect_drawn_or_refused("cmap-past-end.ttf", font(p));
  // No glyph is found: DejaVu Sans draws the letters instead.
  const std::shared_ptr<const Font> f = load_font(write_temp("cmap-past-end.ttf", font(p)));
  const heatmap::FontScope scope(f.get());
  EXPECT_TRUE(heatmap::missing_glyphs("Hat").empty());
}

TEST(Font, LocaEntriesPastTheEndAreNoCrash) {
  FontParts p;
  p.loca = be16(0) + be16(0x7000) + be16(0xFFF0) + be16(0xFFFF);
  expect_drawn_or_refused("loca-past-end.ttf", font(p));
}

TEST(Font, ACmapOf32767SegmentsIsNoCrash) {
  FontParts p;
  p.cmap = cmap4(0xFFFE);
  expect_drawn_or_refused("cmap4-segcount.ttf", font(p));
}

TEST(Font, ACompositeGlyphMadeOfItselfIsABox) {
  FontParts p;
  p.glyphs[2] = composite(2);
  expect_drawn_or_refused("composite-self.ttf", font(p));
  const std::shared_ptr<const Font> f = load_font(write_temp("composite-self.ttf", font(p)));
  const heatmap::FontScope scope(f.get());
  heatmap::GlyphCache cache;
  const heatmap::GlyphCache::Line e = cache.place("e", 2, false);
  ASSERT_EQ(e.glyphs.size(), 1u);
  // The box: outlined, hollow.
  const heatmap::GlyphImage& box = *e.glyphs[0].image;
  EXPECT_EQ(box.h, heatmap::kCapHeight * 2);
  EXPECT_EQ(box.alpha[static_cast<size_t>(box.h / 2 * box.w + box.w / 2)], 0);
}

TEST(Font, TruncatedAndEmptyFontsAreRefused) {
  const std::string whole = font({});
  for (size_t n : {size_t{0}, size_t{4}, size_t{12}, size_t{100}, whole.size() / 2}) {
    const std::string path = write_temp("cut.ttf", whole.substr(0, n));
    const std::string error = error_of([&] { load_font(path); });
    // Cut inside the glyphs FreeType may still open it; a refusal is one line.
    if (!error.empty()) {
      EXPECT_EQ(error, refused(path)) << n;
    }
  }
  FontParts none;
  none.glyphs.clear();
  const std::string path = write_temp("none.ttf", font(none));
  EXPECT_EQ(error_of([&] { load_font(path); }), refused(path));
}

TEST(Font, AFontOfAbsurdUnitsPerEmIsRefused) {
  for (int units : {1, 15, 16385}) {
    std::string bytes = font({});
    // The head table's unitsPerEm, at offset 18 of the table.
    const size_t head = bytes.find("head");
    ASSERT_NE(head, std::string::npos);
    const size_t at = (static_cast<unsigned char>(bytes[head + 8]) << 24 |
                       static_cast<unsigned char>(bytes[head + 9]) << 16 |
                       static_cast<unsigned char>(bytes[head + 10]) << 8 |
                       static_cast<unsigned char>(bytes[head + 11])) +
                      18u;
    bytes.replace(at, 2, be16(units));
    const std::string path = write_temp("upem.ttf", bytes);
    EXPECT_EQ(error_of([&] { load_font(path); }), refused(path)) << units;
  }
}

TEST(Font, ARealFontDrawsLikeTheBuiltInOne) {
  const std::string dejavu = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  if (!std::filesystem::exists(dejavu)) GTEST_SKIP() << dejavu << " not installed";
  const std::string text = "Attention weights: queries × keys";
  const int builtin_width = heatmap::text_extent(text, 2);
  const std::shared_ptr<const Font> f = load_font(dejavu);
  const heatmap::FontScope scope(f.get());
  EXPECT_EQ(heatmap::svg_font_family(), "DejaVu Sans, Verdana, Arial, sans-serif");
  EXPECT_TRUE(heatmap::missing_glyphs(text).empty());
  // The same advances, read by FreeType (kerning may come from another table).
  EXPECT_NEAR(heatmap::text_extent(text, 2), builtin_width, 3);
  heatmap::GlyphCache cache;
  const heatmap::GlyphCache::Line line = cache.place(text, 2, false);
  ASSERT_EQ(line.glyphs.size(), 29u);  // the spaces are not drawn
  for (const auto& g : line.glyphs) {
    EXPECT_GT(g.image->w, 0);
    EXPECT_GT(std::count_if(g.image->alpha.begin(), g.image->alpha.end(),
                            [](uint8_t a) { return a > 128; }),
              0);
  }
  // The capital A sits on the baseline and is kCapHeight * scale tall.
  const heatmap::GlyphImage& a = *line.glyphs[0].image;
  EXPECT_NEAR(a.y0, -heatmap::kCapHeight * 2, 1);
  EXPECT_NEAR(a.y0 + a.h, 0, 1);
}

TEST(Font, AFontOver64MBIsRefusedBeforeItIsRead) {
  const std::string path = test::temp_dir() + "/huge.ttf";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, (64 << 20) + 1), 0);  // sparse: no disk used
  ::close(fd);
  EXPECT_EQ(error_of([&] { load_font(path); }),
            path + ": a font of 67108865 bytes is more than --font reads (64 MB)");
}

TEST(Font, OnlyARegularFileIsAFont) {
  const std::string dir = test::temp_dir();
  EXPECT_EQ(error_of([&] { load_font(dir); }),
            dir + ": not a regular file; --font takes a .ttf, .otf or .ttc file");
  EXPECT_EQ(error_of([&] { load_font(dir + "/absent.ttf"); }),
            dir + "/absent.ttf: cannot open: No such file or directory");
  // "-" is stdin, which a font is never read from.
  EXPECT_EQ(error_of([&] { load_font("-"); }),
            "<stdin>: not a regular file; --font takes a .ttf, .otf or .ttc file");
}

TEST(FontCli, AFifoIsRefusedAtOnce) {
  const std::string fifo = test::temp_dir() + "/font.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  // timeout ends a run that waits for a writer, as it did before.
  const test::Run r = run_attn(
      {"run", "--example", "sweet", "--heatmap", test::temp_dir() + "/fifo.png", "--font", fifo},
      "", {}, {"timeout", "20"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(r.err, "attn: error: " + fifo +
                       ": not a regular file; --font takes a .ttf, .otf or .ttc file\n");
}

TEST(FontCli, ACraftedFontDrawsAFigure) {
  FontParts p;
  p.glyphs[2] = composite(2);
  const std::string path = write_temp("composite-cli.ttf", font(p));
  const std::string png = test::temp_dir() + "/crafted.png";
  const test::Run r = run_attn({"run", "--example", "sweet", "--heatmap", png, "--font", path});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_GT(std::filesystem::file_size(png), 1000u);
}

// The fuzzer's corpus and reproducers (tests/fuzz/font), through its entry point.
TEST(FuzzReplay, FontFileCorpusAndCrashes) {
  std::vector<std::string> files;
  for (const char* dir : {"corpus", "crashes"}) {
    const std::filesystem::path d = test::source_path(std::string("tests/fuzz/font/") + dir);
    if (!std::filesystem::is_directory(d)) continue;
    for (const auto& e : std::filesystem::directory_iterator(d)) {
      if (e.is_regular_file()) files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty()) << "no corpus under tests/fuzz/font";
  for (const std::string& f : files) {
    try {
      fuzz::font_file(test::read_text(f));
    } catch (const std::exception& e) {
      ADD_FAILURE() << f << ": escaped with " << e.what();
    }
  }
}

}  // namespace
}  // namespace attn
