// What a tokenizer.json and a text may cost: the regexes' step budget,
// refused with its exact message on inputs that cost hours before it
// counted every step, and the added tokens found in one pass, as the
// tokenizers library finds them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/tokenizer.h"
#include "test_util.h"

namespace attn {
namespace {

using nlohmann::json;
using test::error_of;
using test::read_text;
using test::source_path;

// A WordLevel tokenizer.json with the given parts; its vocabulary is
// [UNK] (0) and `words` from 1.
json word_level(const std::vector<std::string>& words = {}) {
  json vocab = {{"[UNK]", 0}};
  for (size_t i = 0; i < words.size(); ++i) vocab[words[i]] = i + 1;
  return {{"version", "1.0"},
          {"added_tokens", json::array()},
          {"normalizer", nullptr},
          {"pre_tokenizer", nullptr},
          {"post_processor", nullptr},
          {"decoder", nullptr},
          {"model", {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", "[UNK]"}}}};
}

json replace(const std::string& from, const std::string& to) {
  return {{"type", "Replace"}, {"pattern", {{"String", from}}}, {"content", to}};
}

json split(const std::string& regex) {
  return {{"type", "Split"},
          {"pattern", {{"Regex", regex}}},
          {"behavior", "Isolated"},
          {"invert", false}};
}

json added(int64_t id, const std::string& content, bool lstrip = false, bool normalized = false) {
  return {{"id", id},        {"content", content},       {"single_word", false}, {"lstrip", lstrip},
          {"rstrip", false}, {"normalized", normalized}, {"special", true}};
}

Tokenizer load(const json& j) { return Tokenizer::from_json(j.dump(), "t.json"); }

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

TEST(TokenizerLimits, RegexStepsAreCountedForTheWholeText) {
  // A look-ahead that reads to the end of the text at every position was
  // not counted: quadratic (100,000 characters took 26 s, a megabyte
  // never ended). Each character it reads is a step now.
  json look = word_level();
  look["pre_tokenizer"] = split("(?=a*)b");
  EXPECT_EQ(error_of([&] { load(look).encode(std::string(1000000, 'a')); }),
            "t.json: pre_tokenizer.pattern.Regex: the regex takes more than 257000000 steps on a "
            "text of 1000000 characters (1000000 + 256 per character, for all its patterns); attn "
            "stops it rather than run for hours");
  // The budget was per piece: a first split into pieces of 14 gave each
  // piece a million steps of its own for an exponential second pattern.
  json pieces = word_level();
  pieces["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers", {split("a{14}"), split(repeat("a?", 14) + "a{14}b")}}};
  EXPECT_EQ(error_of([&] { load(pieces).encode(std::string(100000, 'a')); }),
            "t.json: pre_tokenizer.pretokenizers[1].pattern.Regex: the regex takes more than "
            "26600000 steps on a text of 100000 characters (1000000 + 256 per character, for all "
            "its patterns); attn stops it rather than run for hours");
}

TEST(TokenizerLimits, LiteralPatternsAreFoundInOnePass) {
  // "aaa…ab" in "aaa…": a search that compares from every position costs
  // the pattern's length for each character; one pass finds the match.
  json j = word_level({"b"});
  j["normalizer"] = replace(std::string(255, 'a') + "b", "b");
  const Encoding e = load(j).encode(std::string(200000, 'a') + "b", false);
  EXPECT_EQ(e.ids.size(), 1u);
}

TEST(AddedTokens, AreFoundLeftmostLongestAsTheLibraryFindsThem) {
  json j = word_level({"x", "d"});
  j["added_tokens"] = {added(10, "ab"), added(11, "abc"), added(12, "bcd"), added(13, "c"),
                       added(14, "abc")};
  const Tokenizer t = load(j);
  // The leftmost match wins over a longer one further on, the longest of
  // those that start there, and of two tokens with one content the first.
  EXPECT_EQ(t.encode("abcd", false).ids, (std::vector<int64_t>{11, 2}));
  EXPECT_EQ(t.encode("xbcd", false).ids, (std::vector<int64_t>{1, 12}));
  EXPECT_EQ(t.encode("xabxc", false).ids, (std::vector<int64_t>{1, 10, 1, 13}));
}

TEST(AddedTokens, CostOnePassWhateverTheyAre) {
  // lstrip looked back over every space before each match: quadratic in a
  // run of spaces. Now it stops where the last match ended.
  json spaces = word_level();
  spaces["added_tokens"].push_back(added(1, " ", true));
  const Encoding e = load(spaces).encode(std::string(1000000, ' '), false);
  EXPECT_EQ(e.ids, std::vector<int64_t>(1000000, 1));
  // Two thousand tokens that share 256 characters were each compared at
  // every position: 2000 × 256 per character of a text of "aaa…".
  json many = word_level({"a"});
  for (int i = 0; i < 2000; ++i) {
    many["added_tokens"].push_back(added(i + 10, std::string(256, 'a') + std::to_string(i)));
  }
  const Tokenizer t = load(many);
  const Encoding hit = t.encode(std::string(100000, 'a') + "1999", false);
  ASSERT_EQ(hit.ids.size(), 1u + 1u);
  EXPECT_EQ(hit.ids[1], 2009);
}

}  // namespace
}  // namespace attn
