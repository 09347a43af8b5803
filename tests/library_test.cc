// attn::engine as a library: the program of docs/library.md, taken from
// the page as written, is built with find_package(attn) against a fresh
// `cmake --install` and run; its JSON and its PNG are checked.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "shell_util.h"
#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::quote;
using test::sh;

// The text of the first fenced block of `lang` in a Markdown text.
std::string fenced_block(const std::string& markdown, const std::string& lang) {
  for (const test::CodeBlock& b : test::code_blocks(markdown)) {
    if (b.lang == lang) return b.text;
  }
  return "";
}

TEST(Library, FirstProgramBuildsAgainstAnInstall) {
  const std::string prefix = test::temp_dir() + "/prefix_library";
  const test::Shell install =
      sh(quote(ATTN_CMAKE) + " --install " + quote(ATTN_BUILD_DIR) + " --prefix " + quote(prefix));
  ASSERT_EQ(install.code, 0) << install.out << install.err;
  for (const char* f :
       {"lib/libattn.a", "include/attn/attention.h", "include/attn-toolkit/attn/heatmap.h",
        "lib/cmake/attn/attnConfig.cmake", "lib/cmake/attn/attnTargets.cmake"}) {
    EXPECT_TRUE(fs::is_regular_file(prefix + "/" + f)) << f;
  }
  // The toolkit's headers are apart from the core's, and the program's
  // headers are not the library's.
  EXPECT_FALSE(fs::exists(prefix + "/include/attn/heatmap.h"));
  EXPECT_FALSE(fs::exists(prefix + "/include/attn/run.h"));
  EXPECT_FALSE(fs::exists(prefix + "/include/attn/flags.h"));

  const std::string page = test::read_text(test::source_path("docs/library.md"));
  const std::string program = fenced_block(page, "cpp");
  const std::string cmake = fenced_block(page, "cmake");
  ASSERT_NE(program.find("int main"), std::string::npos);
  ASSERT_NE(cmake.find("find_package(attn"), std::string::npos);
  const std::string project = test::temp_dir() + "/first_project";
  fs::create_directories(project);
  test::write_temp("first_project/first.cc", program);
  test::write_temp("first_project/CMakeLists.txt", cmake);

  // A sanitized attn links only into a sanitized program.
  const std::string flags =
      ATTN_SANITIZED ? " -DCMAKE_CXX_FLAGS='-fsanitize=address,undefined'" : "";
  const test::Shell build = sh("cd " + quote(project) + " && " + quote(ATTN_CMAKE) +
                               " -S . -B build -DCMAKE_PREFIX_PATH=" + quote(prefix) + flags +
                               " && " + quote(ATTN_CMAKE) + " --build build");
  ASSERT_EQ(build.code, 0) << build.out << build.err;
  const test::Shell run = sh("cd " + quote(project) + " && build/first");
  ASSERT_EQ(run.code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["output"].size(), 4u);
  ASSERT_EQ(j["weights"].size(), 4u);
  double row = 0;
  for (const auto& w : j["weights"][0]) row += w.get<double>();
  EXPECT_NEAR(row, 1.0, 1e-12);
  EXPECT_EQ(test::read_text(project + "/weights.png").substr(0, 4), "\x89PNG");
}

// What `find_package(attn)` looks for is exactly what attn::engine links:
// a find_dependency left behind when a library leaves the build (OpenBLAS
// did) fails on every machine that no longer has it, and one missing fails
// the link. The packages are read from the installed files themselves.
TEST(Library, InstalledConfigFindsExactlyWhatTheLibraryLinks) {
  const std::string prefix = test::temp_dir() + "/prefix_config";
  const test::Shell install =
      sh(quote(ATTN_CMAKE) + " --install " + quote(ATTN_BUILD_DIR) + " --prefix " + quote(prefix));
  ASSERT_EQ(install.code, 0) << install.out << install.err;
  const std::string dir = prefix + "/lib/cmake/attn/";
  // find_dependency(Name ...) in attnConfig.cmake, comments left out.
  std::set<std::string> found;
  const std::string config = test::read_text(dir + "attnConfig.cmake");
  const std::regex find_dep(R"(^\s*find_dependency\(\s*([A-Za-z0-9_]+))",
                            std::regex::ECMAScript | std::regex::multiline);
  for (std::sregex_iterator it(config.begin(), config.end(), find_dep), end; it != end; ++it) {
    found.insert((*it)[1]);
  }
  // The namespaces of the targets in INTERFACE_LINK_LIBRARIES of the
  // exported targets (Eigen3::Eigen, $<LINK_ONLY:Freetype::Freetype>, ...),
  // but attn's own (attn::toolkit links attn::engine).
  std::set<std::string> linked;
  const std::string targets = test::read_text(dir + "attnTargets.cmake");
  std::string line;
  for (size_t at = targets.find("INTERFACE_LINK_LIBRARIES"); at != std::string::npos;
       at = targets.find("INTERFACE_LINK_LIBRARIES", at + 1)) {
    line += targets.substr(at, targets.find('\n', at) - at) + "\n";
  }
  ASSERT_FALSE(line.empty()) << targets;
  const std::regex target(R"(([A-Za-z0-9_]+)::[A-Za-z0-9_]+)");
  for (std::sregex_iterator it(line.begin(), line.end(), target), end; it != end; ++it) {
    if ((*it)[1] != "attn") linked.insert((*it)[1]);
  }
  EXPECT_EQ(found, linked) << "attnConfig.cmake:\n" << config << "\nlink interface: " << line;
  EXPECT_EQ(linked, (std::set<std::string>{"Eigen3", "Freetype", "nlohmann_json"})) << line;
}

// Every package the build asks for by name (cmake/dependencies.cmake's
// attn_missing lines) is one scripts/dev.sh installs: a build that needs
// something the README's commands do not install works only on machines
// that happen to have it.
TEST(Library, TheSetUpScriptInstallsEveryPackageTheBuildNeeds) {
  const std::string deps = test::read_text(test::source_path("cmake/dependencies.cmake"));
  const std::string dev = test::read_text(test::source_path("scripts/dev.sh"));
  const size_t from = dev.find("build_pkgs=(");
  ASSERT_NE(from, std::string::npos);
  const std::string build_pkgs = dev.substr(from, dev.find(')', from) - from) + " ";
  const std::regex missing(R"re(attn_missing\("[^"]*"\s+"([^"]+)"\))re");
  int named = 0;
  for (std::sregex_iterator it(deps.begin(), deps.end(), missing), end; it != end; ++it) {
    const std::string package = (*it)[1];
    ++named;
    EXPECT_TRUE(std::regex_search(build_pkgs, std::regex("[ (\n]" + package + "[ \n]")))
        << package << " is needed by the build but not installed by scripts/dev.sh";
  }
  EXPECT_GE(named, 6);
}

// The installed headers are exactly those docs/library.md lists, each in
// its component's table: a header moved into lib/include/attn (the core) or
// lib/include-toolkit/attn joins the API only with its row there.
TEST(Library, InstalledHeadersAreTheDocumentedOnes) {
  const std::string page = test::read_text(test::source_path("docs/library.md"));
  auto listed = [&](const std::string& heading) {
    const size_t from = page.find(heading);
    EXPECT_NE(from, std::string::npos) << heading;
    const std::string section = page.substr(from, page.find("\n## ", from + 1) - from);
    // The first cell of each row of the section's table.
    std::set<std::string> out;
    std::istringstream lines(section);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("| `attn/", 0) != 0) continue;
      const std::string cell = line.substr(0, line.find(" |", 1));
      for (size_t at = cell.find("`attn/"); at != std::string::npos;
           at = cell.find("`attn/", at + 1)) {
        const size_t end = cell.find('`', at + 1);
        out.insert(cell.substr(at + 1, end - at - 1));
      }
    }
    return out;
  };
  auto installed = [](const std::string& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(test::source_path(dir))) {
      out.insert("attn/" + e.path().filename().string());
    }
    return out;
  };
  const std::set<std::string> core = installed("lib/include/attn");
  EXPECT_EQ(listed("## The core: attn::engine"), core);
  EXPECT_EQ(listed("## The toolkit: attn::toolkit"), installed("lib/include-toolkit/attn"));
  // "about a dozen headers at most"
  EXPECT_LE(core.size(), 12u);
}

// A program that asks for attn alone builds against the core and runs;
// the toolkit's headers are not there for it, so including one is a
// compile error, not a dependency taken by accident.
TEST(Library, TheCoreAloneBuildsAndHidesTheToolkit) {
  const std::string prefix = test::temp_dir() + "/prefix_core";
  const test::Shell install =
      sh(quote(ATTN_CMAKE) + " --install " + quote(ATTN_BUILD_DIR) + " --prefix " + quote(prefix));
  ASSERT_EQ(install.code, 0) << install.out << install.err;
  const std::string project = test::temp_dir() + "/core_project";
  fs::create_directories(project);
  test::write_temp("core_project/core.cc", R"(#include <attn/attention.h>
#include <attn/document.h>
#include <attn/error.h>
#include <attn/limits.h>
#include <attn/problem.h>

#include <cstdio>

int main() {
  const attn::Problem p = attn::build_problem(
      attn::read_document(R"j({"mode": "self", "X": [[1, 0], [0, 1], [1, 1]]})j", "core.json"));
  attn::ComputeRequest request;
  request.weights = true;
  attn::check_limits(p, request, attn::LimitOptions{});
  const attn::Result r = attn::compute(p, request);
  double sum = 0;
  for (int64_t i = 0; i < r.weights->size(); ++i) sum += (*r.weights)[i];
  std::printf("%.12f\n", sum);
}
)");
  test::write_temp("core_project/reach.cc", "#include <attn/heatmap.h>\nint main() {}\n");
  test::write_temp("core_project/CMakeLists.txt", R"(cmake_minimum_required(VERSION 3.25)
project(core LANGUAGES CXX)
find_package(attn 0.1 REQUIRED)
add_executable(core core.cc)
target_link_libraries(core PRIVATE attn::engine)
add_executable(reach reach.cc)
target_link_libraries(reach PRIVATE attn::engine)
)");
  const std::string flags =
      ATTN_SANITIZED ? " -DCMAKE_CXX_FLAGS='-fsanitize=address,undefined'" : "";
  const std::string configure = "cd " + quote(project) + " && " + quote(ATTN_CMAKE) +
                                " -S . -B build -DCMAKE_PREFIX_PATH=" + quote(prefix) + flags;
  const test::Shell core =
      sh(configure + " && " + quote(ATTN_CMAKE) + " --build build --target core && build/core");
  ASSERT_EQ(core.code, 0) << core.out << core.err;
  EXPECT_NE(core.out.find("3.000000000000"), std::string::npos) << core.out;  // three rows of 1
  const test::Shell reach =
      sh("cd " + quote(project) + " && " + quote(ATTN_CMAKE) + " --build build --target reach");
  EXPECT_NE(reach.code, 0);
  EXPECT_NE((reach.out + reach.err).find("attn/heatmap.h"), std::string::npos) << reach.out;
}

}  // namespace
}  // namespace attn
