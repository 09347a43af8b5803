// What a tokenizer.json and a text may cost: each limit of
// docs/tokenizers.md ("Limits") refused with its exact message, on inputs
// that cost hours or gigabytes before the limit was there, and the added
// tokens found in one pass, as the tokenizers library finds them.
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

TEST(TokenizerLimits, NormalizersThatMultiplyTheTextStopAtTheStepThatPassesTheLimit) {
  // Thirty times a → aa would make "a" 2^30 characters (4 GiB); the text
  // may grow to 8 characters for each given, plus 1024.
  json j = word_level();
  j["normalizer"] = {{"type", "Sequence"}, {"normalizers", json::array()}};
  for (int i = 0; i < 30; ++i) j["normalizer"]["normalizers"].push_back(replace("a", "aa"));
  const Tokenizer t = load(j);
  EXPECT_EQ(error_of([&] { t.encode("a"); }),
            "t.json: normalizer.normalizers[10]: Replace would make the text 2048 characters long, "
            "more than 1032 (8 per character given, plus 1024)");
  // The same normalizers make an added token's content as they would the
  // text, when the file is read.
  j["added_tokens"].push_back(added(1, "a", false, true));
  EXPECT_EQ(error_of([&] { load(j); }),
            "t.json: normalizer.normalizers[10]: Replace would make the added tokens 2048 "
            "characters long, more than 1032 (8 per character given, plus 1024)");
  // NFKD writes 18 characters for U+FDFA: measured before it is built.
  json nfkd = word_level();
  nfkd["normalizer"] = {{"type", "NFKD"}};
  EXPECT_EQ(error_of([&] { load(nfkd).encode(repeat("\uFDFA", 200)); }),
            "t.json: normalizer: NFKD would make the text 3600 characters long, more than 2624 (8 "
            "per character given, plus 1024)");
  EXPECT_NO_THROW(load(nfkd).encode(repeat("\uFDFA", 10) + repeat("x", 200)));
}

TEST(TokenizerLimits, PreTokenizersThatMultiplyThePiecesStopToo) {
  // ByteLevel writes a character a byte: each pass doubles a space's
  // pieces (" " → "Ġ" → "Ä" + "ł" → ...).
  json j = word_level();
  j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", json::array()}};
  for (int i = 0; i < 30; ++i) {
    j["pre_tokenizer"]["pretokenizers"].push_back(
        {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}});
  }
  EXPECT_EQ(error_of([&] { load(j).encode(" "); }),
            "t.json: pre_tokenizer.pretokenizers[11]: ByteLevel would make the text 2048 "
            "characters long, more than 1032 (8 per character given, plus 1024)");
}

TEST(TokenizerLimits, StringsTheModelAndTheStepsAddAreShort) {
  json bpe = json::parse(read_text(source_path("data/tokenizers/small-llama3/tokenizer.json")));
  bpe["model"]["continuing_subword_prefix"] = std::string(100000, 'x');
  EXPECT_EQ(error_of([&] { load(bpe); }),
            "t.json: model.continuing_subword_prefix: a string of 100000 bytes (at most 16)");
  bpe["model"]["continuing_subword_prefix"] = "##";
  bpe["model"]["end_of_word_suffix"] = std::string(17, 'x');
  EXPECT_EQ(error_of([&] { load(bpe); }),
            "t.json: model.end_of_word_suffix: a string of 17 bytes (at most 16)");
  json wordpiece = json::parse(read_text(source_path("data/tokenizers/small-bert/tokenizer.json")));
  wordpiece["model"]["continuing_subword_prefix"] = std::string(17, '#');
  EXPECT_EQ(error_of([&] { load(wordpiece); }),
            "t.json: model.continuing_subword_prefix: a string of 17 bytes (at most 16)");

  const std::string long_text(257, 'x');
  json j = word_level();
  j["normalizer"] = replace("a", long_text);
  EXPECT_EQ(error_of([&] { load(j); }),
            "t.json: normalizer.content: a string of 257 bytes (at most 256)");
  j["normalizer"] = replace(long_text, "a");
  EXPECT_EQ(error_of([&] { load(j); }),
            "t.json: normalizer.pattern.String: a string of 257 bytes (at most 256)");
  j["normalizer"] = {{"type", "Prepend"}, {"prepend", long_text}};
  EXPECT_EQ(error_of([&] { load(j); }),
            "t.json: normalizer.prepend: a string of 257 bytes (at most 256)");
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "Split"},
                        {"pattern", {{"String", long_text}}},
                        {"behavior", "Removed"},
                        {"invert", false}};
  EXPECT_EQ(error_of([&] { load(j); }),
            "t.json: pre_tokenizer.pattern.String: a string of 257 bytes (at most 256)");
}

TEST(TokenizerLimits, AddedTokensAreShortAndFewInAll) {
  json j = word_level();
  j["added_tokens"].push_back(added(1, std::string(1025, 'x')));
  EXPECT_EQ(error_of([&] { load(j); }),
            "t.json: added_tokens[0].content: a string of 1025 bytes (at most 1024)");
  json many = word_level();
  for (int i = 0; i < 5; ++i)
    many["added_tokens"].push_back(added(i + 1, "<tok" + std::to_string(i) + ">"));
  TokenizerLimits small;
  small.max_added_tokens_bytes = 20;
  EXPECT_EQ(error_of([&] { Tokenizer::from_json(many.dump(), "t.json", small); }),
            "t.json: added_tokens: more than 20 bytes of content in all (the most attn reads)");
}

TEST(TokenizerLimits, AVocabularyOverTheLimitIsRefusedWhileItIsParsed) {
  TokenizerLimits small;
  small.max_vocab = 100;
  // Refused at its 101st token: what follows is never read (here, text
  // that is not JSON at all).
  std::string text = R"({"model": {"type": "WordLevel", "vocab": {)";
  for (int i = 0; i <= 100; ++i)
    text += "\"t" + std::to_string(i) + "\": " + std::to_string(i % 100) + ", ";
  text += "oops";
  EXPECT_EQ(error_of([&] { Tokenizer::from_json(text, "t.json", small); }),
            "t.json: model.vocab: more tokens than attn reads (100)");
  // A token twice, or an id that is not one, is refused as before.
  EXPECT_EQ(error_of([&] {
              Tokenizer::from_json(R"({"model": {"type": "WordLevel", "vocab": {"a": 0, "a": 1}}})",
                                   "t.json");
            }),
            "t.json:1:51: duplicate key \"a\"");
  EXPECT_EQ(error_of([&] {
              Tokenizer::from_json(R"({"model": {"type": "WordLevel", "vocab": {"a": -1}}})",
                                   "t.json");
            }),
            "t.json: model.vocab[\"a\"]: expected an id from 0 to 4194303, got -1");
  EXPECT_EQ(error_of([&] {
              Tokenizer::from_json(R"({"model": {"type": "WordLevel", "vocab": ["a"]}})", "t.json");
            }),
            "t.json: model.vocab: expected an object of token: id");
}

TEST(TokenizerLimits, AFileOverItsSizeIsRefusedBeforeItIsRead) {
  TokenizerLimits small;
  small.max_file_bytes = 100;
  const std::string path = source_path("data/tokenizers/small-bert/tokenizer.json");
  EXPECT_EQ(error_of([&] { Tokenizer::load(path, small); }),
            path + ": 8741 bytes, more than attn reads of a tokenizer.json (100)");
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
