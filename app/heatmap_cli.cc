// `attn heatmap`, and the heatmap flags of `attn run` (--heatmap, --show,
// --of and the drawing options shared by both commands): binds flags to
// requests, decides from the environment whether the terminal takes colour,
// and calls the library.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <memory>

#include "attn/error.h"
#include "attn/heatmap_command.h"
#include "commands.h"
#include "console.h"
#include "progress_bar.h"

namespace attn::cli {

namespace {

struct DrawingFlag {
  const char* flag;
  const char* help;
  const char* type;
};

const DrawingFlag kDrawingFlags[] = {
    {"--colormap", "viridis (default), magma, gray, blues, or rdbu (default for signed values)",
     "NAME"},
    {"--vmin", "value drawn in the bottom colour (default: the data's minimum)", "X"},
    {"--vmax", "value drawn in the top colour (default: the data's maximum)", "X"},
    {"--normalize", "none (default), row or col: divide each row/column by its max |value|", "HOW"},
    {"--batch", "draw only this batch (0-based)", "B"},
    {"--head", "draw only this head (0-based)", "H"},
    {"--max-size",
     "longest side of the image in pixels (default 2048); larger matrices are "
     "downsampled",
     "PX"},
    {"--reduce", "mean (default) or max: how downsampled blocks are merged", "HOW"},
};

using FlagTexts = std::map<std::string, std::string>;

void add_drawing_flags(CLI::App* cmd, FlagTexts& texts, const std::string& group) {
  for (const DrawingFlag& f : kDrawingFlags) {
    cmd->add_option(f.flag, texts[f.flag], f.help)->group(group)->type_name(f.type);
  }
}

// The drawing options given on the command line; names the first one given
// when `allowed` is false (nothing is drawn).
HeatmapOptions drawing_options(const CLI::App* cmd, const FlagTexts& texts, bool allowed) {
  HeatmapOptions o;
  for (const DrawingFlag& f : kDrawingFlags) {
    if (cmd->count(f.flag) == 0) continue;
    if (!allowed) throw_usage(std::string(f.flag) + " needs --heatmap FILE or --show");
    set_heatmap_flag(o, f.flag, texts.at(f.flag));
  }
  return o;
}

}  // namespace

std::function<void(HeatmapRequest&)> add_run_heatmap_flags(CLI::App* run) {
  struct Flags {
    FlagTexts texts;
    std::string path, of = "weights";
    bool show = false;
  };
  auto f = std::make_shared<Flags>();
  const std::string g = "Heatmap";
  run->add_option("--heatmap", f->path, "draw the weights as FILE.png or FILE.svg")
      ->group(g)
      ->type_name("FILE");
  run->add_flag("--show", f->show, "draw the weights in the terminal")->group(g);
  run->add_option("--of", f->of, "what --heatmap/--show draw: weights (default), scores or output")
      ->group(g)
      ->type_name("STAGE");
  add_drawing_flags(run, f->texts, g);
  return [f, run](HeatmapRequest& h) {
    h.path = f->path;
    h.show = f->show;
    if (run->count("--of") > 0) {
      if (!h.wanted()) throw_usage("--of needs --heatmap FILE or --show");
      h.stage = parse_heatmap_stage_flag(f->of);
    }
    h.options = drawing_options(run, f->texts, h.wanted());
    if (h.show) h.terminal = terminal_style();
  };
}

Action add_heatmap(CLI::App& app) {
  struct Flags {
    HeatmapCommandRequest req;
    FlagTexts texts;
    bool quiet = false;
  };
  auto f = std::make_shared<Flags>();
  HeatmapCommandRequest& req = f->req;
  CLI::App* cmd = app.add_subcommand(
      "heatmap", "draw a matrix (saved weights, scores, any CSV/JSON/.npy matrix) as PNG/SVG");
  cmd->allow_extras();
  cmd->add_option("input", req.input,
                  "a JSON array or attn result document, a CSV or .npy matrix; - reads stdin")
      ->type_name("FILE")
      ->required();
  cmd->add_option("-o,--output", req.output_path,
                  "write the figure to FILE.png or FILE.svg (- writes PNG to stdout)")
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
  cmd->add_flag("-q,--quiet", f->quiet, "no warnings and no progress bar");
  add_drawing_flags(cmd, f->texts, "Drawing");
  return [f, cmd]() {
    HeatmapCommandRequest& r = f->req;
    r.options = drawing_options(cmd, f->texts, true);
    if (r.show) r.terminal = terminal_style();
    StdConsole console;
    const auto bar = progress_bar(f->quiet);
    r.progress = bar.get();
    return heatmap_command(r, console);
  };
}

}  // namespace attn::cli
