// `attn diff A B`: binds the flags to a DiffRequest and calls the library.
#include <memory>

#include "attn/error.h"
#include "commands.h"
#include "commands/diff_command.h"
#include "commands/flags.h"
#include "console.h"
#include "flag_table.h"
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
  add(cmd, "a", req.a)->required();
  add(cmd, "b", req.b)->required();
  add(cmd, "--format", f->format);
  add(cmd, "--key", req.key);
  const std::string st = "Stacks of a model's weights ([layers][batch][heads][q][k])";
  add(cmd, "--layer", f->layer)->group(st);
  add(cmd, "--head", f->head)->group(st);
  add(cmd, "--stack", f->stack)->group(st);
  add(cmd, "--tolerance", f->tolerance);
  add(cmd, "--precision", f->precision);
  add(cmd, "--quiet", f->quiet);
  add(cmd, "--max-input-bytes", f->max_input_bytes);
  add(cmd, "--max-elements", f->max_elements);
  const std::string g = "Drawing B - A (colormap rdbu, centred on 0)";
  add(cmd, "--heatmap", req.heatmap_path)->group(g);
  add(cmd, "--show", req.show)->group(g);
  add(cmd, "--title", req.title)->group(g);
  add(cmd, "--vmin", f->vmin)->group(g);
  add(cmd, "--vmax", f->vmax)->group(g);
  add(cmd, "--max-size", f->max_size)->group(g);
  add(cmd, "--color", f->color)->group(g);
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
