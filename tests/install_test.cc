// What `cmake --install` puts in place, and the manual page: every command
// and every flag `attn ... --help` shows is in docs/attn.1, the page renders
// without warnings, and the installed binary runs the installed examples.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::sh;
using test::source_path;

// The page's text with roff's escaped hyphens and backslashes made plain.
std::string man_text() {
  std::string s = test::read_text(source_path("docs/attn.1"));
  s = std::regex_replace(s, std::regex(R"(\\-)"), "-");
  s = std::regex_replace(s, std::regex(R"(\\e)"), "\\");
  return s;
}

// True when `flag` occurs as a whole flag (--head is not found in --heads).
bool has_flag(const std::string& text, const std::string& flag) {
  for (size_t at = text.find(flag); at != std::string::npos; at = text.find(flag, at + 1)) {
    const size_t end = at + flag.size();
    const bool starts =
        at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '-');
    const bool ends = end == text.size() ||
                      !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '-');
    if (starts && ends) return true;
  }
  return false;
}

TEST(ManPage, NamesEveryCommandAndEveryFlag) {
  const std::string page = man_text();
  std::vector<std::vector<std::string>> commands = {{}};
  for (const std::string& c : test::help_subcommands({})) {
    commands.push_back({c});
    EXPECT_NE(page.find("\n.B " + c + "\n"), std::string::npos)
        << "docs/attn.1 lacks the command '" << c << "' under COMMANDS";
    for (const std::string& sub : test::help_subcommands({c})) {
      commands.push_back({c, sub});
      EXPECT_NE(page.find(c + " " + sub), std::string::npos)
          << "docs/attn.1 lacks '" << c << " " << sub << "'";
    }
  }
  for (const auto& command : commands) {
    for (const std::string& flag : test::help_flags(command)) {
      EXPECT_TRUE(has_flag(page, flag)) << "docs/attn.1 lacks " << flag << " of 'attn"
                                        << (command.empty() ? "" : " " + command[0]) << "'";
    }
  }
}

TEST(ManPage, RendersWithoutWarnings) {
  const std::string page = source_path("docs/attn.1");
  const std::string text = test::read_text(page);
  EXPECT_EQ(text.find("\n.TH ATTN 1 "), text.find("\n.TH"));
  for (const char* section : {"NAME", "SYNOPSIS", "DESCRIPTION", "EXIT STATUS", "ENVIRONMENT"}) {
    EXPECT_NE(text.find(std::string("\n.SH ") + section + "\n"), std::string::npos) << section;
  }
  if (test::find_program("groff").empty()) GTEST_SKIP() << "groff is not installed; not rendered";
  for (const char* device : {"ascii", "utf8"}) {
    // -P-cbou: plain text, without the overstrikes that make bold.
    const test::Shell r = sh(std::string("groff -man -T") + device + " -P-cbou -ww " + quote(page));
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(r.err, "") << device;
    EXPECT_NE(r.out.find("compute, check and visualize attention"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--variant NAME"), std::string::npos);
  }
}

TEST(Install, PutsProgramManPageCompletionsAndExamplesInPlace) {
  const std::string prefix = test::temp_dir() + "/prefix";
  const test::Shell install =
      sh(quote(ATTN_CMAKE) + " --install " + quote(ATTN_BUILD_DIR) + " --prefix " + quote(prefix));
  ASSERT_EQ(install.code, 0) << install.out << install.err;
  for (const char* f :
       {"bin/attn", "share/man/man1/attn.1", "share/bash-completion/completions/attn",
        "share/zsh/site-functions/_attn"}) {
    EXPECT_TRUE(fs::is_regular_file(prefix + "/" + f)) << f;
  }
  // Every data/examples file is installed, and the installed binary runs it.
  int examples = 0;
  for (const auto& e : fs::directory_iterator(source_path("data/examples"))) {
    const std::string installed = prefix + "/share/attn/examples/" + e.path().filename().string();
    ASSERT_TRUE(fs::is_regular_file(installed)) << installed;
    const test::Shell r = sh(quote(prefix + "/bin/attn") + " run " + quote(installed) + " -q");
    EXPECT_EQ(r.code, 0) << installed << ": " << r.err;
    ++examples;
  }
  EXPECT_GE(examples, 9);
  // The tiny models are installed, and the installed binary computes a
  // checkpoint's layer and draws a stack's model view from them.
  const std::string models = prefix + "/share/attn/models";
  const test::Shell layer =
      sh(quote(prefix + "/bin/attn") + " run --checkpoint " + quote(models + "/tiny-llama-bf16") +
         " --layer 1 --x " + quote(models + "/tiny-llama-bf16/x_layer1.npy") + " --expect " +
         quote(models + "/tiny-llama-bf16/attn_out_layer1.npy") + " -q -o /dev/null");
  EXPECT_EQ(layer.code, 0) << layer.out << layer.err;
  const test::Shell view =
      sh(quote(prefix + "/bin/attn") + " heatmap " + quote(models + "/tiny-bert/attentions.npy") +
         " --tokens " + quote(models + "/tiny-bert/tokens.json") + " -o " +
         quote(prefix + "/view.svg"));
  EXPECT_EQ(view.code, 0) << view.err;
  EXPECT_FALSE(fs::exists(models + "/make_tiny_models.py"));
  // The built-in examples need no files at all.
  const test::Shell sweet = sh("cd / && " + quote(prefix + "/bin/attn") + " run --example sweet");
  EXPECT_EQ(sweet.code, 0) << sweet.err;
  EXPECT_NE(sweet.out.find("sweet  0.0000  0.1780  3.8220  0.0000"), std::string::npos);
  // The installed bash completion works from its installed place.
  const test::Shell comp =
      sh("exec bash --norc --noprofile -c " +
         quote("source " + quote(prefix + "/share/bash-completion/completions/attn") +
               "; COMP_WORDS=(attn run --var); COMP_CWORD=2; _attn; echo \"${COMPREPLY[*]}\""));
  EXPECT_EQ(comp.out, "--variant\n") << comp.err;
  if (!test::find_program("man").empty()) {
    const test::Shell man =
        sh("MANWIDTH=80 man -l " + quote(prefix + "/share/man/man1/attn.1") + " 2>&1 | cat");
    EXPECT_EQ(man.code, 0);
    EXPECT_NE(man.out.find("EXIT STATUS"), std::string::npos) << man.out;
  }
}

// Words of the team that wrote attn, which mean nothing to its users: the
// name of its internal specification, its shared folder, and its numbered
// source files ("seed 003"), which also read as a random seed.
const std::regex& team_words() {
  // "seed" only as a word of its own: the binary's symbol table holds
  // mangled names such as "OptionDefaultsEED2Ev". The embedded DejaVu
  // font's licence says "IN AN ACTION OF CONTRACT, TORT OR OTHERWISE".
  static const std::regex words(
      R"((^|[^F] )CONTRACT|shared/|(^|[^A-Za-z0-9_])[Ss][Ee][Ee][Dd][ _]?[0-9])");
  return words;
}

// The first team word in text, with what surrounds it; "" when there is none.
std::string team_word(const std::string& text) {
  std::smatch m;
  if (!std::regex_search(text, m, team_words())) return "";
  const size_t at = static_cast<size_t>(m.position(0));
  const size_t from = at < 40 ? 0 : at - 40;
  return "'" + m.str(0) + "' in: ..." + text.substr(from, 100) + "...";
}

TEST(Install, NoTeamWordsInInstalledFilesExamplesOrHelp) {
  const std::string prefix = test::temp_dir() + "/prefix_words";
  const test::Shell install =
      sh(quote(ATTN_CMAKE) + " --install " + quote(ATTN_BUILD_DIR) + " --prefix " + quote(prefix));
  ASSERT_EQ(install.code, 0) << install.out << install.err;
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(prefix)) {
    if (!e.is_regular_file()) continue;
    ++files;
    EXPECT_EQ(team_word(test::read_text(e.path().string())), "") << e.path();
  }
  EXPECT_GE(files, 13);
  // What the program shows: the example list, each example and its trace,
  // and the help of every command.
  const test::Run list = test::run_attn({"examples"});
  EXPECT_EQ(team_word(list.out), "") << "attn examples";
  for (const std::string& name : std::vector<std::string>{
           "additive", "biattention", "causal", "cross_shapes", "d2l_valid_lens", "hungry",
           "key_padding", "multihead", "shapes", "sweet"}) {
    EXPECT_NE(list.out.find(name + " "), std::string::npos) << name;
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"examples", "show", name},
          std::vector<std::string>{"run", "--example", name, "--trace", "-q"}}) {
      const test::Run r = test::run_attn(args);
      EXPECT_EQ(r.code, 0) << name << ": " << r.err;
      EXPECT_EQ(team_word(r.out + r.err), "") << args[0] << " " << name;
    }
  }
  std::vector<std::vector<std::string>> commands = {{}};
  for (const std::string& c : test::help_subcommands({})) {
    commands.push_back({c});
    for (const std::string& sub : test::help_subcommands({c})) commands.push_back({c, sub});
  }
  EXPECT_GE(commands.size(), 6u);
  for (std::vector<std::string> args : commands) {
    args.push_back("--help");
    const test::Run r = test::run_attn(args);
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(team_word(r.out), "") << "attn " << args.front() << " --help";
  }
  EXPECT_EQ(team_word(test::run_attn({"--version"}).out), "");
}

}  // namespace
}  // namespace attn
