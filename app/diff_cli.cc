// `attn diff A B`: binds the flags to a DiffRequest and calls the library.
#include <memory>

#include "attn/error.h"
#include "commands.h"
#include "commands/diff_command.h"
#include "commands/flags.h"
#include "console.h"
#include "progress_bar.h"

namespace attn::cli {

Action add_diff(CLI::App& app) {
  struct Flags {
    DiffRequest req;
    std::string format = "table", precision = "4", tolerance, max_input_bytes, max_elements;
    std::string vmin, vmax, max_size, layer, head, stack;
    std::string color = "auto";
    bool quiet = false;
  };
  auto f = std::make_shared<Flags>();
  DiffRequest& req = f->req;
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "compare two runs' weights (or any two matrices of one shape): B - A per head, its "
      "largest and mean size, KL divergence and entropy of the rows");
  cmd->allow_extras();
  const char* input =
      "a JSON array or attn result document (attn run -f json -w), a CSV or .npy matrix, "
      "FILE.npz:NAME, FILE.safetensors:NAME or FILE.gguf:NAME; - reads stdin (on one side)";
  cmd->add_option("a", req.a, std::string("A, the reference: ") + input)
      ->type_name("A")
      ->required();
  cmd->add_option("b", req.b, "B, compared with A (B - A)")->type_name("B")->required();
  cmd->add_option("-f,--format", f->format,
                  "the summary as table (default), json or csv (one row per batch entry and "
                  "head)")
      ->type_name("FORMAT");
  cmd->add_option("--key", req.key,
                  "JSON documents: the member compared in both (default weights, else output)")
      ->type_name("NAME");
  auto* st = "Stacks of a model's weights ([layers][batch][heads][q][k])";
  cmd->add_option("--layer", f->layer,
                  "compare layer N, 0-based, of each side that is a stack (of both, or of the "
                  "stack beside one layer's weights) (default: none: two stacks compare head "
                  "by head, a stack beside one layer's weights needs it)")
      ->type_name("N")
      ->group(st);
  cmd->add_option("--head", f->head, "compare only head H, 0-based (default: every head)")
      ->type_name("H")
      ->group(st);
  cmd->add_option("--stack", f->stack,
                  "what the first axis of a rank-4 array is: batch ([batch][heads][q][k]) or "
                  "layers ([layers][heads][q][k]) (default: as an attn result records it; with "
                  "--layer, the reading under which A and B compare; else batch, with a warning)")
      ->type_name("AXIS")
      ->group(st);
  cmd->add_option("--tolerance", f->tolerance,
                  "exit with 1 when max |B - A| is above T (default: none, exit 0)")
      ->type_name("T");
  cmd->add_option("--precision", f->precision, "digits after the point in the table (default 4)")
      ->type_name("N");
  cmd->add_flag("-q,--quiet", f->quiet,
                "quiet: no warnings and no progress bar (errors are still printed)");
  cmd->add_option("--max-input-bytes", f->max_input_bytes,
                  "largest input file (or stdin) to read, in bytes (default 2^30); reading "
                  "stops past it")
      ->type_name("N");
  cmd->add_option("--max-elements", f->max_elements,
                  "largest array to read, in elements (default 2^26); checked from the file's "
                  "header before anything is allocated")
      ->type_name("N");
  const std::string g = "Drawing B - A (colormap rdbu, centred on 0)";
  cmd->add_option("--heatmap", req.heatmap_path, "draw B - A as FILE.png or FILE.svg")
      ->type_name("FILE")
      ->group(g);
  cmd->add_flag("--show", req.show, "draw B - A in the terminal, after the table")->group(g);
  cmd->add_option("--title", req.title, "figure title (default \"B − A\")")
      ->type_name("TEXT")
      ->group(g);
  cmd->add_option("--vmin", f->vmin,
                  "value drawn in the bottom colour (default: -max |B - A|, or -X of --vmax X)")
      ->type_name("X")
      ->group(g);
  cmd->add_option("--vmax", f->vmax,
                  "value drawn in the top colour (default: max |B - A|, or -X of --vmin X)")
      ->type_name("X")
      ->group(g);
  cmd->add_option("--max-size", f->max_size,
                  "longest side of the image in pixels (default 2048); larger matrices are "
                  "downsampled")
      ->type_name("PX")
      ->group(g);
  cmd->add_option("--color", f->color,
                  "colour --show: auto (a terminal, unless NO_COLOR), always or never "
                  "(default auto)")
      ->type_name("WHEN")
      ->group(g);
  return [f, cmd]() {
    DiffRequest& r = f->req;
    check_path_flag("a", r.a, PathFlag::kInput);
    check_path_flag("b", r.b, PathFlag::kInput);
    r.format = parse_format_flag(f->format);
    r.precision = parse_int_flag("--precision", f->precision, 0, 17);
    if (cmd->count("--tolerance") > 0) {
      r.tolerance = parse_nonnegative_flag("--tolerance", f->tolerance);
    }
    if (cmd->count("--max-input-bytes") > 0) {
      r.max_input_bytes = parse_max_input_bytes_flag(f->max_input_bytes);
    }
    if (cmd->count("--max-elements") > 0) r.max_elements = parse_max_elements_flag(f->max_elements);
    if (cmd->count("--layer") > 0) r.layer = parse_int_flag("--layer", f->layer, 0, 1 << 20);
    if (cmd->count("--head") > 0) r.head = parse_int_flag("--head", f->head, 0, 1 << 20);
    if (cmd->count("--stack") > 0) r.stack = parse_stack_flag(f->stack);
    r.quiet = f->quiet;
    if (cmd->count("--heatmap") > 0)
      check_path_flag("--heatmap", r.heatmap_path, PathFlag::kOutput);
    const bool drawn = !r.heatmap_path.empty() || r.show;
    for (const auto& [flag, text] : {std::pair<const char*, const std::string*>{"--vmin", &f->vmin},
                                     {"--vmax", &f->vmax},
                                     {"--max-size", &f->max_size}}) {
      if (cmd->count(flag) == 0) continue;
      if (!drawn) throw_usage(std::string(flag) + " needs --heatmap FILE or --show");
      set_heatmap_flag(r.options, flag, *text);
    }
    if (cmd->count("--title") > 0 && !drawn) throw_usage("--title needs --heatmap FILE or --show");
    if (r.show) r.terminal = terminal_style(parse_color_flag(f->color));
    StdConsole console;
    const auto bar = progress_bar(f->quiet);
    r.progress = bar.get();
    return diff_command(r, console);
  };
}

}  // namespace attn::cli
