// Result files read back: every result attn writes (JSON, .npz) reads back
// into attn heatmap and attn diff, the longest labels included, and what a
// result says of its numbers must fit them.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn {
namespace {

using test::run_attn;
using test::temp_dir;
using test::write_temp;

TEST(ResultFiles, ResultsWithTheLongestLabelsReadBack) {
  const std::string x = write_temp("two_rows.json", "[[1, 0], [0, 1]]");
  // A label of 1,000,000 characters (the npz's '<U1000000'), as a token.
  const std::string tok = write_temp("long_tokens.txt", std::string(1000000, 'a') + "\nb\n");
  const std::string npz = temp_dir() + "/long.npz", json = temp_dir() + "/long.json";
  ASSERT_EQ(run_attn({"run", "--x", x, "--tokens", tok, "-o", npz, "-w"}).code, 0);
  ASSERT_EQ(run_attn({"run", "--x", x, "--tokens", tok, "-o", json, "-w", "-f", "json"}).code, 0);
  for (const std::string& f : {npz, json}) {
    const auto r = run_attn({"heatmap", f, "-o", temp_dir() + "/long.svg"});
    EXPECT_EQ(r.code, 0) << f << ": " << r.err;
  }
  // One byte more than a result can hold is refused before anything is written.
  const std::string too_long =
      write_temp("too_long_tokens.txt", std::string((1u << 20) + 1, 'a') + "\nb\n");
  const auto r = run_attn({"run", "--x", x, "--tokens", too_long, "-o", npz});
  EXPECT_EQ(r.code, 2) << r.err;  // labels from a flag's file, as a count that does not fit
  EXPECT_NE(r.err.find("label 0 has 1048577 bytes; labels are limited to 1048576 bytes"),
            std::string::npos)
      << r.err;
}

TEST(ResultFiles, TamperedResultsAreRefusedNotDrawn) {
  const auto base = run_attn({"run", "--example", "sweet", "-f", "json", "-w"});
  ASSERT_EQ(base.code, 0);
  const nlohmann::json result = nlohmann::json::parse(base.out);
  struct Case {
    std::string name;
    std::function<void(nlohmann::json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"short_labels", [](nlohmann::json& d) { d["labels"]["queries"].erase(0); },
       ": labels.queries: 3 labels for 4 queries (rows of weights [4][4])"},
      {"axes",
       [](nlohmann::json& d) {
         d["weights_axes"] = {"foo", "bar"};
       },
       ": weights_axes: [foo, bar] are not the axes of weights [4][4]; an attn result names them "
       "[batch, heads,] queries, keys"},
      {"masked",
       [](nlohmann::json& d) {
         d["masked"] =
             nlohmann::json::array({{2, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}});
       },
       ": masked[0][0]: mask cells must be true/false or 0/1, got 2"},
      {"title", [](nlohmann::json& d) { d["title"] = 5; }, ": title: expected a string, got 5"},
      {"unknown", [](nlohmann::json& d) { d["extra"] = 1; },
       ": unknown key \"extra\" in an attn result (it holds labels, labels_readable, title, "
       "settings, output, weights, weights_axes, masked, similarity)"},
  };
  for (const Case& c : cases) {
    nlohmann::json d = result;
    c.edit(d);
    const std::string f = write_temp("tampered_" + c.name + ".json", d.dump());
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"heatmap", f, "-o", temp_dir() + "/t.svg"},
          std::vector<std::string>{"diff", f, f}}) {
      const auto r = run_attn(args);
      EXPECT_EQ(r.code, 3) << c.name << ": " << r.err;
      EXPECT_EQ(r.err, "attn: error: " + f + c.message + "\n") << args[0];
    }
  }
}

}  // namespace
}  // namespace attn
