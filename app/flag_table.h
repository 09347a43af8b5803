// The flags of attn's commands, one row each (as ripgrep's defs.rs): a
// flag's spellings, its placeholder, its help and how a shell completes
// its value are written here once, and every command that takes the flag
// binds the same row. The run settings' flags have their own table
// (lib/src/io/settings.h, with the "modern" column); app/setting_flags.cc
// binds those rows. --help prints both tables; the completion scripts in
// data/completions/ are generated from them (app/flag_docs.cc, rewritten
// by `scripts/dev.sh generate`, checked by the test FlagDocs.Generated).
// docs/architecture.md, "Adding a flag", says what a row holds.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::cli {

// How a shell completes the value of a flag (or a positional argument).
enum class Complete {
  kNothing,    // free text or a number: nothing to offer
  kFile,       // a file name (zsh: those matching `glob` when it is set)
  kDirectory,  // a directory name
  kNames,      // one of `choices`
  kExample,    // a built-in example's name, asked of attn itself
  kCommand,    // a command of attn (attn help COMMAND)
};

struct Flag {
  Flag(std::string names, std::string commands, std::string value, std::string help,
       Complete complete = Complete::kNothing, std::vector<std::string> (*choices)() = nullptr,
       std::string glob = "")
      : names(std::move(names)),
        commands(std::move(commands)),
        value(std::move(value)),
        help(std::move(help)),
        complete(complete),
        choices(choices),
        glob(std::move(glob)) {}
  // The spellings as CLI11 takes them: "-f,--format", "--title"; a
  // positional argument's name: "FILE", "input".
  std::string names;
  // The commands that take the row, space separated: "heatmap diff"; a
  // nested command by its own name ("show"). A flag whose help differs
  // between commands has a row for each.
  std::string commands;
  // The placeholder --help shows, "FILE"; "" for a switch (and for run's
  // FILE, which --help shows bare).
  std::string value;
  std::string help;  // as --help prints it
  Complete complete;
  // kNames: the accepted names, from the library's lists where it has one.
  std::vector<std::string> (*choices)();
  std::string glob;  // kFile: the files zsh offers first, "*.npy"
  bool positional() const { return !names.empty() && names[0] != '-'; }
  bool is_switch() const { return value.empty() && !positional(); }
};

// Every row, grouped by the commands that take them.
const std::vector<Flag>& flag_table();

// The row of `name` ("--title", "-o", "FILE") for `command` ("run",
// "show"); throws std::logic_error when there is none: a binding that
// names no row fails on every run, and so in every test.
const Flag& flag_of(std::string_view command, std::string_view name);
// The same, nullptr when there is none.
const Flag* find_flag(std::string_view command, std::string_view name);

// Binds the row `name` of `cmd`'s command to a field: an option taking a
// value, a list of values (a positional taking several) or a switch. The
// option is returned to be put in a group, marked required, ...
CLI::Option* add(CLI::App* cmd, std::string_view name, std::string& value);
CLI::Option* add(CLI::App* cmd, std::string_view name, std::vector<std::string>& values);
CLI::Option* add(CLI::App* cmd, std::string_view name, bool& on);
// A switch that runs `on_given` when given.
CLI::Option* add(CLI::App* cmd, std::string_view name, std::function<void()> on_given);

}  // namespace attn::cli
