// The folders of lib/src are floors, and includes run down them only: a
// file includes the public headers (attn/...), its own folder's, and those
// of the floors below it, never one above. The order is written here and
// in docs/architecture.md ("Floors"), which this test holds to it. Above
// the floors, the installed core includes only itself, and the program
// (app/) includes installed headers and those of the library's private
// headers that say they are exported to it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// From the bottom.
const std::vector<std::string> kFloors = {"base",     "io",      "tokenizer", "kernel",
                                          "heatmap",  "problem", "trace",     "engine",
                                          "variants", "model",   "analysis"};

int floor_of(const std::string& folder) {
  auto it = std::find(kFloors.begin(), kFloors.end(), folder);
  return it == kFloors.end() ? -1 : static_cast<int>(it - kFloors.begin());
}

TEST(Floors, EveryFolderOfTheLibraryIsAFloor) {
  for (const auto& e : fs::directory_iterator(test::source_path("lib/src"))) {
    if (!e.is_directory()) continue;
    EXPECT_GE(floor_of(e.path().filename().string()), 0)
        << e.path().filename().string() << "/ is in no floor: add it to kFloors and to "
        << "docs/architecture.md";
  }
}

TEST(Floors, IncludesRunDownOnly) {
  const std::regex include(R"re(^\s*#\s*include\s+"([a-z_]+)/[^"]+")re");
  std::vector<std::string> up;
  const fs::path root = test::source_path("lib/src");
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = fs::relative(e.path(), root);
    const std::string folder = rel.begin()->string();
    const int here = floor_of(folder);
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string target = m[1];
      if (target == "attn" || target == folder) continue;
      const int there = floor_of(target);
      if (there < 0 || there > here) up.push_back(rel.string() + ": " + line);
    }
  }
  std::string list;
  for (const std::string& u : up) list += "  " + u + "\n";
  EXPECT_TRUE(up.empty()) << "includes of a floor above (or of no floor):\n" << list;
}

TEST(Floors, TheArchitecturePageDrawsTheSameOrder) {
  std::ifstream in(test::source_path("docs/architecture.md"));
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string order;
  for (const std::string& f : kFloors) order += (order.empty() ? "`" : " → `") + f + "/`";
  EXPECT_NE(page.find(order), std::string::npos) << "docs/architecture.md should say:\n" << order;
}

// The line an exported private header carries in its opening comment.
const char kExported[] = "Exported to the program (app/)";

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The quoted includes of a file.
std::vector<std::string> includes_of(const fs::path& p) {
  const std::regex include(R"re(^\s*#\s*include\s+"([^"]+)")re");
  std::vector<std::string> out;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, include)) out.push_back(m[1]);
  }
  return out;
}

TEST(Floors, TheInstalledCoreIncludesOnlyItself) {
  const fs::path core = test::source_path("lib/include/attn");
  for (const auto& e : fs::directory_iterator(core)) {
    for (const std::string& inc : includes_of(e.path())) {
      EXPECT_TRUE(inc.rfind("attn/", 0) == 0 && fs::exists(core / inc.substr(5)))
          << e.path().filename().string() << " includes " << inc
          << ", which is not a header of the core (lib/include/attn)";
    }
  }
}

// app/ includes its own headers, the installed ones (attn/...), and the
// library's private headers only where the header says it is exported to
// the program; a header that says so is one the program includes.
TEST(Floors, TheProgramIncludesInstalledOrExportedHeadersOnly) {
  const fs::path app = test::source_path("app"), src = test::source_path("lib/src");
  std::set<std::string> used;
  for (const auto& e : fs::recursive_directory_iterator(app)) {
    if (!e.is_regular_file()) continue;
    for (const std::string& inc : includes_of(e.path())) {
      if (inc.rfind("attn/", 0) == 0 || fs::exists(app / inc) ||
          fs::exists(e.path().parent_path() / inc)) {
        continue;
      }
      const std::string where = fs::relative(e.path(), app).string();
      if (!fs::exists(src / inc)) {
        ADD_FAILURE() << "app/" << where << " includes " << inc << ", found nowhere";
        continue;
      }
      used.insert(inc);
      EXPECT_NE(read(src / inc).find(kExported), std::string::npos)
          << "app/" << where << " includes lib/src/" << inc
          << ", a private header that does not say \"" << kExported << "\"";
    }
  }
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file() || e.path().extension() != ".h") continue;
    const std::string rel = fs::relative(e.path(), src).string();
    if (read(e.path()).find(kExported) != std::string::npos) {
      EXPECT_TRUE(used.count(rel)) << "lib/src/" << rel << " says it is exported to the "
                                   << "program, which does not include it";
    }
  }
  EXPECT_FALSE(used.empty());
}

}  // namespace
}  // namespace attn
