// The code follows .clang-format: clang-format, where installed, finds
// nothing to change in any C++ file of the repository.
#include <gtest/gtest.h>

#include <string>

#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

TEST(Format, CodeFollowsClangFormat) {
  if (test::find_program("clang-format").empty()) {
    GTEST_SKIP() << "clang-format is not installed (apt-get install clang-format)";
  }
  const std::string root = test::source_path("");
  const test::Shell r = test::sh(
      "cd " + test::quote(root) +
      " && git ls-files 'lib/*.cc' 'lib/*.h' 'app/*.cc' 'app/*.h' 'tests/*.cc' 'tests/*.h'"
      " | xargs clang-format --dry-run --Werror 2>&1 | grep -E 'warning|error' | head -20");
  EXPECT_EQ(r.out, "") << "run clang-format -i on these files";
}

}  // namespace
}  // namespace attn
