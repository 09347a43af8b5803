// The settings table (lib/src/io/settings.h): every row complete, every
// flag's value surviving the merge of the flags over a document, and every
// key and flag in the pages that describe them.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "attn/document.h"
#include "attn/error.h"
#include "base/number_text.h"
#include "io/settings.h"
#include "test_util.h"

namespace attn {
namespace {

// Every field of RunSettings as text, so two settings can be compared. A
// field added to RunSettings is added here too; the merge test below then
// fails until some row merges it.
std::string text_of(const RunSettings& s) {
  std::string t;
  auto put = [&t](const char* name, const auto& field, auto show) {
    t += std::string(name) + "=" + (field ? show(*field) : std::string("unset")) + ";";
  };
  auto num = [](double v) { return format_shortest(v); };
  auto integer = [](auto v) { return std::to_string(v); };
  auto boolean = [](bool v) { return std::string(v ? "true" : "false"); };
  auto named = [](auto v) { return std::string(name(v)); };
  auto list = [](const std::vector<double>& v) {
    std::string r;
    for (double x : v) r += format_shortest(x) + ",";
    return r;
  };
  put("mode", s.mode, named);
  put("variant", s.variant, named);
  put("heads", s.heads, integer);
  put("scale", s.scale, [](const Scale& x) { return name(x); });
  put("temperature", s.temperature, num);
  put("scale_at", s.scale_at, named);
  put("causal", s.causal, boolean);
  put("causal_bottom_right", s.causal_bottom_right, boolean);
  put("q_offset", s.q_offset, integer);
  put("k_offset", s.k_offset, integer);
  put("mask_convention", s.mask_convention, named);
  put("mask_fill", s.mask_fill, num);
  put("fully_masked", s.fully_masked, named);
  put("dropout", s.dropout, num);
  put("seed", s.seed, integer);
  put("params_layout", s.params_layout, named);
  put("kv_heads", s.kv_heads, integer);
  put("rope", s.rope, boolean);
  put("rope_theta", s.rope_theta, num);
  put("rope_dims", s.rope_dims, integer);
  put("rope_layout", s.rope_layout, named);
  put("rope_q_offset", s.rope_q_offset, integer);
  put("rope_k_offset", s.rope_k_offset, integer);
  put("rope_scaling", s.rope_scaling, [](const RopeScaling& r) {
    return std::string(rope_scaling_name(r.kind)) + format_shortest(r.factor);
  });
  put("qk_norm", s.qk_norm, num);
  put("alibi", s.alibi, boolean);
  put("alibi_slopes", s.alibi_slopes, list);
  put("window", s.window, [](const std::pair<int64_t, int64_t>& w) {
    return std::to_string(w.first) + "," + std::to_string(w.second);
  });
  put("softcap", s.softcap, num);
  put("sinks", s.sinks, list);
  return t;
}

// A value each flag accepts.
std::string sample(const Setting& s) {
  if (s.form == Setting::Form::kSwitch) return "";
  if (s.choices != nullptr) return s.choices().back();
  const std::string p(s.placeholder);
  if (s.flag == "--qk-norm" || s.flag == "--dropout") return "0.25";
  if (s.flag == "--rope-dims") return "4";
  if (s.flag == "--rope-offset") return "3,2";
  if (p == "W|L,R") return "2,1";
  if (p == "X[,X...]") return "0.5,1.5";
  return "3";
}

TEST(SettingsTable, RowsAreComplete) {
  std::set<std::string> flags, keys;
  for (const Setting& s : settings_table()) {
    SCOPED_TRACE(std::string(s.key) + " " + std::string(s.flag));
    EXPECT_FALSE(s.key.empty() && s.flag.empty());
    if (!s.flag.empty()) {
      EXPECT_TRUE(flags.insert(std::string(s.flag)).second) << "flag listed twice";
      EXPECT_EQ(s.flag.substr(0, 2), "--");
      EXPECT_NE(s.from_text, nullptr);
      // The help ends with the default, as every flag's help does.
      EXPECT_NE(s.help.find("(default"), std::string_view::npos);
      EXPECT_EQ(s.help.back(), ')');
      if (s.form == Setting::Form::kValue) {
        EXPECT_FALSE(s.placeholder.empty());
      }
    }
    if (!s.key.empty()) {
      EXPECT_TRUE(keys.insert(std::string(s.key)).second) << "key listed twice";
      EXPECT_NE(s.from_json, nullptr);
    }
  }
}

TEST(SettingsTable, DocumentKeysComeFromTheTable) {
  const std::vector<std::string>& accepted = document_keys();
  for (const Setting& s : settings_table()) {
    if (s.key.empty() || s.key.find('.') != std::string_view::npos) continue;
    EXPECT_NE(std::find(accepted.begin(), accepted.end(), std::string(s.key)), accepted.end())
        << s.key;
  }
  EXPECT_EQ(rope_keys(), (std::vector<std::string>{"theta", "dims", "layout", "q_offset",
                                                   "k_offset", "scaling"}));
}

// A flag's value, merged over settings that lack it (a document without
// the key), arrives whole: no row forgets a field it sets.
TEST(SettingsTable, EveryFlagSurvivesTheMerge) {
  for (const Setting& s : settings_table()) {
    if (s.flag.empty()) continue;
    SCOPED_TRACE(std::string(s.flag) + " " + sample(s));
    RunSettings flags;
    s.from_text(flags, sample(s));
    EXPECT_NE(text_of(flags), text_of(RunSettings{})) << "the flag set nothing";
    RunSettings merged;
    merged.merge(flags);
    EXPECT_EQ(text_of(merged), text_of(flags));
  }
}

// The same for a document's keys, read as the document reader reads them.
TEST(SettingsTable, EveryKeySurvivesTheMerge) {
  const std::string source = "t.json";
  const std::vector<std::pair<std::string, std::string>> docs = {
      {"mode", R"("qkv")"},
      {"variant", R"("dot")"},
      {"heads", "2"},
      {"scale", "0.5"},
      {"temperature", "2"},
      {"scale_at", R"("output")"},
      {"causal", R"("bottom_right")"},
      {"q_offset", "3"},
      {"k_offset", "1"},
      {"mask_convention", R"("keep")"},
      {"mask_fill", R"("-inf")"},
      {"fully_masked", R"("nan")"},
      {"dropout", "0.5"},
      {"seed", "7"},
      {"params_layout", R"("torch")"},
      {"kv_heads", "1"},
      {"rope", R"({"theta": 500, "dims": 2, "layout": "interleaved", "q_offset": 4,
                   "k_offset": 2, "scaling": {"rope_type": "linear", "factor": 2}})"},
      {"alibi", "[0.5, 0.25]"},
      {"window", "[2, 0]"},
      {"softcap", "30"},
      {"qk_norm", "1e-6"},
      {"sinks", "[1, 2]"}};
  std::set<std::string> covered;
  for (const auto& [key, value] : docs) {
    SCOPED_TRACE(key);
    const Setting* row = setting_of_key(key);
    ASSERT_NE(row, nullptr);
    covered.insert(key);
    const json::Value v = json::parse(value, source);
    RunSettings doc;
    row->from_json(doc, JsonAt{v, source, key});
    RunSettings merged;
    merged.merge(doc);
    EXPECT_EQ(text_of(merged), text_of(doc));
  }
  for (const Setting& s : settings_table()) {
    if (!s.key.empty() && s.key.find('.') == std::string_view::npos) {
      EXPECT_TRUE(covered.count(std::string(s.key))) << s.key << " has no case here";
    }
  }
}

// A flag wins over the document's value of the same setting.
TEST(SettingsTable, FlagsOverrideTheDocument) {
  RunSettings doc;
  setting_of_key("heads")->from_json(doc, JsonAt{json::parse("4", "t"), "t", "heads"});
  RunSettings flags;
  setting_of_flag("--heads")->from_text(flags, "2");
  doc.merge(flags);
  EXPECT_EQ(doc.heads, 2);
}

// Every key is in the page of document keys; every flag, with its
// placeholder as the table spells it, in the command reference and the
// manual page.
TEST(SettingsDocs, EveryKeyAndFlagIsDocumented) {
  const std::string formats = test::read_text(test::source_path("docs/formats.md"));
  const std::string cli = test::read_text(test::source_path("docs/cli.md"));
  const std::string man = test::read_text(test::source_path("docs/attn.1"));
  auto roff = [](std::string_view text) {
    std::string out;
    for (char c : text) out += c == '-' ? std::string("\\-") : std::string(1, c);
    return out;
  };
  for (const Setting& s : settings_table()) {
    if (!s.key.empty() && s.key.find('.') == std::string_view::npos) {
      EXPECT_NE(formats.find("`" + std::string(s.key) + "`"), std::string::npos)
          << "docs/formats.md lacks the key " << s.key;
    }
    if (s.flag.empty()) continue;
    const std::string flag(s.flag);
    if (s.placeholder.empty()) {
      EXPECT_NE(cli.find("`" + flag + "`"), std::string::npos) << "docs/cli.md lacks " << flag;
      EXPECT_NE(man.find(".B " + roff(flag) + "\n"), std::string::npos)
          << "docs/attn.1 lacks " << flag;
      continue;
    }
    // docs/cli.md writes each form of "W|L,R" apart: `--window W`, `--window L,R`.
    const std::string placeholder(s.placeholder);
    size_t start = 0;
    for (;;) {
      const size_t bar = placeholder.find('|', start);
      const std::string form = placeholder.substr(start, bar - start);
      EXPECT_NE(cli.find("`" + flag + " " + form), std::string::npos)
          << "docs/cli.md lacks `" << flag << " " << form << "`";
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
    EXPECT_NE(man.find(roff(flag) + " \" " + placeholder), std::string::npos)
        << "docs/attn.1 lacks " << flag << " " << placeholder;
  }
}

// A window's element that is not a number is named by its place, and the
// message quotes it whole (the element is a copy that must outlive the
// check: a long string lives on the heap, where a freed copy would show).
TEST(SettingsTable, AWindowElementThatIsNotANumberIsNamed) {
  try {
    test::problem(
        R"({"X": [[1, 0], [0, 1]], "window": [1, "a string longer than fifteen bytes"]})");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  R"(window[1]: expected a number, got "a string longer than fifteen bytes")"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// The settings table's "modern" column: each setting of today's attention,
// given to a variant the fast kernel does not compute, is refused by the
// key the column names, and RunSettings::any_modern sees it.
TEST(SettingsTable, TheModernColumnRefusesEachSettingForAnOlderVariant) {
  const std::string base =
      R"({"X": [[1, 2]], "variant": "additive", "params": {"W_q": [[1], [1]], "W_k": [[1], [1]], "w_v": [1]}, )";
  const std::pair<const char*, const char*> cases[] = {
      {R"("kv_heads": 1)", "kv_heads"},
      {R"("rope": true)", "rope"},
      {R"("rope": {"theta": 500})", "rope"},
      {R"("rope": {"dims": 2})", "rope"},
      {R"("rope": {"layout": "half"})", "rope"},
      {R"("rope": {"q_offset": 1})", "rope"},
      {R"("rope": {"scaling": {"rope_type": "linear", "factor": 2}})", "rope"},
      {R"("qk_norm": 1e-6)", "qk_norm"},
      {R"("alibi": true)", "alibi"},
      {R"("window": 1)", "window"},
      {R"("softcap": 30)", "softcap"},
      {R"("sinks": 0.5)", "sinks"},
  };
  for (const auto& [setting, key] : cases) {
    const std::string doc = base + setting + "}";
    EXPECT_EQ(test::problem_error(doc),
              "t.json: " + std::string(key) +
                  ": applies to variants scaled_dot and dot only, not additive")
        << doc;
  }
  std::set<std::string> refusals;
  for (const Setting& row : settings_table()) {
    EXPECT_EQ(row.modern.empty(), row.given == nullptr) << row.key << row.flag;
    if (row.given) refusals.insert(std::string(row.modern));
  }
  EXPECT_EQ(refusals, (std::set<std::string>{"alibi", "kv_heads", "qk_norm", "rope", "sinks",
                                             "softcap", "window"}));
  RunSettings none;
  EXPECT_FALSE(none.any_modern());
  RunSettings alibi_off;
  alibi_off.alibi = false;
  EXPECT_FALSE(alibi_off.any_modern());
  RunSettings sinks;
  sinks.sinks = std::vector<double>{0.5};
  EXPECT_TRUE(sinks.any_modern());
}

}  // namespace
}  // namespace attn
