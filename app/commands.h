// The subcommands of the attn front end. Each add_* registers its flags on
// the app and returns the function that runs it once parsing succeeded.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "attn/heatmap.h"
#include "commands/flags.h"

namespace attn::cli {

using Action = std::function<int()>;

// command_line: the arguments as typed, quoted where needed.
Action add_run(CLI::App& app, const std::string& command_line);
Action add_examples(CLI::App& app);
Action add_bench(CLI::App& app);
Action add_heatmap(CLI::App& app);
Action add_diff(CLI::App& app);
// A file's text, or stdin's for "-", without one final newline (as the
// shell's $(cat FILE) gives it): a text to tokenize.
std::string text_of_file(const std::string& path, int64_t max_bytes = kDefaultMaxInputBytes);

Action add_tokenize(CLI::App& app);
Action add_models(CLI::App& app);

// Adds --heatmap, --show, --of and the drawing flags to `run`; the returned
// function fills a run's heatmap request once the flags are parsed (with
// --trace, --batch and --head may narrow the trace instead of a figure).
std::function<void(HeatmapRequest&, bool trace, ColorMode color)> add_run_heatmap_flags(
    CLI::App* run);

// Adds the run settings' flags (one per row of io/settings.h with a
// flag; with `bench_only`, the rows attn bench takes) to `app` in `group`;
// the returned function sets the ones given into a RunSettings.
std::function<void(RunSettings&)> add_setting_flags(CLI::App* app, const std::string& group,
                                                    bool bench_only);

// `attn help [COMMAND...]`: the help of attn or of a command; the action
// takes the words after "help".
using HelpAction = std::function<int(const std::vector<std::string>&)>;
HelpAction add_help(CLI::App& app);

// Every command of attn added to `app` (its name, description, --version
// and footer too), and their actions; run_program parses with it, and
// attn_flag_docs writes the completions from it.
struct Commands {
  Action run, examples, bench, heatmap, diff, tokenize, models;
  HelpAction help;
};
Commands add_commands(CLI::App& app, const std::string& command_line);

}  // namespace attn::cli
