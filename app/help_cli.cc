// `attn help [COMMAND...]`: what `attn [COMMAND...] --help` prints, for
// those who type the command first.
#include <memory>

#include "attn/error.h"
#include "attn/options.h"
#include "base/names.h"
#include "commands.h"
#include "console.h"
#include "flag_table.h"

namespace attn::cli {

HelpAction add_help(CLI::App& app) {
  CLI::App* help = app.add_subcommand("help", "print the options of attn or of a command");
  // Listed for --help only: main() hands the words after "help" to the
  // action, since CLI11 would take "run" in `attn help run` for the run
  // command itself.
  auto listed = std::make_shared<std::vector<std::string>>();
  add(help, "command", *listed);
  return [&app, help, listed](const std::vector<std::string>& names) {
    CLI::App* cur = &app;
    std::string prev;  // the names before cur, as CLI11's help() wants them
    for (const std::string& name : names) {
      if (name == "-h" || name == "--help") {
        cur = help;
        prev = app.get_name();
        break;
      }
      CLI::App* next = nullptr;
      std::vector<std::string> known;
      for (CLI::App* s : cur->get_subcommands([](const CLI::App*) { return true; })) {
        if (s == help) continue;
        known.push_back(s->get_name());
        if (s->get_name() == name) next = s;
      }
      if (!next) {
        const std::string near = closest_name(name, known);
        std::string msg = "help: unknown command '" + name + "'";
        if (!near.empty()) msg += "; did you mean '" + near + "'?";
        throw_usage(msg);
      }
      prev = prev.empty() ? cur->get_name() : prev + " " + cur->get_name();
      cur = next;
    }
    StdConsole console;
    console.out(cur->help(prev));
    return 0;
  };
}

}  // namespace attn::cli
