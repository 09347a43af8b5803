// Heatmaps: attention weights (or any stack of matrices) drawn as a figure
// for a slide: labelled rows and columns, a colorbar, values written in the
// cells, masked cells hatched, one panel per batch and head plus the mean of
// the heads. The same figure is written as PNG (stb_image_write, embedded
// pixel font) or SVG (real text), the same panels as an interactive HTML
// page, and a compact preview is drawn in the terminal. Output is
// deterministic: equal input and options give byte-identical files.
// Writers never compute attention; they draw a HeatmapData, built from a
// Result or from a matrix file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/analysis.h"
#include "attn/attention.h"
#include "attn/binary_array.h"
#include "attn/problem.h"
#include "attn/tensor.h"

namespace attn {

// The *R maps run the other way (matplotlib's "_r" names).
enum class Colormap {
  kViridis,
  kMagma,
  kGray,
  kBlues,
  kRdBu,
  kViridisR,
  kMagmaR,
  kGrayR,
  kBluesR,
  kRdBuR
};
// Whether a map is diverging (its middle is the centre of the range).
bool diverging(Colormap c);
enum class Normalize { kNone, kRow, kCol };
enum class Reduce { kMean, kMax };
// What `run --of` draws; kBias is attn_bias plus ALiBi.
enum class HeatmapStage { kWeights, kScores, kOutput, kBias };

std::string_view name(Colormap c);
std::string_view name(Normalize n);
std::string_view name(Reduce r);
std::string_view name(HeatmapStage s);
// The accepted names, in documentation order (for messages and completions).
const std::vector<std::string>& colormap_names();
const std::vector<std::string>& normalize_names();
const std::vector<std::string>& reduce_names();
const std::vector<std::string>& heatmap_stage_names();

// The range of --max-size. At the largest a PNG takes about 1.4 GB to draw
// (6 bytes a pixel); a figure never exceeds it except by the labels and
// colorbar of a single panel.
constexpr int kMinMaxSize = 256, kLargestMaxSize = 16384;

// A target the figure is laid out for (--fit): a paper column (700 px wide,
// 3.5 in at 200 dpi, text at 7 pt or more: capitals of 14 px; at most
// 1000 px tall), a 1920 x 1080 slide, or any width x height within
// kMinMaxSize..kLargestMaxSize. The panels per row, a model view's
// orientation, the label thinning and the cell size are chosen so that the
// grid fills the target, every label shows when it fits and none overlap;
// the image is at most width x height, and exactly width wide when
// exact_width (a column).
struct FigureFit {
  int width = 0, height = 0;
  bool exact_width = false;
  std::string name;  // "column", "slide" or "1200x800", for messages
};
FigureFit column_fit();
FigureFit slide_fit();
// "column", "slide" or "WxH"; a usage error naming --fit otherwise.
FigureFit parse_figure_fit(const std::string& text);

// A font for the figures' text: a TrueType or OpenType face. The built-in
// one is DejaVu Sans (regular and bold), embedded in the binary and drawn
// with stb_truetype; load_font reads a .ttf, .otf or the first face of a
// .ttc (a regular file of at most 64 MB) for scripts DejaVu lacks, such as
// Chinese (Noto Sans CJK), with FreeType, which is made (and fuzzed
// upstream) for fonts from anywhere: a damaged or hostile font file is
// refused or its broken glyphs drawn as boxes, never trusted.
struct Font;
std::shared_ptr<const Font> builtin_font();
std::shared_ptr<const Font> load_font(const std::string& path);  // input error if not a font
std::string font_name(const Font& f);                            // "DejaVu Sans" or the file's path

// How tokens are shown on the axes (--token-style): readable (the space
// marker a word starts with left out, byte-level and byte-fallback pieces
// as the text they stand for, newlines and tabs as ↵ and ⇥, repeated
// tokens told apart by their position: the₄), marker (the same, with the
// word's space shown as ␣), or raw (as given).
enum class TokenStyle { kReadable, kMarker, kRaw };
const std::vector<std::string>& token_style_names();
std::vector<std::string> shown_tokens(const std::vector<std::string>& labels, TokenStyle style);
// The same without the positions of repeated tokens: each token as it
// reads (`Ġcat`, `▁cat` and ` cat` all read `cat`), for lookups by name.
std::vector<std::string> token_texts(const std::vector<std::string>& labels, TokenStyle style);

// How values map to colours between the range's ends (--color-scale):
// linearly, by their logarithm (ends above 0; values at or below 0 take the
// bottom colour), or as the fraction t raised to gamma (power:G; G < 1
// spreads the small values, as matplotlib's PowerNorm).
enum class ColorScale { kLinear, kLog, kPower };
struct ColorNorm {
  double lo = 0, hi = 1;
  ColorScale scale = ColorScale::kLinear;
  double gamma = 1;
  // Where v lies from the bottom colour (0) to the top one (1); outside the
  // range it passes the ends (callers clip), NaN stays NaN.
  double fraction(double v) const;
};

enum class Annotate { kAuto, kAlways, kNever };
std::string_view name(Annotate a);
const std::vector<std::string>& annotate_names();

// How to draw. Every field has a default that suits attention weights.
struct HeatmapOptions {
  std::optional<Colormap> colormap;  // default: viridis, rdbu for signed values
  // The colour range. Default: 0 to 1 for attention weights (so figures
  // compare, and uniform attention is not drawn at full brightness), the
  // data's range for anything else (centred on 0 for signed values).
  // vmin_auto / vmax_auto (--vmin/--vmax auto): the data's end even for weights.
  std::optional<double> vmin, vmax;
  bool vmin_auto = false, vmax_auto = false;
  // --vmax qP: the top colour at the P-th percentile of the values drawn
  // (0 < P <= 100), so that a few large weights (a sink column, row 0's 1)
  // do not leave the rest dark.
  std::optional<double> vmax_quantile;
  // --ignore-first: the first column (the first token, a sink) is left out
  // when the colour range is chosen (its cells are drawn, clipped).
  bool ignore_first = false;
  ColorScale color_scale = ColorScale::kLinear;
  double gamma = 1;                        // of ColorScale::kPower
  Normalize normalize = Normalize::kNone;  // divide each row/column by its max |value|
  std::optional<int64_t> batch, head;      // draw only this batch / head
  int max_size = 2048;                     // longest side of the image, pixels
  std::optional<FigureFit> fit;            // --fit: the target box (max_size: its longer side)
  Reduce reduce = Reduce::kMean;           // how blocks are merged when downsampling
  bool reduce_given = false;               // --reduce was given (a model view's default is max)
  std::optional<int> cell_size;            // pixels a cell; default: the largest that fits
  std::optional<int64_t> labels_every;     // label every Nth row/column; default: all that fit
  Annotate annotate = Annotate::kAuto;     // values in the cells: when they fit
  std::optional<int> decimals;             // of the values; default: 2, or 3 when exact
  std::shared_ptr<const Font> font;        // null: DejaVu Sans
  TokenStyle token_style = TokenStyle::kReadable;
};

// The largest --cell-size.
constexpr int kMaxCellSize = 256;

// What to draw: matrices [batch][heads][rows][cols], row-major. The numbers
// are not owned; they must outlive every render call.
struct HeatmapData {
  const double* values = nullptr;
  const uint8_t* masked = nullptr;  // one flag per value (1 = masked), or null
  int64_t batch = 1, heads = 1, rows = 0, cols = 0;
  bool batch_axis = false;           // captions name the batch
  std::string batch_name = "batch";  // what the first axis is called in captions ("layer")
  bool short_captions = false;       // "L3 H5", "L3 mean": for grids of many small panels
  // The model view: batch entries (layers) as rows and heads as columns,
  // named once on the margins, panels without captions.
  bool model_view = false;
  // The layers' and heads' numbers in the source when only some were drawn
  // (captions and margins name them); empty: 0, 1, 2, ...
  std::vector<int64_t> batch_ids, head_ids;
  bool head_axis = false;     // captions name the head
  bool head_average = false;  // add a mean-of-heads panel per batch
  bool zero_based = false;    // attention weights: the colour range is 0 to 1 by default
  // Each cell already stands for cell_block x cell_block cells of a source
  // of source_rows x source_cols (a stack reduced as it was read; 1 and
  // rows x cols otherwise). The HTML page names cells by these indices.
  int64_t cell_block = 1, source_rows = 0, source_cols = 0;
  std::vector<std::string> row_labels, col_labels;  // empty: indices
  // The first key_cols columns are keys and the rest something else (a
  // sink's share), drawn apart by a line; 0: every column is a key.
  int64_t key_cols = 0;
  std::string row_title = "queries", col_title = "keys";
  std::string value_name = "weights";  // names the colorbar
  std::string title;                   // first title line (may be empty)
  std::string source;                  // names the input in messages ("w.json"); may be empty
  std::string subtitle;                // second line: the settings
  // Numbers built for the figure (a bias matrix, weights with a sink
  // column) rather than read from a result: values and masked point here.
  std::shared_ptr<const std::vector<double>> owned_values;
  std::shared_ptr<const std::vector<uint8_t>> owned_masked;
  // What each cell stands for, drawn on hover in the HTML page (a head
  // summary's cells are heads): pattern_rows x pattern_cols values per
  // cell, cell after cell; empty for none.
  std::shared_ptr<const std::vector<double>> cell_patterns;
  int64_t pattern_rows = 0, pattern_cols = 0;
  std::string pattern_title;  // "the head's weights, 8x8 block means"
  // Words written in the cells instead of their numbers (one panel,
  // rows x cols: the logit lens's tokens); empty for the numbers.
  std::vector<std::string> cell_text;
};

// The stage `stage` of a computed result, named with the problem's labels
// and settings. The result must hold that stage (weights/scores computed).
// Shapes follow weights_shape(): [q][k], a head axis when heads > 1 and a
// batch axis when batched; 4D inputs always [batch][heads][q][k].
HeatmapData heatmap_from_result(const Problem& p, const Result& r, HeatmapStage stage);

// A matrix of rank 1-4 as heatmap data: 2D [rows][cols], 3D [heads][rows][cols],
// 4D [batch][heads][rows][cols] (a vector is one row).
HeatmapData heatmap_from_tensor(const Tensor<double>& t);

// A stack of attention weights as it lies in a file (memory-mapped):
// [layers][batch][heads][q][k], what torch.stack(out.attentions) gives.
// The layer and head chosen (each may be left open) and the batch entry
// (default 0) become a figure: one panel for a layer and a head; a layer's
// heads with their mean; or, with neither, the model view — a grid of
// layers × heads with each layer's mean of heads. Only the cells drawn are
// read; panels with more than max_side rows or columns are reduced to at
// most max_side by block means (or maxima, as `reduce` says) while they
// are read, so a 1.5 GB stack is drawn in a few hundred MB. Labels are
// kept when a panel is not reduced. Out-of-range choices are usage errors.
struct StackChoice {
  std::optional<int64_t> layer, batch, head;
  // Several layers or heads (--layers 0-5,11, --heads 0,3), in the order
  // given; empty: every one (or `layer` / `head` when set).
  std::vector<int64_t> layers, heads;
  int64_t max_side = 256;
  Reduce reduce = Reduce::kMean;
};
HeatmapData heatmap_from_stack(const BinaryArray& stack, const StackChoice& choice,
                               const std::string& source);

// A whole model's heads at a glance (attn heatmap --summary STAT): one cell
// per (layer, head) holding its head summary (attn/analysis.h: the mean
// over the query rows, a causal model's first query left out), the figure's
// subtitle saying what was left out.
HeatmapData head_summary(const BinaryArray& stack, const StackChoice& choice, HeadStat stat,
                         const std::string& source);
// The same as numbers: [layers][heads] of the layers and heads chosen, in
// the order given, and what the rows left out in words.
struct StackSummaries {
  std::vector<double> values;
  std::vector<int64_t> layers, heads;
  std::string left_out;
};
StackSummaries stack_head_summaries(const BinaryArray& stack, const StackChoice& choice,
                                    HeadStat stat, const std::string& source);

// The figure as the bytes of a PNG or SVG file. Throws a usage error when a
// --batch/--head is out of range or --vmin is not below --vmax.
std::string render_png(const HeatmapData& d, const HeatmapOptions& o);
std::string render_svg(const HeatmapData& d, const HeatmapOptions& o);

// One line naming the labels and titles with characters the font has no
// glyph for (they are drawn as boxes), or "" when it has them all.
std::string missing_glyph_warning(const HeatmapData& d, const HeatmapOptions& o);

// The figure as one self-contained, interactive HTML page (inline CSS and
// JavaScript, nothing fetched, works from file://): one panel at a time,
// chosen by batch (or layer) and head, the mean of the heads, a tooltip
// with the query, key and value of the cell under the pointer, and the
// head view (query and key tokens in two columns joined by lines whose
// opacity is the weight). Colours and colour range are the PNG's. Each
// panel keeps at most o.max_size cells a side, and the panels together at
// most kHtmlMaxDataBytes of encoded numbers: larger panels are reduced by
// block means (or maxima) as in the PNG. A page that would still exceed
// kHtmlMaxPageBytes (labels of megabytes) is refused as an input error.
constexpr int64_t kHtmlMaxDataBytes = int64_t{60} << 20;
constexpr int64_t kHtmlMaxPageBytes = int64_t{64} << 20;
std::string render_html(const HeatmapData& d, const HeatmapOptions& o);

// The longest side that `panels` panels of float32 values may keep on a
// page within kHtmlMaxDataBytes (for reading a stack already reduced).
int64_t html_panel_side(int64_t panels);

// PNG for a path ending in .png, SVG for .svg, HTML for .html; a usage
// error otherwise.
std::string render_heatmap_file(const HeatmapData& d, const HeatmapOptions& o,
                                const std::string& path);

// The terminal preview: each cell a block of 24-bit ANSI background colour
// (or, with color false, a character of a shade ramp), row and column
// labels, and a one-line scale; at most `width` columns wide.
struct TerminalStyle {
  bool color = false;
  int width = 80;
};
std::string render_terminal(const HeatmapData& d, const HeatmapOptions& o,
                            const TerminalStyle& style);

// An sRGB colour.
struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
  bool operator!=(const Rgb& o) const { return !(*this == o); }
};

// The colour of position t in [0, 1] of a colormap (t = 1 is the top
// colour), and the two colours of a masked cell: its fill and its hatching.
Rgb colormap_color(Colormap c, double t);
Rgb masked_fill_color();
Rgb masked_hatch_color();

}  // namespace attn
