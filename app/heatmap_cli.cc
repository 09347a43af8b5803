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
#include "flag_table.h"
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

// The drawing flags of attn run and attn heatmap, in the order of --help;
// their rows are in the flag table.
const char* const kDrawingFlags[] = {
    "--colormap",     "--vmin",      "--vmax",        "--color-scale",
    "--ignore-first", "--normalize", "--batch",       "--head",
    "--max-size",     "--fit",       "--reduce",      "--cell-size",
    "--labels-every", "--annotate",  "--token-style", "--font"};

using FlagTexts = std::map<std::string, std::string>;

void add_drawing_flags(CLI::App* cmd, FlagTexts& texts, const std::string& group) {
  for (const std::string flag : kDrawingFlags) {
    if (flag_of(cmd->get_name(), flag).is_switch()) {
      add(cmd, flag, [&texts, flag] { texts[flag] = "true"; })->group(group);
    } else {
      add(cmd, flag, texts[flag])->group(group);
    }
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
  for (const std::string flag : kDrawingFlags) {
    if (cmd->count(flag) == 0) continue;
    const bool narrows_result = run && flag == "--head";
    if (!drawn && !(trace && narrows_trace(flag)) && !narrows_result) {
      throw_usage(flag + " needs --heatmap FILE or --show" +
                  (narrows_trace(flag) ? " (or --trace)" : ""));
    }
    if (flag == "--font") check_path_flag("--font", texts.at(flag), PathFlag::kInput);
    set_heatmap_flag(o, flag, texts.at(flag));
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
  add(run, "--heatmap", f->path)->group(g);
  add(run, "--show", f->show)->group(g);
  add(run, "--of", f->of)->group(g);
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
  add(cmd, "input", req.input)->required();
  add(cmd, "--output", req.output_path);
  add(cmd, "--show", req.show);
  add(cmd, "--key", req.key);
  add(cmd, "--title", req.title);
  add(cmd, "--labels", req.labels);
  add(cmd, "--key-labels", req.key_labels);
  add(cmd, "--tokens", req.tokens);
  const std::string st = "Stacks of attention weights (.npy, .npz, .safetensors)";
  add(cmd, "--layer", f->layer)->group(st);
  add(cmd, "--layers", f->layers)->group(st);
  add(cmd, "--heads", f->heads)->group(st);
  add(cmd, "--summary", f->summary)->group(st);
  add(cmd, "--format", f->format)->group(st);
  add(cmd, "--top", f->top)->group(st);
  add(cmd, "--stack", f->stack)->group(st);
  add(cmd, "--quiet", f->quiet);
  add(cmd, "--color", f->color);
  add(cmd, "--max-input-bytes", f->max_input_bytes);
  add(cmd, "--max-elements", f->max_elements);
  add_drawing_flags(cmd, f->texts, "Drawing");
  add(cmd, "--precision", f->precision)->group("Drawing");
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
