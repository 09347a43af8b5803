// The documentation runs: README.md and docs/from-pytorch.md are executed
// block by block in a scratch directory (with data/ linked in and attn on
// PATH), in order, as a reader would paste them; of docs/tutorial.md and
// docs/cli.md the console blocks run:
//   ```console  each "$ command" runs; what follows it, up to the next "$",
//               is its exact output (stdout and stderr together); a line
//               "..." stands for any number of lines left out
//   ```sh       the whole block runs under bash -e and must succeed
//   ```python   the block runs with Debian's /usr/bin/python3
// A block right after a line "<!-- not run ... -->" is skipped (setup that
// installs packages or builds). Other blocks (json, text) are not run.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::sh;
using test::source_path;
using Block = test::CodeBlock;
using test::code_blocks;

// A scratch directory holding a link to data/, where the commands run.
std::string scratch(const std::string& name) {
  const std::string dir = test::temp_dir() + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::create_directory_symlink(source_path("data"), dir + "/data");
  return dir;
}

// The environment of the commands: attn first on PATH, then Debian's
// python3 (the one with NumPy and PyTorch), then the rest.
std::string environment(const std::string& dir) {
  const std::string bin = std::string(ATTN_BINARY).substr(0, std::string(ATTN_BINARY).rfind('/'));
  return "cd " + quote(dir) + " && export PATH=" + quote(bin) +
         ":/usr/bin:/bin:\"$PATH\" && export COLUMNS=80 && unset NO_COLOR && ";
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// Whether got is expected with each "..." line standing for any number of
// lines (none included).
bool matches_with_gaps(const std::string& expected, const std::string& got) {
  const std::vector<std::string> e = lines_of(expected), g = lines_of(got);
  // fit[i][j]: e[i..] matches g[j..].
  std::vector<std::vector<char>> fit(e.size() + 1, std::vector<char>(g.size() + 1, 0));
  fit[e.size()][g.size()] = 1;
  for (size_t i = e.size(); i-- > 0;) {
    for (size_t j = g.size() + 1; j-- > 0;) {
      if (e[i] == "...") {
        fit[i][j] = fit[i + 1][j] || (j < g.size() && fit[i][j + 1]);
      } else {
        fit[i][j] = j < g.size() && e[i] == g[j] && fit[i + 1][j + 1];
      }
    }
  }
  return fit[0][0];
}

// Runs the blocks of a markdown file (only its console blocks when
// consoles_only); returns how many ran.
int run_markdown(const std::string& rel, const std::string& dir, bool consoles_only = false) {
  const std::vector<Block> blocks = code_blocks(test::read_text(source_path(rel)));
  int ran = 0;
  for (const Block& b : blocks) {
    if (b.skip || (consoles_only && b.lang != "console")) continue;
    const std::string where = rel + ":" + std::to_string(b.line);
    if (b.lang == "console") {
      std::istringstream in(b.text);
      std::string line, command, expected;
      const bool have_jq = !test::find_program("jq").empty();
      auto check = [&] {
        if (command.empty()) return;
        if (!have_jq && command.find("| jq") != std::string::npos) {
          std::printf("%s: not run, jq is not installed: $ %s\n", where.c_str(), command.c_str());
          command.clear();
          expected.clear();
          return;
        }
        const test::Shell r =
            sh(environment(dir) + "bash -o pipefail -c " + quote(command) + " 2>&1");
        if (expected.find("...\n") == std::string::npos) {
          EXPECT_EQ(r.out, expected) << where << ": $ " << command;
        } else {
          EXPECT_TRUE(matches_with_gaps(expected, r.out))
              << where << ": $ " << command << "\nexpected (... for lines left out):\n"
              << expected << "got:\n"
              << r.out;
        }
        command.clear();
        expected.clear();
      };
      while (std::getline(in, line)) {
        if (line.rfind("$ ", 0) == 0) {
          check();
          command = line.substr(2);
        } else {
          expected += line + "\n";
        }
      }
      check();
      ++ran;
    } else if (b.lang == "sh") {
      const std::string script = test::write_temp("block.sh", b.text);
      const test::Shell r = sh(environment(dir) + "bash -e -o pipefail " + quote(script));
      EXPECT_EQ(r.code, 0) << where << ":\n" << b.text << r.out << r.err;
      ++ran;
    } else if (b.lang == "python") {
      const std::string script = test::write_temp("block.py", b.text);
      const test::Shell r = sh(environment(dir) + "/usr/bin/python3 " + quote(script));
      EXPECT_EQ(r.code, 0) << where << ":\n" << b.text << r.out << r.err;
      ++ran;
    }
  }
  return ran;
}

TEST(Docs, ReadmeRunsAsWritten) { EXPECT_GE(run_markdown("README.md", scratch("readme")), 5); }

TEST(Docs, FromPytorchRunsAsWritten) {
  const test::Shell py = sh("/usr/bin/python3 -c 'import numpy, torch'");
  if (py.code != 0) {
    GTEST_SKIP() << "/usr/bin/python3 lacks NumPy or PyTorch (apt-get install python3-numpy "
                    "python3-torch); docs/from-pytorch.md not run";
  }
  EXPECT_GE(run_markdown("docs/from-pytorch.md", scratch("from_pytorch")), 8);
}

TEST(Docs, TutorialRunsAsWritten) {
  const test::Shell py = sh("/usr/bin/python3 -c 'import numpy, torch'");
  if (py.code != 0) {
    GTEST_SKIP() << "/usr/bin/python3 lacks NumPy or PyTorch (apt-get install python3-numpy "
                    "python3-torch); its section 8 needs them, so docs/tutorial.md is not run";
  }
  EXPECT_GE(run_markdown("docs/tutorial.md", scratch("tutorial"), true), 30);
}

TEST(Docs, CliReferenceRunsAsWritten) {
  EXPECT_GE(run_markdown("docs/cli.md", scratch("cli"), true), 3);
}

TEST(Docs, AnalysesRunAsWritten) {
  EXPECT_GE(run_markdown("docs/analyses.md", scratch("analyses"), true), 6);
}

TEST(Docs, GapsInExpectedOutputMatchAnyLines) {
  EXPECT_TRUE(matches_with_gaps("a\n...\nd\n", "a\nb\nc\nd\n"));
  EXPECT_TRUE(matches_with_gaps("a\n...\nd\n", "a\nd\n"));
  EXPECT_TRUE(matches_with_gaps("...\nc\n...\n", "a\nb\nc\nd\n"));
  EXPECT_FALSE(matches_with_gaps("a\n...\nd\n", "a\nb\nc\n"));
  EXPECT_FALSE(matches_with_gaps("a\nb\n", "a\nc\n"));
}

TEST(Docs, CliReferenceNamesEveryFlag) {
  const std::string page = test::read_text(source_path("docs/cli.md"));
  for (const std::string& c : test::help_subcommands({})) {
    EXPECT_NE(page.find("## attn " + c), std::string::npos)
        << "docs/cli.md lacks a section on " << c;
    std::vector<std::string> command = {c};
    for (const std::string& flag : test::help_flags(command)) {
      if (flag == "-h" || flag == "--help") continue;
      // `--head H`, `--head`, `-f, --format`: the flag in a code span,
      // then no more name.
      bool found = false;
      for (size_t at = page.find(flag); at != std::string::npos && !found;
           at = page.find(flag, at + 1)) {
        const char before = at > 0 ? page[at - 1] : '\n';
        const char next = page[at + flag.size()];
        found = (before == '`' || before == ' ') &&
                (next == ' ' || next == '`' || next == ',' || next == '=');
      }
      EXPECT_TRUE(found) << "docs/cli.md lacks " << flag << " of attn " << c;
    }
  }
}

}  // namespace
}  // namespace attn
