// attn's command line: builds the CLI, runs the chosen subcommand, and is
// the one place that maps errors to exit codes (docs/spec.md, exit codes):
// every error is one line "attn: error: ..." on stderr.
#include "cli.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/options.h"
#include "base/names.h"
#include "commands.h"
#include "commands/exit_codes.h"
#include "commands/flags.h"
#include "io/settings.h"
#include "kernel/instruction_set.h"

namespace attn::cli {
namespace {

void print_error(const std::string& msg) {
  std::string line = msg;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::string s = "attn: error: " + line + "\n";
  std::fwrite(s.data(), 1, s.size(), stderr);
}

// Names of a subcommand's options, for "did you mean".
std::vector<std::string> option_names(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app->get_options()) {
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  }
  return names;
}

// An argument nobody took: an unknown option or command, or a stray value.
std::string unexpected(const CLI::App* app, const std::string& arg, bool top) {
  std::vector<std::string> cmds;
  for (const CLI::App* s : app->get_subcommands([](const CLI::App*) { return true; })) {
    cmds.push_back(s->get_name());
  }
  // "examples show", for messages about a nested command.
  std::string cmd = app->get_name();
  for (const CLI::App* p = app->get_parent(); p && p->get_parent(); p = p->get_parent()) {
    cmd = p->get_name() + " " + cmd;
  }
  const std::string prefix = top ? "" : cmd + ": ";
  if (arg.size() > 1 && arg[0] == '-') {
    std::string flag = arg.substr(0, arg.find('='));
    std::string near = closest_name(flag, option_names(app));
    std::string s = prefix + "unknown option '" + flag + "'";
    if (!near.empty()) return s + "; did you mean '" + near + "'?";
    if (top) return s + "; options go after the command (attn run --help)";
    return s + " (attn " + cmd + " --help lists the options)";
  }
  if (cmds.empty()) return prefix + "unexpected argument '" + arg + "'";
  std::string near = closest_name(arg, cmds);
  std::string s = prefix + "unknown command '" + arg + "'";
  if (!near.empty()) return s + "; did you mean '" + near + "'?";
  s += "; commands are";
  for (const auto& c : cmds) s += " " + c;
  return s;
}

std::string lowercase_first(std::string s) {
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z' && (s.size() < 2 || !(s[1] >= 'A' && s[1] <= 'Z'))) {
    s[0] = static_cast<char>(s[0] - 'A' + 'a');
  }
  return s;
}

// CLI11's wording, made to read like the rest of attn's messages.
std::string parse_error_text(std::string msg) {
  // "--format: At Most 1 required but received 2"
  if (size_t at = msg.find(": At Most 1 required but received "); at != std::string::npos) {
    return msg.substr(0, at) + ": given " + msg.substr(at + 34) + " times; give it once";
  }
  // "--heads: 1 required VALUE missing"
  if (size_t at = msg.find(" required ");
      at != std::string::npos && msg.find(" missing", at) != std::string::npos) {
    size_t colon = msg.rfind(": ", at);
    std::string flag = colon == std::string::npos ? msg.substr(0, at) : msg.substr(0, colon);
    return flag + ": expects a value";
  }
  // "name is required" (a missing positional argument)
  const std::string req = " is required";
  if (msg.size() > req.size() && msg.compare(msg.size() - req.size(), req.size(), req) == 0) {
    return "missing argument '" + msg.substr(0, msg.size() - req.size()) + "'";
  }
  return lowercase_first(msg);
}

// "attn run in.json --heads 2", quoting arguments the shell would split.
std::string command_line(int argc, char** argv) {
  std::string s = "attn";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const bool plain =
        !a.empty() && a.find_first_of(" \t\n'\"$`\\*?[]{}()<>|&;#~") == std::string::npos;
    if (plain) {
      s += " " + a;
      continue;
    }
    // Single quotes keep everything but a single quote, written as '\''.
    s += " '";
    for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
    s += "'";
  }
  return s;
}

}  // namespace

namespace {

// "--causal bottom-right" as "--causal=bottom-right": a switch that takes
// a word (the settings table's kSwitchOrWord rows) is a flag, so a file may
// follow it; it takes the next argument only when that is one of its words
// (with _ for -, as bottom_right).
std::vector<std::string> joined_switch_words(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  auto is_word = [](const Setting& s, std::string next) {
    std::replace(next.begin(), next.end(), '_', '-');
    const std::vector<std::string>& words = s.choices();
    return std::find(words.begin(), words.end(), next) != words.end();
  };
  for (size_t i = 1; i + 1 < args.size(); ++i) {
    const Setting* s = setting_of_flag(args[i]);
    if (s != nullptr && s->form == Setting::Form::kSwitchOrWord && s->choices != nullptr &&
        is_word(*s, args[i + 1])) {
      args[i] += "=" + args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
  }
  return args;
}

}  // namespace

Commands add_commands(CLI::App& app, const std::string& command_line) {
  app.description(
      "attn: compute, check and visualize attention (scaled dot-product, multi-head, "
      "additive, ...) from JSON, CSV or NumPy files");
  app.name("attn");
  // Written when asked for: it names the kernels ATTN_KERNEL chose, and a
  // bad ATTN_KERNEL is then an error like any other.
  app.set_version_flag("--version", [] { return version_text(); });
  app.allow_extras();
  app.footer(
      "Run 'attn COMMAND --help' or 'attn help COMMAND' for the options of a command.\n"
      "Try: attn run --example sweet --weights");
  Commands c;
  c.run = add_run(app, command_line);
  c.examples = add_examples(app);
  c.bench = add_bench(app);
  c.heatmap = add_heatmap(app);
  c.diff = add_diff(app);
  c.tokenize = add_tokenize(app);
  c.models = add_models(app);
  c.help = add_help(app);
  return c;
}

int run_program(int argc, char** argv) {
  // A closed pipe (attn run ... | head -1) is a normal end, not an error:
  // writes then fail with EPIPE, which ends the program quietly.
  std::signal(SIGPIPE, SIG_IGN);
  // A file size limit (ulimit -f) is a write error like a full disk: the
  // write fails with EFBIG ("File too large", exit 4) and the temporary
  // file is removed, where SIGXFSZ would end attn with a core dump.
  std::signal(SIGXFSZ, SIG_IGN);

  CLI::App app;
  const Commands commands = add_commands(app, command_line(argc, argv));
  const Action& run = commands.run;
  const Action& examples = commands.examples;
  const Action& bench = commands.bench;
  const Action& heatmap = commands.heatmap;
  const Action& diff = commands.diff;
  const Action& tokenize = commands.tokenize;
  const Action& models = commands.models;
  const HelpAction& help = commands.help;

  try {
    if (argc >= 2 && std::string(argv[1]) == "help") {
      return help(std::vector<std::string>(argv + 2, argv + argc));
    }
    try {
      std::vector<std::string> args = joined_switch_words(argc, argv);
      args.erase(args.begin());                // the program's name
      std::reverse(args.begin(), args.end());  // CLI11 takes them last first
      app.parse(args);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      print_error(parse_error_text(e.what()));
      return kExitUsage;
    }
    if (!app.remaining().empty() && !app.got_subcommand("tokenize")) {
      print_error(unexpected(&app, app.remaining().front(), true));
      return kExitUsage;
    }
    for (CLI::App* sub : app.get_subcommands()) {
      // The deepest parsed command owns the leftovers.
      CLI::App* owner = sub;
      for (CLI::App* s : sub->get_subcommands()) owner = s;
      // attn tokenize takes the words left over as its texts.
      if (!owner->remaining().empty() && owner->get_name() != "tokenize") {
        print_error(unexpected(owner, owner->remaining().front(), false));
        return kExitUsage;
      }
    }
    // A bad ATTN_KERNEL is an error for every command, whether or not the
    // input would have reached the kernels.
    kernel::kernel_isa();
    // Test hook (docs/errors.md): fail as a bug would, through the same
    // handler, so the suite can check exit code 70 without a bug to hand.
    if (const char* hook = std::getenv("ATTN_DEBUG_INTERNAL_ERROR");
        hook && hook == std::string("1")) {
      throw std::logic_error("ATTN_DEBUG_INTERNAL_ERROR=1 is set (a test hook)");
    }
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("examples")) return examples();
    if (app.got_subcommand("bench")) return bench();
    if (app.got_subcommand("heatmap")) return heatmap();
    if (app.got_subcommand("diff")) return diff();
    if (app.got_subcommand("tokenize")) return tokenize();
    if (app.got_subcommand("models")) return models();
    print_error("no command given; try 'attn run --example sweet' or 'attn --help'");
    return kExitUsage;
  } catch (const BrokenPipe&) {
    return 0;
  } catch (const Error& e) {
    print_error(e.what());
    return exit_code(e.kind());
  } catch (const std::bad_alloc&) {
    print_error("out of memory");
    return kExitInternal;
  } catch (const std::exception& e) {
    print_error(std::string("internal error: ") + e.what());
    return kExitInternal;
  }
}

}  // namespace attn::cli
