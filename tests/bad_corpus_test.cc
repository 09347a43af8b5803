// The bad-input corpus (tests/bad/): files a user could produce, each run
// through the real attn binary and held to the exit code and the exact
// message of its sidecar NAME.expected (see tests/bad/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string file;  // name in tests/bad
  int code = 0;
  std::string message;  // stderr without the newline; "" for none
  std::vector<std::string> args;
};

std::string corpus_dir() { return test::source_path("tests/bad"); }

std::string substitute(std::string s, const std::string& path) {
  for (auto [token, value] : {std::pair<std::string, std::string>{"{path}", path},
                              {"{src}", std::string(ATTN_SOURCE_DIR)}}) {
    for (size_t at = s.find(token); at != std::string::npos;
         at = s.find(token, at + value.size())) {
      s.replace(at, token.size(), value);
    }
  }
  return s;
}

std::vector<std::string> corpus_files() {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(corpus_dir())) {
    const std::string n = e.path().filename().string();
    if (n == "README.md" || e.path().extension() == ".expected" || e.path().extension() == ".py")
      continue;
    names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Case load_case(const std::string& file) {
  Case c;
  c.file = file;
  const std::string path = corpus_dir() + "/" + file;
  std::istringstream in(test::read_text(path + ".expected"));
  std::string code, line;
  std::getline(in, code);
  c.code = code.empty() ? -1 : std::stoi(code);
  std::getline(in, c.message);
  c.message = substitute(c.message, path);
  std::string args = "run {path}";
  while (std::getline(in, line)) {
    if (line.rfind("args: ", 0) == 0) args = line.substr(6);
  }
  std::istringstream words(args);
  for (std::string w; words >> w;) c.args.push_back(substitute(w, path));
  return c;
}

class BadInput : public ::testing::TestWithParam<std::string> {};

TEST_P(BadInput, ExitCodeAndExactMessage) {
  const std::string path = corpus_dir() + "/" + GetParam();
  ASSERT_TRUE(fs::exists(path + ".expected")) << "no sidecar " << GetParam() << ".expected";
  const Case c = load_case(GetParam());
  const test::Run r = test::run_attn(c.args);
  EXPECT_EQ(r.code, c.code) << r.err;
  EXPECT_EQ(r.err, c.message.empty() ? "" : c.message + "\n");
  if (c.code != 0) {
    EXPECT_EQ(r.out, "") << "nothing goes to stdout on error";
    // Every message names the file it is about.
    EXPECT_NE(c.message.find(path), std::string::npos) << c.message;
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInput, ::testing::ValuesIn(corpus_files()), test_name);

TEST(BadInputCorpus, IsLargeAndEveryFileHasASidecar) {
  const std::vector<std::string> files = corpus_files();
  EXPECT_GE(files.size(), 60u);
  for (const fs::directory_entry& e : fs::directory_iterator(corpus_dir())) {
    if (e.path().extension() != ".expected") continue;
    EXPECT_TRUE(fs::exists(e.path().parent_path() / e.path().stem()))
        << e.path().filename() << " has no corpus file";
  }
}

// docs/errors.md keeps up with the corpus: every message in it contains a
// fragment from the first column of a table under "Common messages".
TEST(BadInputCorpus, EveryMessageIsExplainedInErrorsMd) {
  const std::string doc = test::read_text(test::source_path("docs/errors.md"));
  const size_t start = doc.find("## Common messages");
  ASSERT_NE(start, std::string::npos);
  std::vector<std::string> fragments;
  std::istringstream lines(doc.substr(start));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::string first = line.substr(0, line.find(" |", 2));
    for (size_t open = first.find('`'); open != std::string::npos;) {
      const size_t close = first.find('`', open + 1);
      if (close == std::string::npos) break;
      const std::string f = first.substr(open + 1, close - open - 1);
      if (f.size() >= 6) fragments.push_back(f);
      open = first.find('`', close + 1);
    }
  }
  ASSERT_GE(fragments.size(), 60u);
  for (const std::string& file : corpus_files()) {
    const Case c = load_case(file);
    if (c.code == 0) continue;
    const bool explained =
        std::any_of(fragments.begin(), fragments.end(),
                    [&](const std::string& f) { return c.message.find(f) != std::string::npos; });
    EXPECT_TRUE(explained) << file << ": no fragment of docs/errors.md in " << c.message;
  }
}

}  // namespace
}  // namespace attn
