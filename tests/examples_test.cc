// Built-in examples: each checks out against its expected numbers (from the
// posts, or NumPy for the made-up ones), and every one runs by name from an
// installed binary outside the source tree.
#include "commands/examples.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace attn {
namespace {

TEST(Examples, TheListedOnesExist) {
  for (const char* name : {"sweet", "hungry", "d2l_valid_lens", "shapes", "cross_shapes", "causal",
                           "multihead", "additive", "biattention", "key_padding", "llama",
                           "mistral_window", "gemma2", "gpt_oss", "bloom_alibi", "rope_relative"}) {
    EXPECT_NE(find_example(name), nullptr) << name;
  }
  for (const Example& e : examples()) EXPECT_FALSE(e.title.empty()) << e.name;
}

TEST(Examples, EveryExampleWithExpectedNumbersChecksOut) {
  for (const Example& e : examples()) {
    if (e.name == "sweet" || e.name == "hungry") continue;  // the blog's placement, tested below
    auto doc = nlohmann::json::parse(e.text());
    if (!doc.contains("expected")) continue;
    auto r = test::run_attn({"run", "--example", e.name, "--check", "-q"});
    EXPECT_EQ(r.code, 0) << e.name << "\n" << r.out << r.err;
  }
}

// RoPE's relative-position property: the example shifts every position by
// 1000 and expects the numbers of offset 0; both runs check out.
TEST(Examples, RopeRelativeHoldsAtAnyOffset) {
  for (const char* offset : {"1000,1000", "0,0", "7,7"}) {
    auto r = test::run_attn(
        {"run", "--example", "rope_relative", "--rope-offset", offset, "--check", "-q"});
    EXPECT_EQ(r.code, 0) << offset << "\n" << r.out;
  }
  auto r = test::run_attn(
      {"run", "--example", "rope_relative", "--rope-offset", "0,1", "--check", "-q"});
  EXPECT_EQ(r.code, 1) << "a relative shift changes the weights";
}

TEST(Examples, CrossAttentionTutorialShapes) {
  auto r = test::run_attn({"run", "--example", "cross_shapes", "-f", "json", "-w"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["output"].size(), 2u);
  EXPECT_EQ(j["output"][0].size(), 10u);
  EXPECT_EQ(j["output"][0][0].size(), 512u);
  EXPECT_EQ(j["weights"].size(), 2u);
  EXPECT_EQ(j["weights"][0].size(), 8u);
  EXPECT_EQ(j["weights"][0][0].size(), 10u);
  EXPECT_EQ(j["weights"][0][0][0].size(), 20u);
}

TEST(Examples, GeneratedExampleIsDeterministic) {
  EXPECT_EQ(cross_shapes_example(), cross_shapes_example());
  EXPECT_EQ(find_example("cross_shapes")->text().substr(0, 80),
            cross_shapes_example().substr(0, 80));
}

TEST(Examples, RunFromAnInstalledBinary) {
  const std::string prefix = test::temp_dir() + "/prefix";
  const std::string cmd = "cmake --install \"" + std::string(ATTN_BUILD_DIR) + "\" --prefix \"" +
                          prefix + "\" >\"" + test::temp_dir() + "/install.log\" 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << test::read_text(test::temp_dir() + "/install.log");
  const std::string attn = prefix + "/bin/attn";
  for (const Example& e : examples()) {
    // Run from a directory with no data/ next to it.
    const std::string run =
        "cd / && \"" + attn + "\" run --example " + e.name + " -q -f json >/dev/null 2>&1";
    EXPECT_EQ(std::system(run.c_str()), 0) << e.name;
  }
}

}  // namespace
}  // namespace attn
