// The completion scripts, written from the commands CLI11 holds and the
// rows of the flag and settings tables (flag_docs.h). What a shell does
// with the lists (which word is the command, when a flag's value is being
// typed) is the fixed text of the templates below; every list of commands,
// flags and values is written from the tables.
#include "flag_docs.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <vector>

#include "flag_table.h"
#include "io/settings.h"

namespace attn::cli {

namespace {

// The commands in the order of the completions and the manual page's
// COMMANDS (attn --help lists them in the order they are added).
const char* const kCommandOrder[] = {"run",    "heatmap",  "diff",  "tokenize",
                                     "models", "examples", "bench", "help"};

// One flag (or positional argument) of a command, from its row.
struct Doc {
  std::vector<std::string> spellings;  // "-f", "--format"; a positional's name
  bool positional = false;
  bool several = false;  // a positional taking several words
  bool takes_value = false;
  std::string value;  // the placeholder
  std::string help;
  Complete complete = Complete::kNothing;
  std::vector<std::string> names;  // kNames
  std::string glob;
  const void* row = nullptr;  // its Flag or Setting: shared rows are one flag
};

struct Command {
  std::string name;  // "" for attn itself; "show" for examples show
  const CLI::App* app;
  std::vector<Doc> flags;  // in the order of --help
};

Doc doc_of(const CLI::App* cmd, const CLI::Option* o) {
  Doc d;
  for (const std::string& s : o->get_snames()) d.spellings.push_back("-" + s);
  for (const std::string& l : o->get_lnames()) d.spellings.push_back("--" + l);
  d.positional = d.spellings.empty();
  if (d.positional) d.spellings.push_back(o->get_name());
  if (o == cmd->get_help_ptr()) {
    d.help = "show the options";
    return d;
  }
  if (o == cmd->get_version_ptr()) {
    d.help = "show the version, Eigen and compiler";
    return d;
  }
  const std::string name = cmd->get_parent() ? cmd->get_name() : "";
  if (const Flag* f = find_flag(name, d.spellings.back())) {
    d.takes_value = !f->is_switch();
    d.several = d.positional && o->get_items_expected_max() > 1;
    d.value = f->value;
    d.help = f->help;
    d.complete = f->complete;
    if (f->choices) d.names = f->choices();
    d.glob = f->glob;
    d.row = f;
    return d;
  }
  if (const Setting* s = setting_of_flag(d.spellings.back())) {
    d.takes_value = s->form == Setting::Form::kValue;
    d.value = s->placeholder;
    d.help = s->help;
    d.row = s;
    if (s->choices != nullptr && d.takes_value) {
      d.names = s->choices();
      d.complete = Complete::kNames;
    }
    return d;
  }
  throw std::logic_error("attn " + name + " " + d.spellings.back() +
                         " has no row in the flag or settings table");
}

Command command_of(const std::string& name, const CLI::App* app) {
  Command c{name, app, {}};
  for (const CLI::Option* o : app->get_options()) c.flags.push_back(doc_of(app, o));
  return c;
}

const CLI::App* subcommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (s->get_name() == name) return s;
  }
  throw std::logic_error("attn has no command " + name);
}

// attn itself, then its commands in kCommandOrder, then the nested ones
// ("show" of examples).
std::vector<Command> commands(const CLI::App& app) {
  std::vector<Command> out{command_of("", &app)};
  std::vector<Command> nested;
  for (const char* name : kCommandOrder) {
    const CLI::App* cmd = subcommand(app, name);
    out.push_back(command_of(name, cmd));
    for (const CLI::App* s : cmd->get_subcommands([](const CLI::App*) { return true; })) {
      nested.push_back(command_of(s->get_name(), s));
    }
  }
  if (app.get_subcommands([](const CLI::App*) { return true; }).size() + 1 != out.size()) {
    throw std::logic_error("kCommandOrder in app/flag_docs.cc lacks a command of attn");
  }
  out.insert(out.end(), nested.begin(), nested.end());
  return out;
}

std::string join(const std::vector<std::string>& words, const std::string& sep) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : sep) + w;
  return s;
}

std::vector<std::string> subcommand_names(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::App* s : app->get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(s->get_name());
  }
  return names;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// ---- bash ----

// `echo "a b c" \` over lines of at most 100 columns, indented.
std::string bash_echo(const std::vector<std::string>& words, const std::string& indent) {
  std::vector<std::string> lines{""};
  for (const std::string& w : words) {
    std::string& line = lines.back();
    if (!line.empty() && indent.size() + 10 + line.size() + 1 + w.size() > 100) {
      lines.push_back(w);
    } else {
      line += (line.empty() ? "" : " ") + w;
    }
  }
  std::string out = indent + "echo \"" + lines[0] + "\"";
  for (size_t i = 1; i < lines.size(); ++i) out += " \\\n" + indent + "  \"" + lines[i] + "\"";
  return out + "\n";
}

// A case pattern "a | b | c)" over lines of at most 100 columns.
std::string bash_pattern(const std::vector<std::string>& words, const std::string& indent) {
  std::string out = indent, line;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string w = words[i] + (i + 1 < words.size() ? " |" : ")");
    if (!line.empty() && indent.size() + line.size() + 1 + w.size() > 98) {
      out += line + " \\\n";
      line = "  " + w;
      out += indent;
    } else {
      line += (line.empty() || line == "  " ? "" : " ") + w;
    }
  }
  return out + line + "\n";
}

const char* const kBashHead =
    R"sh(# bash completion for attn                                 -*- shell-script -*-
#
# Generated by app/flag_docs.cc from attn's flag table (app/flag_table.cc)
# and settings table (lib/src/io/settings.cc): do not edit; change a row
# and run `scripts/dev.sh generate` (the test FlagDocs.Generated fails
# until this file is regenerated).
#
# Installed as share/bash-completion/completions/attn; or source it from
# ~/.bashrc. Completes commands, flags, the values of flags that take a
# name (variants, modes, scales, formats, colormaps, ...), file names for
# flags that take a file, and example names (asked of attn itself).

)sh";

const char* const kBashMain = R"sh(_attn() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=""
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  # --flag=value: bash splits at '=' (COMP_WORDBREAKS).
  if [[ $cur == "=" ]]; then
    cur=""
  elif [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  fi
  COMPREPLY=()

  # The command (and its subcommand) typed so far: the first words that are
  # not flags or flag values.
  local cmd="" sub="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    case $w in
      -* | =) continue ;;
    esac
    local before=${COMP_WORDS[i - 1]}
    [[ $before == "=" ]] && before=${COMP_WORDS[i - 2]}
    if [[ $before == -* ]] && _attn_takes_value "$before"; then continue; fi
    if [[ -z $cmd ]]; then
      cmd=$w
    elif [[ ($cmd == examples || $cmd == help) && -z $sub ]]; then
      sub=$w
    fi
  done

  local values
  if values=$(_attn_values "$prev" "$cmd"); then
    mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
    return 0
  fi
  case $prev in
@EXAMPLE@      # Ask the attn being completed, so the names always match it.
      mapfile -t COMPREPLY < <(compgen -W "$("${COMP_WORDS[0]}" examples 2>/dev/null |
        sed -n 's/^\([a-z0-9_]*\)  .*/\1/p')" -- "$cur")
      return 0
      ;;
@DIRECTORY@      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      return 0
      ;;
@FILE@      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return 0
      ;;
@NOTHING@      return 0 # a number or free text
      ;;
  esac

  if [[ $cur == -* ]]; then
    local name=$cmd
    [[ $cmd == examples && -n $sub ]] && name=show
    mapfile -t COMPREPLY < <(compgen -W "$(_attn_flags "$name")" -- "$cur")
    return 0
  fi
  case $cmd in
    "") mapfile -t COMPREPLY < <(compgen -W "@COMMANDS@" -- "$cur") ;;
    help)
      if [[ -z $sub ]]; then
        mapfile -t COMPREPLY < <(compgen -W "@HELP_COMMANDS@" -- "$cur")
      elif [[ $sub == examples ]]; then
        mapfile -t COMPREPLY < <(compgen -W "@EXAMPLES_COMMANDS@" -- "$cur")
      fi
      ;;
    examples)
      if [[ -z $sub ]]; then
        mapfile -t COMPREPLY < <(compgen -W "@EXAMPLES_COMMANDS@" -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -W "$("${COMP_WORDS[0]}" examples 2>/dev/null |
          sed -n 's/^\([a-z0-9_]*\)  .*/\1/p')" -- "$cur")
      fi
      ;;
    *)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      ;;
  esac
  return 0
}

# True when a flag takes a value (the next word is not a command or file).
_attn_takes_value() {
  case $1 in
@SWITCHES@      return 1 ;;
  esac
  return 0
}

complete -F _attn attn
)sh";

// The flags of a kind of value, each once, in the order first met.
std::vector<std::string> value_flags(const std::vector<Command>& cmds, Complete kind) {
  std::vector<std::string> out;
  for (const Command& c : cmds) {
    for (const Doc& d : c.flags) {
      if (d.positional || !d.takes_value || d.complete != kind) continue;
      for (const std::string& s : d.spellings) {
        if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
      }
    }
  }
  return out;
}

// A flag spelled alike in two commands completes alike in both (attn's
// completion of a value looks at the flag, and at the command only for
// the names: -f's formats).
void check_consistent(const std::vector<Command>& cmds) {
  std::map<std::string, std::pair<bool, Complete>> seen;
  for (const Command& c : cmds) {
    for (const Doc& d : c.flags) {
      if (d.positional) continue;
      for (const std::string& s : d.spellings) {
        const auto kind = std::make_pair(d.takes_value, d.complete);
        const auto [it, added] = seen.emplace(s, kind);
        if (!added && it->second != kind) {
          throw std::logic_error(s + " of attn " + c.name +
                                 " completes unlike the same flag of another command");
        }
      }
    }
  }
}

std::string bash_values(const std::vector<Command>& cmds) {
  // The spellings of each flag that takes a name, and its names by command.
  std::vector<std::pair<std::vector<std::string>, std::vector<std::pair<std::string, std::string>>>>
      flags;
  for (const Command& c : cmds) {
    for (const Doc& d : c.flags) {
      if (d.complete != Complete::kNames || d.positional) continue;
      auto it = std::find_if(flags.begin(), flags.end(),
                             [&](const auto& f) { return f.first == d.spellings; });
      if (it == flags.end()) {
        flags.push_back({d.spellings, {}});
        it = flags.end() - 1;
      }
      it->second.emplace_back(c.name, join(d.names, " "));
    }
  }
  std::string out =
      "# The values of a flag that takes a name (of the command $2); returns 1 for\n"
      "# other flags.\n"
      "_attn_values() {\n  case $1 in\n";
  for (const auto& [spellings, by_command] : flags) {
    const std::string pattern = "    " + join(spellings, " | ") + ")";
    const std::string first = by_command.front().second;
    bool alike = true;
    for (const auto& [cmd, names] : by_command) alike = alike && names == first;
    if (alike) {
      out += pattern + " echo \"" + first + "\" ;;\n";
      continue;
    }
    // The first command's names for the others.
    out += pattern + "\n      case $2 in\n";
    for (const auto& [cmd, names] : by_command) {
      if (names != first) out += "        " + cmd + ") echo \"" + names + "\" ;;\n";
    }
    out += "        *) echo \"" + first + "\" ;;\n      esac\n      ;;\n";
  }
  return out + "    *) return 1 ;;\n  esac\n}\n\n";
}

std::string bash_flags(const std::vector<Command>& cmds) {
  std::string out =
      "# The flags of a command (\"\" is attn itself).\n_attn_flags() {\n  case $1 in\n";
  for (size_t i = 1; i < cmds.size(); ++i) {
    std::vector<std::string> words;
    for (const Doc& d : cmds[i].flags) {
      if (!d.positional) words.insert(words.end(), d.spellings.begin(), d.spellings.end());
    }
    out += "    " + cmds[i].name + ")\n" + bash_echo(words, "      ") + "      ;;\n";
  }
  std::vector<std::string> top;
  for (const Doc& d : cmds[0].flags) top.insert(top.end(), d.spellings.begin(), d.spellings.end());
  out += "    *)\n" + bash_echo(top, "      ") + "      ;;\n  esac\n}\n\n";
  return out;
}

// ---- zsh ----

// A help text as a short description: up to its first "; " outside
// parentheses, or its first ": " after three words or more, without
// "(default ...)".
std::string summary(const std::string& help) {
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < help.size(); ++i) {
    const char c = help[i];
    if (depth == 0 && i + 1 < help.size() && help[i + 1] == ' ') {
      if (c == ';') break;
      if (c == ':' && std::count(out.begin(), out.end(), ' ') >= 2) break;
    }
    if (c == '(' && depth == 0 && help.compare(i, 8, "(default") == 0) {
      int d = 0;
      for (; i < help.size(); ++i) {
        if (help[i] == '(') ++d;
        if (help[i] == ')' && --d == 0) break;
      }
      if (!out.empty() && out.back() == ' ') out.pop_back();
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')') --depth;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Text inside a single-quoted zsh word.
std::string zsh_quoted(const std::string& s) { return replace_all(s, "'", "'\"'\"'"); }

// An _arguments description "[...]".
std::string zsh_description(const std::string& help) {
  std::string s = summary(help);
  s = replace_all(s, "\\", "\\\\");
  s = replace_all(s, "[", "\\[");
  s = replace_all(s, "]", "\\]");
  return "[" + zsh_quoted(s) + "]";
}

// The ":message:action" of a value.
std::string zsh_value(const Doc& d, const std::string& message) {
  std::string action = " ";
  switch (d.complete) {
    case Complete::kNothing:
      break;
    case Complete::kFile:
      action = d.glob.empty() ? "_files" : "_files -g \"" + d.glob + "\"";
      break;
    case Complete::kDirectory:
      action = "_files -/";
      break;
    case Complete::kNames:
      action = "(" + replace_all(join(d.names, " "), ":", "\\:") + ")";
      break;
    case Complete::kExample:
      action = "_attn_example_names";
      break;
    case Complete::kCommand:  // attn help writes its own
      break;
  }
  std::string m = message;
  std::transform(m.begin(), m.end(), m.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ":" + zsh_quoted(replace_all(m, ":", "\\:")) + ":" + action;
}

// The _arguments spec of a flag: '--x=[...]:file:_files',
// '(-f --format)'{-f+,--format=}'[...]:format:(table json csv)'.
std::string zsh_spec(const Doc& d) {
  const std::string rest = zsh_description(d.help) + (d.takes_value ? zsh_value(d, d.value) : "");
  if (d.spellings.size() == 1) {
    const std::string& s = d.spellings[0];
    return "'" + s + (d.takes_value ? "=" : "") + rest + "'";
  }
  std::string exclusive = "'(" + join(d.spellings, " ") + ")'{";
  for (size_t i = 0; i < d.spellings.size(); ++i) {
    const std::string& s = d.spellings[i];
    const bool short_flag = s.size() == 2;
    exclusive += (i ? "," : "") + s + (d.takes_value ? (short_flag ? "+" : "=") : "");
  }
  return exclusive + "}'" + rest + "'";
}

// The specs of the positional arguments: '*:file:_files', '1:a:_files'.
std::string zsh_positional(const Doc& d, int index) {
  return "'" + (d.several ? std::string("*") : std::to_string(index)) +
         zsh_value(d, d.spellings[0]) + "'";
}

std::string zsh_arguments(const Command& c, const std::string& extra) {
  std::string out = "  _arguments -s -S";
  int index = 0;
  for (const Doc& d : c.flags) {
    if (d.spellings[0] == "-h" && d.spellings.size() == 2 && d.spellings[1] == "--help") {
      out += " \\\n    '(- *)'{-h,--help}'" + zsh_description(d.help) + "'";
    } else if (d.positional) {
      out += " \\\n    " + zsh_positional(d, ++index);
    } else {
      out += " \\\n    " + zsh_spec(d);
    }
  }
  if (!extra.empty()) out += " \\\n    " + extra;
  return out + "\n";
}

const char* const kZshHead = R"sh(#compdef attn
#
# zsh completion for attn. Generated by app/flag_docs.cc from attn's flag
# table (app/flag_table.cc) and settings table (lib/src/io/settings.cc):
# do not edit; change a row and run `scripts/dev.sh generate` (the test
# FlagDocs.Generated fails until this file is regenerated).
#
# Installed as share/zsh/site-functions/_attn (on $fpath); or put this
# directory on $fpath before compinit. Completes commands, flags, the
# values of flags that take a name, file names, and example names (asked
# of attn itself).

_attn_example_names() {
  local -a names
  names=(${(f)"$($_attn_bin examples 2>/dev/null | sed -n 's/^\([a-z0-9_]*\)  .*/\1/p')"})
  _describe -t examples 'example' names
}
)sh";

const char* const kZshMain = R"sh(
_attn() {
  local curcontext=$curcontext state line
  # The attn being completed, asked for example names (words shift below).
  local _attn_bin=${words[1]}
  local -a commands
  commands=(
@DESCRIBED@  )
  _arguments -C \
    '(- *)'{-h,--help}'[show the options]' \
    '(- *)--version[show the version, Eigen and compiler]' \
    '1:command:->command' \
    '*::arg:->args'
  case $state in
    command) _describe -t commands 'attn command' commands ;;
    args)
      case $words[1] in
@DISPATCH@      esac
      ;;
  esac
}

_attn "$@"
)sh";

std::string zsh_function(const std::string& name) {
  std::string f = "_attn_" + name;
  for (char& c : f) c = c == '-' ? '_' : c;
  return f;
}

// ---- the manual page ----

// "--max-size" as roff writes it: "\-\-max\-size".
std::string roff(const std::string& s) { return replace_all(s, "-", "\\-"); }

// The entry headings (the line after each .TP or .TQ) of each section of the
// page, by the command its title names: "RUN OPTIONS" is run's, "GLOBAL
// OPTIONS" attn's own ("").
std::map<std::string, std::vector<std::string>> man_headings(const std::string& page) {
  std::map<std::string, std::vector<std::string>> out;
  std::string section, previous;
  size_t at = 0;
  while (at < page.size()) {
    const size_t end = std::min(page.find('\n', at), page.size());
    const std::string line = page.substr(at, end - at);
    at = end + 1;
    if (line.rfind(".SH ", 0) == 0) {
      std::string title = line.substr(4);
      section = "-";  // not a section of options
      if (title == "GLOBAL OPTIONS") section = "";
      const std::string suffix = " OPTIONS";
      if (title.size() > suffix.size() &&
          title.compare(title.size() - suffix.size(), suffix.size(), suffix) == 0 &&
          title != "GLOBAL OPTIONS") {
        section = title.substr(0, title.size() - suffix.size());
        std::transform(section.begin(), section.end(), section.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      }
    } else if ((previous == ".TP" || previous == ".TQ") && section != "-") {
      out[section].push_back(line);
    }
    previous = line;
  }
  return out;
}

// Whether a heading names the flag (not a longer one: \-\-rope is not
// \-\-rope\-theta) with its placeholder after it.
bool names_flag(const std::string& heading, const Doc& d) {
  for (const std::string& spelling : d.spellings) {
    const std::string r = roff(spelling);
    for (size_t at = heading.find(r); at != std::string::npos; at = heading.find(r, at + 1)) {
      const size_t after = at + r.size();
      if (after < heading.size() && (heading.compare(after, 2, "\\-") == 0 ||
                                     std::isalnum(static_cast<unsigned char>(heading[after])))) {
        continue;
      }
      if (!d.takes_value || heading.find(d.value, after) != std::string::npos) return true;
    }
  }
  return false;
}

// The flags an entry heading names, in roff ("\\-\\-max\\-size") as plain
// spellings ("--max-size"), in order.
std::vector<std::string> heading_flags(const std::string& heading) {
  static const std::regex spelled(R"((^|[^a-z\\])(\\-(\\-)?[a-z][a-z0-9]*(\\-[a-z0-9]+)*))");
  std::vector<std::string> out;
  for (std::sregex_iterator it(heading.begin(), heading.end(), spelled), end; it != end; ++it) {
    out.push_back(replace_all((*it)[2], "\\-", "-"));
  }
  return out;
}

// An entry heading as the row writes it: ".BI \\-\\-mode \" NAME\"", ".B
// \\-\\-weights", ".BR \\-f \", \" \\-\\-format \" \\fIFORMAT\\fP\"", ".BR \\-q \", \"
// \\-\\-quiet", ".BI \\-\\-causal \" [ALIGN]\"".
std::string man_heading(const Doc& d) {
  if (d.spellings.size() == 2) {
    std::string h = ".BR " + roff(d.spellings[0]) + " \", \" " + roff(d.spellings[1]);
    if (d.takes_value) h += " \" \\fI" + roff(d.value) + "\\fP\"";
    return h;
  }
  if (d.takes_value) return ".BI " + roff(d.spellings[0]) + " \" " + roff(d.value) + "\"";
  // A switch that may take a word: its placeholder is "[ALIGN]".
  if (!d.value.empty()) return ".BI " + roff(d.spellings[0]) + " \" " + roff(d.value) + "\"";
  return ".B " + roff(d.spellings[0]);
}

// The flag of `c` spelled `spelling`, or nullptr.
const Doc* flag_spelled(const Command& c, const std::string& spelling) {
  for (const Doc& d : c.flags) {
    if (!d.positional &&
        std::find(d.spellings.begin(), d.spellings.end(), spelling) != d.spellings.end()) {
      return &d;
    }
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> man_page_gaps(const CLI::App& app, const std::string& page) {
  const std::vector<Command> cmds = commands(app);
  const auto headings = man_headings(page);
  std::vector<std::string> gaps;
  for (const Command& c : cmds) {
    for (const Doc& d : c.flags) {
      if (d.positional) continue;
      // Documented in the section of a command that has the same row (the
      // drawing flags of run and heatmap under run), or, for --help and
      // --version, under GLOBAL OPTIONS.
      bool found = false;
      for (const Command& other : cmds) {
        const bool same = other.name == c.name ||
                          std::any_of(other.flags.begin(), other.flags.end(), [&](const Doc& o) {
                            return d.row != nullptr && o.row == d.row;
                          });
        const std::string section = d.row == nullptr ? "" : other.name;
        if (!same || !headings.count(section)) continue;
        for (const std::string& h : headings.at(section)) found = found || names_flag(h, d);
      }
      if (!found) {
        gaps.push_back("docs/attn.1 has no entry for " + join(d.spellings, ", ") +
                       (d.takes_value ? " " + d.value : "") + " of attn " + c.name +
                       " (a .TP heading in its OPTIONS section)");
      }
    }
  }
  // The other way: every flag a heading names is one its section's command
  // takes (or, under GLOBAL OPTIONS, attn itself), so an entry does not
  // outlive its flag.
  for (const auto& entry : headings) {
    const std::string& section = entry.first;
    const std::vector<std::string>& lines = entry.second;
    const auto c =
        std::find_if(cmds.begin(), cmds.end(), [&](const Command& c) { return c.name == section; });
    if (c == cmds.end()) {
      gaps.push_back("docs/attn.1 has a section of options for attn " + section +
                     ", which is no command");
      continue;
    }
    std::set<std::string> taken;
    for (const Doc& d : c->flags) taken.insert(d.spellings.begin(), d.spellings.end());
    for (const std::string& h : lines) {
      for (const std::string& flag : heading_flags(h)) {
        if (!taken.count(flag)) {
          gaps.push_back("docs/attn.1 names " + flag + " under " +
                         (section.empty() ? std::string("GLOBAL") : section) +
                         " OPTIONS, which attn " + section + " does not take");
        }
      }
    }
  }
  return gaps;
}

std::string man_page_headings(const CLI::App& app, const std::string& page) {
  const std::vector<Command> cmds = commands(app);
  std::string out, section = "-", previous;
  size_t at = 0;
  while (at < page.size()) {
    const size_t end = std::min(page.find('\n', at), page.size());
    const std::string line = page.substr(at, end - at);
    const bool last = end == page.size();
    at = end + 1;
    std::string written = line;
    if (line.rfind(".SH ", 0) == 0) {
      const std::string title = line.substr(4), suffix = " OPTIONS";
      section = "-";
      if (title == "GLOBAL OPTIONS") {
        section = "";
      } else if (title.size() > suffix.size() &&
                 title.compare(title.size() - suffix.size(), suffix.size(), suffix) == 0) {
        section = title.substr(0, title.size() - suffix.size());
        std::transform(section.begin(), section.end(), section.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      }
    } else if ((previous == ".TP" || previous == ".TQ") && section != "-") {
      const auto c = std::find_if(cmds.begin(), cmds.end(),
                                  [&](const Command& c) { return c.name == section; });
      std::vector<const Doc*> named;
      bool known = c != cmds.end();
      for (const std::string& f : heading_flags(line)) {
        const Doc* d = known ? flag_spelled(*c, f) : nullptr;
        known = known && d != nullptr;
        if (d && std::find(named.begin(), named.end(), d) == named.end()) named.push_back(d);
      }
      // One heading a flag, the next ones under .TQ; a heading naming a
      // flag its command lacks is left for man_page_gaps to report.
      if (known && !named.empty()) {
        written.clear();
        for (const Doc* d : named) written += (written.empty() ? "" : "\n.TQ\n") + man_heading(*d);
      }
    }
    out += written + (last ? "" : "\n");
    previous = line;
  }
  return out;
}

std::vector<std::string> unbound_rows(const CLI::App& app) {
  const std::vector<Command> cmds = commands(app);
  std::vector<std::string> out;
  for (const Flag& f : flag_table()) {
    size_t at = 0;
    while (at <= f.commands.size()) {
      const size_t end = std::min(f.commands.find(' ', at), f.commands.size());
      const std::string name = f.commands.substr(at, end - at);
      at = end + 1;
      const auto c =
          std::find_if(cmds.begin(), cmds.end(), [&](const Command& c) { return c.name == name; });
      const bool bound = c != cmds.end() && std::any_of(c->flags.begin(), c->flags.end(),
                                                        [&](const Doc& d) { return d.row == &f; });
      if (!bound)
        out.push_back("the row " + f.names + " of attn " + name + " is bound by no command");
    }
  }
  return out;
}

std::string bash_completion(const CLI::App& app) {
  const std::vector<Command> cmds = commands(app);
  check_consistent(cmds);
  std::vector<std::string> names, help_names, switches;
  for (const char* c : kCommandOrder) names.push_back(c);
  for (const char* c : kCommandOrder) {
    if (std::string(c) != "help") help_names.push_back(c);
  }
  for (const Command& c : cmds) {
    for (const Doc& d : c.flags) {
      if (d.positional || d.takes_value) continue;
      for (const std::string& s : d.spellings) {
        if (std::find(switches.begin(), switches.end(), s) == switches.end()) {
          switches.push_back(s);
        }
      }
    }
  }
  std::string main = kBashMain;
  main =
      replace_all(main, "@EXAMPLE@", bash_pattern(value_flags(cmds, Complete::kExample), "    "));
  main = replace_all(main, "@DIRECTORY@",
                     bash_pattern(value_flags(cmds, Complete::kDirectory), "    "));
  main = replace_all(main, "@FILE@", bash_pattern(value_flags(cmds, Complete::kFile), "    "));
  main =
      replace_all(main, "@NOTHING@", bash_pattern(value_flags(cmds, Complete::kNothing), "    "));
  main = replace_all(main, "@SWITCHES@", bash_pattern(switches, "    "));
  main = replace_all(main, "@COMMANDS@", join(names, " "));
  main = replace_all(main, "@HELP_COMMANDS@", join(help_names, " "));
  main = replace_all(main, "@EXAMPLES_COMMANDS@",
                     join(subcommand_names(subcommand(app, "examples")), " "));
  return kBashHead + bash_flags(cmds) + bash_values(cmds) + main;
}

std::string zsh_completion(const CLI::App& app) {
  const std::vector<Command> cmds = commands(app);
  check_consistent(cmds);
  std::string out = kZshHead;
  std::string described, dispatch;
  for (const Command& c : cmds) {
    // A nested command is completed by its parent's function.
    if (c.name.empty() || c.app->get_parent() != &app) continue;
    described += "    '" + zsh_quoted(replace_all(c.name, ":", "\\:")) + ":" +
                 zsh_quoted(replace_all(c.app->get_description(), ":", "\\:")) + "'\n";
    dispatch += "        " + c.name + ") " + zsh_function(c.name) + " ;;\n";
    out += "\n" + zsh_function(c.name) + "() {\n";
    const std::vector<std::string> subs = subcommand_names(c.app);
    if (c.name == "help") {
      // attn help COMMAND [SUBCOMMAND]
      std::vector<std::string> names, nested;
      for (const char* n : kCommandOrder) {
        if (std::string(n) != "help") names.push_back(n);
      }
      for (const Command& n : cmds) {
        if (!n.name.empty() && n.app->get_parent() != &app) nested.push_back(n.name);
      }
      out += "  _arguments '1:command:(" + join(names, " ") + ")' '2:subcommand:(" +
             join(nested, " ") + ")'\n}\n";
    } else if (!subs.empty()) {
      // examples [show NAME]: the command's flags, then the nested command's.
      out += "  local curcontext=$curcontext state line\n  _arguments -C \\\n";
      out += "    '(- *)'{-h,--help}'[show the options]' \\\n";
      out += "    '1:command:(" + join(subs, " ") + ")' \\\n    '*::arg:->args'\n";
      out += "  case $state in\n    args)\n";
      for (const Command& n : cmds) {
        if (n.name.empty() || n.app->get_parent() != c.app) continue;
        std::string args = zsh_arguments(n, "");
        args = replace_all(args, "  _arguments -s -S \\\n    ", "");
        args = replace_all(args, " \\\n    ", " ");
        out += "      _arguments " + args;
      }
      out += "      ;;\n  esac\n}\n";
    } else {
      // attn tokenize: the words left over are its texts.
      out += zsh_arguments(c, c.name == "tokenize" ? "'*:text: '" : "") + "}\n";
    }
  }
  std::string main = kZshMain;
  main = replace_all(main, "@DESCRIBED@", described);
  main = replace_all(main, "@DISPATCH@", dispatch);
  return out + main;
}

}  // namespace attn::cli
