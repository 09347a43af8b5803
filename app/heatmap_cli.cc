// `attn heatmap`, and the heatmap flags of `attn run` (--heatmap, --show,
// --of and the drawing options shared by both commands): binds flags to
// requests, decides from the environment whether the terminal takes colour,
// and calls the library.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <set>

#include "attn/error.h"
#include "commands.h"
#include "commands/flags.h"
#include "commands/heatmap_command.h"
#include "console.h"
#include "progress_bar.h"

namespace attn::cli {

namespace {

// "0-5,11": indices and inclusive ranges, each once, in the order given
// (at most 65536 of them).
std::vector<int64_t> parse_index_list(const char* flag, const std::string& text) {
  std::vector<int64_t> out;
  std::set<int64_t> seen;
  auto bad = [&](const std::string& why) {
    throw_usage(std::string(flag) + " " + text + ": " + why +
                "; expected indices and ranges, as 0-5,11");
  };
  auto number = [&](const std::string& s) -> int64_t {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
      bad("'" + s + "' is not an index");
    }
    return std::stoll(s);
  };
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string part = text.substr(at, comma - at);
    const size_t dash = part.find('-');
    const int64_t first = number(part.substr(0, dash));
    const int64_t last = dash == std::string::npos ? first : number(part.substr(dash + 1));
    if (last < first) bad("the range " + part + " runs backwards");
    for (int64_t i = first; i <= last; ++i) {
      if (out.size() >= 65536) bad("more than 65536 indices");
      if (!seen.insert(i).second) bad(std::to_string(i) + " twice");
      out.push_back(i);
    }
    at = comma + 1;
  }
  return out;
}

struct DrawingFlag {
  const char* flag;
  const char* help;
  const char* type;
};

const DrawingFlag kDrawingFlags[] = {
    {"--colormap", "viridis (default), magma, gray, blues, or rdbu (default for signed values)",
     "NAME"},
    {"--vmin",
     "value drawn in the bottom colour, or auto for the data's minimum (default: 0 for "
     "attention weights, else the data's minimum)",
     "X"},
    {"--vmax",
     "value drawn in the top colour, auto for the data's maximum, or qP for its P-th "
     "percentile, as q99 (default: 1 for attention weights, else the data's maximum)",
     "X"},
    {"--color-scale",
     "how values map to colours: linear (default), log (ends above 0), or power:G, the range's "
     "fraction to the power G (G < 1 spreads small values, as power:0.5)",
     "SCALE"},
    {"--ignore-first",
     "leave the first column (the first token, an attention sink) out when choosing the colour "
     "range; its cells are drawn clipped",
     nullptr},
    {"--normalize", "none (default), row or col: divide each row/column by its max |value|", "HOW"},
    {"--batch", "draw (or trace) only this batch entry, 0-based (default: every one)", "B"},
    {"--head",
     "draw (or trace) only this head, 0-based; attn run's table, JSON, CSV and --weights-out "
     "keep only its weights too (default: every head)",
     "H"},
    {"--max-size",
     "longest side of the image in pixels (default 2048); larger matrices are "
     "downsampled",
     "PX"},
    {"--fit",
     "lay the figure out for a target: column (a paper column, 700 px wide at 200 dpi, text at "
     "7 pt or more), slide (1920x1080) or WxH pixels; panels per row, a model view's "
     "orientation, cell size and labels are chosen to fill it (default: none; --max-size)",
     "TARGET"},
    {"--reduce",
     "mean (default; max in a stack's model view) or max: how downsampled blocks are merged",
     "HOW"},
    {"--cell-size", "pixels per cell, 1 to 256 (default: the largest that fits --max-size)", "PX"},
    {"--labels-every", "label every Nth row and column (default: every label that fits)", "N"},
    {"--annotate", "write the values in the cells: auto (default: when they fit), always or never",
     "WHEN"},
    {"--token-style",
     "how tokens are shown on the axes: readable (default: a word's leading space marker Ġ or ▁ "
     "left out, byte pieces as their text, newlines as ↵, repeated tokens numbered by position), "
     "marker (the same, the leading space as ␣) or raw (as given)",
     "STYLE"},
    {"--font",
     "TrueType/OpenType font for the text, e.g. Noto Sans CJK for Chinese (default: the "
     "built-in DejaVu Sans)",
     "FILE"},
};

using FlagTexts = std::map<std::string, std::string>;

void add_drawing_flags(CLI::App* cmd, FlagTexts& texts, const std::string& group) {
  for (const DrawingFlag& f : kDrawingFlags) {
    if (!f.type) {  // a switch
      const std::string flag = f.flag;
      cmd->add_flag_callback(
             flag, [&texts, flag] { texts[flag] = "true"; }, f.help)
          ->group(group);
      continue;
    }
    cmd->add_option(f.flag, texts[f.flag], f.help)->group(group)->type_name(f.type);
  }
}

// --batch and --head also narrow a trace.
bool narrows_trace(const std::string& flag) { return flag == "--batch" || flag == "--head"; }

// The drawing options given on the command line; names the first one given
// when nothing is drawn (`drawn` false), unless it narrows the trace or,
// in attn run (`run`), the result: --head keeps one head of the weights.
HeatmapOptions drawing_options(const CLI::App* cmd, const FlagTexts& texts, bool drawn,
                               bool trace = false, bool run = false) {
  HeatmapOptions o;
  for (const DrawingFlag& f : kDrawingFlags) {
    if (cmd->count(f.flag) == 0) continue;
    const bool narrows_result = run && std::string(f.flag) == "--head";
    if (!drawn && !(trace && narrows_trace(f.flag)) && !narrows_result) {
      throw_usage(std::string(f.flag) + " needs --heatmap FILE or --show" +
                  (narrows_trace(f.flag) ? " (or --trace)" : ""));
    }
    if (std::string(f.flag) == "--font") {
      check_path_flag("--font", texts.at(f.flag), PathFlag::kInput);
    }
    set_heatmap_flag(o, f.flag, texts.at(f.flag));
  }
  if (cmd->count("--fit") > 0 && cmd->count("--max-size") > 0) {
    throw_usage("give --fit TARGET or --max-size PX, not both");
  }
  return o;
}

}  // namespace

std::function<void(HeatmapRequest&, bool, ColorMode)> add_run_heatmap_flags(CLI::App* run) {
  struct Flags {
    FlagTexts texts;
    std::string path, of = "weights";
    bool show = false;
  };
  auto f = std::make_shared<Flags>();
  const std::string g = "Heatmap";
  run->add_option("--heatmap", f->path,
                  "draw the weights as FILE.png, FILE.svg or FILE.html (an interactive page); with "
                  "--out-dir, png, svg or html draws one figure per input")
      ->group(g)
      ->type_name("FILE");
  run->add_flag("--show", f->show, "draw the weights in the terminal, after the table")->group(g);
  run->add_option("--of", f->of,
                  "what --heatmap/--show draw: weights (default), scores, output or bias; with "
                  "--layer all, rollout (attention rollout) or value-norm (weights times the "
                  "norms of the values through W_O), written and drawn as the stack")
      ->group(g)
      ->type_name("STAGE");
  add_drawing_flags(run, f->texts, g);
  // --precision (a flag of the run's tables) also sets the values' digits.
  return [f, run](HeatmapRequest& h, bool trace, ColorMode color) {
    if (run->count("--heatmap") > 0) check_path_flag("--heatmap", f->path, PathFlag::kOutput);
    h.path = f->path;
    h.show = f->show;
    if (run->count("--of") > 0) {
      parse_run_of_flag(f->of, h);
      if (!h.wanted() && h.stack_of == StackOf::kWeights) {
        throw_usage("--of needs --heatmap FILE or --show");
      }
    }
    h.options = drawing_options(run, f->texts, h.wanted(), trace, true);
    if (h.wanted() && run->count("--precision") > 0) {
      set_heatmap_flag(h.options, "--precision", run->get_option("--precision")->as<std::string>());
    }
    if (h.show) h.terminal = terminal_style(color);
  };
}

Action add_heatmap(CLI::App& app) {
  struct Flags {
    HeatmapCommandRequest req;
    FlagTexts texts;
    std::string max_input_bytes, max_elements;
    bool quiet = false;
    std::string color = "auto";
    std::string layer, stack, precision, summary, layers, heads, format, top;
  };
  auto f = std::make_shared<Flags>();
  HeatmapCommandRequest& req = f->req;
  CLI::App* cmd = app.add_subcommand(
      "heatmap",
      "draw a matrix (saved weights, scores, any CSV/JSON/.npy matrix) or a model's stack of "
      "attention weights as PNG/SVG or an interactive HTML page");
  cmd->allow_extras();
  cmd->add_option("input", req.input,
                  "a JSON array or attn result document, a CSV or .npy matrix, FILE.npz:NAME, "
                  "FILE.safetensors:NAME or FILE.gguf:NAME; - reads stdin")
      ->type_name("FILE")
      ->required();
  cmd->add_option("-o,--output", req.output_path,
                  "write the figure to FILE.png, FILE.svg or FILE.html (an interactive page; - "
                  "writes PNG to stdout)")
      ->type_name("FILE");
  cmd->add_flag("--show", req.show, "draw the matrix in the terminal");
  cmd->add_option("--key", req.key,
                  "JSON documents: the member to draw (default weights, else output)")
      ->type_name("NAME");
  cmd->add_option("--title", req.title, "figure title (default: the file name)")->type_name("TEXT");
  cmd->add_option("--labels", req.labels, "row labels, comma separated (columns too if square)")
      ->type_name("LIST");
  cmd->add_option("--key-labels", req.key_labels, "column labels, comma separated")
      ->type_name("LIST");
  cmd->add_option("--tokens", req.tokens,
                  "row (and column) labels from a file: a JSON list of strings or one token per "
                  "line (default: none)")
      ->type_name("FILE");
  auto* st = "Stacks of attention weights (.npy, .npz, .safetensors)";
  cmd->add_option("--layer", f->layer,
                  "draw only this layer of a stack, 0-based (default: every layer, the model "
                  "view)")
      ->type_name("N")
      ->group(st);
  cmd->add_option("--layers", f->layers,
                  "draw only these layers of a stack: indices and ranges, as 0-5,11 (default: "
                  "every layer)")
      ->type_name("LIST")
      ->group(st);
  cmd->add_option("--heads", f->heads,
                  "draw only these heads of a stack: indices and ranges, as 0,3,8-11 (default: "
                  "every head)")
      ->type_name("LIST")
      ->group(st);
  cmd->add_option("--summary", f->summary,
                  "one cell per layer and head: entropy, or the mean weight on the first token, "
                  "the previous token or the token itself (first, previous, self), or the mean "
                  "distance looked back (distance)")
      ->type_name("STAT")
      ->group(st);
  cmd->add_option("-f,--format", f->format,
                  "with --summary: the numbers instead of the figure, as json ({\"summary\", "
                  "\"values\": [layer][head]}), csv (layer,head,value) or a table (default: "
                  "from the extension of -o, .json or .csv; else the figure)")
      ->type_name("FORMAT")
      ->group(st);
  cmd->add_option("--top", f->top,
                  "with --summary: list the N heads with the largest value (the smallest "
                  "entropy) (default: none)")
      ->type_name("N")
      ->group(st);
  cmd->add_option("--stack", f->stack,
                  "what the first axis of a rank-4 array is: batch ([batch][heads][q][k]) or "
                  "layers ([layers][heads][q][k]) (default: as an attn result records it; "
                  "layers with --layer; else batch, with a warning); rank 5 is always "
                  "[layers][batch][heads][q][k]")
      ->type_name("AXIS")
      ->group(st);
  cmd->add_flag("-q,--quiet", f->quiet,
                "quiet: no warnings and no progress bar (errors are still printed)");
  cmd->add_option("--color", f->color,
                  "colour --show: auto (a terminal, unless NO_COLOR), always or never "
                  "(default auto)")
      ->type_name("WHEN");
  cmd->add_option("--max-input-bytes", f->max_input_bytes,
                  "largest input file (or stdin) to read, in bytes (default 2^30); reading "
                  "stops past it")
      ->type_name("N");
  cmd->add_option("--max-elements", f->max_elements,
                  "largest array to read, in elements (default 2^26); checked from the file's "
                  "header before anything is allocated")
      ->type_name("N");
  add_drawing_flags(cmd, f->texts, "Drawing");
  cmd->add_option("--precision", f->precision,
                  "digits after the point of the values in the cells (default: 2, or 3 when "
                  "that writes them exactly)")
      ->group("Drawing")
      ->type_name("N");
  return [f, cmd]() {
    HeatmapCommandRequest& r = f->req;
    check_path_flag("input", r.input, PathFlag::kInput);
    if (cmd->count("-o") > 0) check_path_flag("-o", r.output_path, PathFlag::kOutput);
    if (cmd->count("--max-input-bytes") > 0) {
      r.max_input_bytes = parse_max_input_bytes_flag(f->max_input_bytes);
    }
    if (cmd->count("--max-elements") > 0) r.max_elements = parse_max_elements_flag(f->max_elements);
    r.options = drawing_options(cmd, f->texts, true);
    if (cmd->count("--precision") > 0) set_heatmap_flag(r.options, "--precision", f->precision);
    if (cmd->count("--tokens") > 0) check_path_flag("--tokens", r.tokens, PathFlag::kInput);
    if (cmd->count("--layer") > 0) r.layer = parse_int_flag("--layer", f->layer, 0, 1 << 20);
    if (cmd->count("--stack") > 0) r.stack = parse_stack_flag(f->stack);
    if (cmd->count("--summary") > 0) r.summary = parse_head_stat(f->summary);
    if (cmd->count("--format") > 0) r.format = parse_format_flag(f->format);
    const std::string ext = r.output_path == "-" ? "" : extension(r.output_path);
    if (r.summary && (ext == "json" || ext == "csv")) {
      const Format implied = ext == "json" ? Format::kJson : Format::kCsv;
      if (r.format && *r.format != implied) {
        throw_usage("-o " + r.output_path + " is " + ext + "; --format says " + f->format);
      }
      r.format = implied;
    }
    if (cmd->count("--top") > 0) r.top = parse_int_flag("--top", f->top, 1, 1 << 20);
    if (cmd->count("--layers") > 0) {
      if (cmd->count("--layer") > 0) throw_usage("give --layer N or --layers LIST, not both");
      r.layers = parse_index_list("--layers", f->layers);
    }
    if (cmd->count("--heads") > 0) {
      if (cmd->count("--head") > 0) throw_usage("give --head H or --heads LIST, not both");
      r.heads = parse_index_list("--heads", f->heads);
    }
    if (r.show) r.terminal = terminal_style(parse_color_flag(f->color));
    r.quiet = f->quiet;
    StdConsole console;
    const auto bar = progress_bar(f->quiet);
    r.progress = bar.get();
    return heatmap_command(r, console);
  };
}

}  // namespace attn::cli
