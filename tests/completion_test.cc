// The shell completions in data/completions/: bash's completion function driven
// as bash drives it (COMP_WORDS, COMP_CWORD, then COMPREPLY), zsh's through
// a pseudo-terminal when zsh is installed, and both scripts held equal to
// the flags `attn ... --help` shows and the names the library accepts.
#include <gtest/gtest.h>

#include <map>

#include "attn/checkpoint.h"
#include "attn/heatmap.h"
#include "attn/options.h"
#include "attn/output.h"
#include "attn/trace.h"
#include "commands/flags.h"
#include "commands/heatmap_flags.h"
#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

using test::help_flags;
using test::quote;
using test::sh;
using test::source_path;
using test::word_set;

// COMPREPLY after completing `words` (the last one is being completed).
std::vector<std::string> bash_complete(const std::vector<std::string>& words) {
  std::string array;
  for (const std::string& w : words) array += " " + quote(w);
  const test::Shell r =
      sh("exec bash --norc --noprofile -c " +
         quote("source " + quote(source_path("data/completions/attn.bash")) + "; COMP_WORDS=(" +
               array + "); COMP_CWORD=" + std::to_string(words.size() - 1) +
               "; _attn; printf '%s\\n' \"${COMPREPLY[@]}\""));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<std::string> out;
  size_t start = 0;
  while (start < r.out.size()) {
    const size_t nl = r.out.find('\n', start);
    const std::string w = r.out.substr(start, nl - start);
    if (!w.empty()) out.push_back(w);
    start = nl == std::string::npos ? r.out.size() : nl + 1;
  }
  return out;
}

// A bash function of the script, called with one argument.
std::string bash_call(const std::string& function, const std::string& arg) {
  const test::Shell r = sh("exec bash --norc --noprofile -c " +
                           quote("source " + quote(source_path("data/completions/attn.bash")) +
                                 "; " + function + " " + quote(arg)));
  EXPECT_EQ(r.code, 0) << function << " " << arg << ": " << r.err;
  return r.out;
}

using Strings = std::vector<std::string>;

TEST(BashCompletion, CompletesVarToVariant) {
  EXPECT_EQ(bash_complete({"attn", "run", "--var"}), Strings{"--variant"});
}

TEST(BashCompletion, CompletesCommandsValuesAndEqualsForms) {
  EXPECT_EQ(bash_complete({"attn", ""}),
            (Strings{"run", "heatmap", "diff", "tokenize", "models", "examples", "bench", "help"}));
  EXPECT_EQ(bash_complete({"attn", "ru"}), Strings{"run"});
  EXPECT_EQ(bash_complete({"attn", "run", "--variant", "d"}), Strings{"dot"});
  EXPECT_EQ(bash_complete({"attn", "run", "--variant", "=", "sc"}), Strings{"scaled_dot"});
  EXPECT_EQ(bash_complete({"attn", "run", "in.json", "-f", "c"}), Strings{"csv"});
  EXPECT_EQ(bash_complete({"attn", "heatmap", "w.json", "--colormap", "m"}),
            (Strings{"magma", "magma_r"}));
  EXPECT_EQ(bash_complete({"attn", "examples", ""}), Strings{"show"});
  EXPECT_EQ(bash_complete({"attn", "diff", "a.json", "b.json", "-f", "j"}), Strings{"json"});
  EXPECT_EQ(bash_complete({"attn", "diff", "a.json", "--tol"}), Strings{"--tolerance"});
  // A flag's value is not taken for the command: --heads 2 then a flag.
  EXPECT_EQ(bash_complete({"attn", "run", "--heads", "2", "--scale-a"}), Strings{"--scale-at"});
  // The flags new to run and heatmap, and `attn help COMMAND`.
  EXPECT_EQ(bash_complete({"attn", "run", "--color", "a"}), (Strings{"auto", "always"}));
  EXPECT_EQ(bash_complete({"attn", "heatmap", "w.json", "--color", "n"}), Strings{"never"});
  EXPECT_EQ(bash_complete({"attn", "run", "--qu"}), (Strings{"--query", "--quiet"}));
  EXPECT_EQ(bash_complete({"attn", "run", "--title", "x", "--desc"}), Strings{"--description"});
  EXPECT_EQ(bash_complete({"attn", "help", "he"}), Strings{"heatmap"});
  EXPECT_EQ(bash_complete({"attn", "help", "examples", ""}), Strings{"show"});
}

TEST(BashCompletion, ExampleNamesComeFromTheBinary) {
  EXPECT_EQ(bash_complete({ATTN_BINARY, "run", "--example", "swe"}), Strings{"sweet"});
  EXPECT_EQ(bash_complete({ATTN_BINARY, "examples", "show", "hung"}), Strings{"hungry"});
}

TEST(BashCompletion, FlagListsMatchHelp) {
  const std::map<std::string, Strings> commands = {
      {"", {}},           {"run", {"run"}},           {"heatmap", {"heatmap"}},
      {"diff", {"diff"}}, {"examples", {"examples"}}, {"show", {"examples", "show"}},
      {"help", {"help"}}, {"models", {"models"}}};
  for (const auto& [name, command] : commands) {
    EXPECT_EQ(word_set(bash_call("_attn_flags", name)), help_flags(command))
        << "_attn_flags " << name << " in data/completions/attn.bash";
  }
}

TEST(BashCompletion, CommandListMatchesHelp) {
  const auto words = bash_complete({"attn", ""});
  EXPECT_EQ(std::set<std::string>(words.begin(), words.end()), word_set([] {
              std::string s;
              for (const std::string& c : test::help_subcommands({})) s += c + " ";
              return s;
            }()));
  EXPECT_EQ(test::help_subcommands({"examples"}), Strings{"show"});
}

// Every flag that takes a name, with the names the library accepts.
const std::map<std::string, Strings>& name_flags() {
  static const std::map<std::string, Strings> flags = {
      {"--mode", mode_names()},
      {"--variant", variant_names()},
      {"--scale", scale_names()},
      {"--scale-at", scale_at_names()},
      {"--mask-convention", mask_convention_names()},
      {"--fully-masked", fully_masked_names()},
      {"--params-layout", params_layout_names()},
      {"--rope-layout", rope_layout_names()},
      {"--format", format_names()},
      {"-f", format_names()},
      {"--trace-format", trace_format_names()},
      {"--dtype", dtype_names()},
      {"--of", run_of_names()},
      {"--rollout-fusion", rollout_fusion_names()},
      {"--colormap", colormap_names()},
      {"--arch", architecture_names()},
      {"--normalize", normalize_names()},
      {"--reduce", reduce_names()},
      {"--annotate", annotate_names()},
      {"--color", color_names()},
  };
  return flags;
}

TEST(BashCompletion, ValueListsMatchTheLibrary) {
  for (const auto& [flag, names] : name_flags()) {
    std::string want;
    for (const std::string& n : names) want += (want.empty() ? "" : " ") + n;
    EXPECT_EQ(bash_call("_attn_values", flag), want + "\n") << flag;
  }
}

TEST(BashCompletion, SettingChoicesInHelpMatchTheCompletion) {
  // `attn run --help` prints the choices of settings as "...: a|b|c".
  const test::Run help = test::run_attn({"run", "--help"});
  for (const char* flag : {"--mode", "--variant", "--scale", "--scale-at", "--mask-convention",
                           "--fully-masked", "--params-layout", "--rope-layout"}) {
    const size_t at = help.out.find(std::string("  ") + flag + " ");
    ASSERT_NE(at, std::string::npos) << flag;
    const std::string line = help.out.substr(at, help.out.find('\n', at) - at);
    std::string choices = line.substr(line.rfind(": ") + 2);
    for (char& c : choices) c = c == '|' ? ' ' : c;
    EXPECT_EQ(choices + "\n", bash_call("_attn_values", flag)) << line;
  }
}

TEST(BashCompletion, EveryNameFlagInHelpHasValues) {
  // Options whose help shows a NAME/FORMAT/STAGE/HOW/WHEN placeholder take a name.
  for (const char* cmd : {"run", "heatmap", "diff"}) {
    const test::Run help = test::run_attn({cmd, "--help"});
    for (const char* placeholder : {" NAME ", " FORMAT ", " STAGE ", " HOW ", " WHEN "}) {
      size_t at = 0;
      while ((at = help.out.find(placeholder, at)) != std::string::npos) {
        const size_t line_start = help.out.rfind('\n', at) + 1;
        std::string flag = help.out.substr(line_start + 2, at - line_start - 2);
        flag = flag.substr(flag.rfind(',') == std::string::npos ? 0 : flag.rfind(',') + 1);
        at += 1;
        if (flag == "--example" || flag == "--key") continue;  // not a fixed list
        EXPECT_TRUE(name_flags().count(flag)) << cmd << " " << flag << " has no value list";
      }
    }
  }
}

// The zsh script, read as text: every flag of every command appears.
TEST(ZshCompletion, ListsEveryFlagAndValue) {
  const std::string text = test::read_text(source_path("data/completions/_attn"));
  for (const Strings& cmd :
       {Strings{}, Strings{"run"}, Strings{"heatmap"}, Strings{"diff"}, Strings{"examples"}}) {
    for (const std::string& flag : help_flags(cmd)) {
      const bool found = text.find("'" + flag) != std::string::npos ||
                         text.find("," + flag) != std::string::npos ||
                         text.find("{" + flag) != std::string::npos ||
                         text.find(")" + flag) != std::string::npos;
      EXPECT_TRUE(found) << flag << " of '" << (cmd.empty() ? "" : cmd[0]) << "'";
    }
  }
  for (const auto& [flag, names] : name_flags()) {
    std::string list = "(";
    for (const std::string& n : names) list += (list.size() > 1 ? " " : "") + n;
    list += ")";
    EXPECT_NE(text.find(list), std::string::npos) << flag << " " << list;
  }
}

// zsh itself completes `attn run --var<TAB>`, typed into an interactive zsh
// on a pseudo-terminal (zsh/zpty), when zsh is installed. READY and the
// prompt "ZP> " appear only once compinit ran and the line editor waits
// (the echo of the typed setup shows "RE""ADY" and "Z%{%}P"), so the tab
// reaches the line editor with completion on.
TEST(ZshCompletion, CompletesVarToVariant) {
  if (test::find_program("zsh").empty()) GTEST_SKIP() << "zsh is not installed";
  if (!test::have_pty())
    GTEST_SKIP() << "no pseudo-terminals here (/dev/pts); zsh's zpty needs one";
  const std::string bin_dir =
      std::string(ATTN_BINARY).substr(0, std::string(ATTN_BINARY).rfind('/'));
  const std::string script = test::write_temp(
      "zsh_complete.zsh", R"(
zmodload zsh/zpty || exit 3
zpty z 'zsh -f -i'
zpty -w z 'PS1="Z%{%}P> "; PATH=)" +
                              bin_dir + R"(:$PATH; fpath=()" + source_path("data/completions") +
                              R"( $fpath); autoload -Uz compinit; compinit -u -D; print RE""ADY'
zpty -r z out '*READY*ZP> *' || exit 4
zpty -w -n z $'attn run --var\t'
zpty -w -n z $'\C-e MARK\n'
zpty -r z out '*MARK*' || exit 5
print -r -- "$out"
zpty -d z
)");
  const test::Shell r = sh("timeout 60 zsh -f " + quote(script));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  // Only "--var" was typed; the rest is zsh's (with terminal codes around "=").
  EXPECT_NE(r.out.find("run --variant"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace attn
