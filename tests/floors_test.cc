// The folders of lib/src are floors, and includes run down them only: a
// file includes the public headers (attn/...), its own folder's, and those
// of the floors below it, never one above. The order is written here and
// in docs/architecture.md ("Floors"), which this test holds to it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
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

}  // namespace
}  // namespace attn
