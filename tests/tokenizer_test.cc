// Tokenizers from tokenizer.json: ids equal to Hugging Face's tokenizers
// (its Rust crate through its Node binding, tests/tokenizer/oracle.mjs) on
// GPT-2's real file and on small files of every family's exact structure
// (data/tokenizers/), the regex matcher, and the refusals of files and
// texts attn cannot encode as the library would. The command, attn
// tokenize: tokenizer_cli_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "attn/error.h"
#include "attn/tokenizer.h"
#include "model_util.h"
#include "test_util.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/regex.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::read_text;
using test::source_path;

std::vector<std::string> families() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(source_path("data/tokenizers"))) {
    if (e.is_directory()) out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Tokenizer, EveryFamilyGivesTheLibrarysIdsOnEveryText) {
  const std::vector<std::string> names = families();
  ASSERT_GE(names.size(), 7u);  // gpt2 and six small families
  for (const std::string& name : names) {
    const std::string dir = source_path("data/tokenizers/" + name);
    const Tokenizer t = Tokenizer::load(dir);
    const nlohmann::json expected = nlohmann::json::parse(read_text(dir + "/expected.json"));
    for (const char* mode : {"special", "no_special"}) {
      ASSERT_GE(expected.at(mode).size(), 60u) << name;
      for (const nlohmann::json& want : expected.at(mode)) {
        const std::string text = want.at("text");
        const Encoding e = t.encode(text, std::string(mode) == "special");
        EXPECT_EQ(e.ids, want.at("ids").get<std::vector<int64_t>>())
            << name << " " << mode << ": " << text;
        EXPECT_EQ(e.tokens, want.at("tokens").get<std::vector<std::string>>()) << name;
      }
    }
  }
}

TEST(Tokenizer, TokensReadAsTheTextTheyStandFor) {
  const Tokenizer gpt2 = Tokenizer::load(source_path("data/tokenizers/gpt2"));
  EXPECT_EQ(gpt2.readable("Ġcat"), " cat");
  EXPECT_EQ(gpt2.readable("Ċ"), "\n");
  // Half of a character: its byte by value.
  const Encoding e = gpt2.encode("你");
  ASSERT_FALSE(e.tokens.empty());
  std::string joined;
  for (const std::string& tk : e.tokens) joined += gpt2.readable(tk);
  EXPECT_NE(joined.find("\\x"), std::string::npos) << joined;
  const Tokenizer sp = Tokenizer::load(source_path("data/tokenizers/small-llama2"));
  EXPECT_EQ(sp.readable("▁the"), " the");
  EXPECT_EQ(sp.readable("<0x41>"), "A");
  EXPECT_EQ(sp.readable("<0xE4>"), "\\xe4");
}

TEST(Tokenizer, LongWordsAndRunsOfSpacesEncode) {
  // One word of 200,000 letters and a run of 100,000 spaces: BPE over a
  // heap and the regex's counted runs keep this to a moment (a quadratic
  // merge loop would take minutes).
  const Tokenizer gpt2 = Tokenizer::load(source_path("data/tokenizers/gpt2"));
  const Encoding w = gpt2.encode(std::string(200000, 'a'));
  EXPECT_GT(w.ids.size(), 100u);
  std::string joined;
  for (const std::string& tk : w.tokens) joined += tk;
  EXPECT_EQ(joined, std::string(200000, 'a'));
  const Encoding s = gpt2.encode(std::string(100000, ' ') + "x");
  joined.clear();
  for (const std::string& tk : s.tokens) joined += gpt2.readable(tk);
  EXPECT_EQ(joined, std::string(100000, ' ') + "x");
}

std::string gpt2_text() { return read_text(source_path("data/tokenizers/gpt2/tokenizer.json")); }

// A tokenizer.json with one field replaced.
std::string with(const std::string& pointer, const nlohmann::json& value) {
  nlohmann::json j =
      nlohmann::json::parse(read_text(source_path("data/tokenizers/small-llama3/tokenizer.json")));
  j[nlohmann::json::json_pointer(pointer)] = value;
  return j.dump();
}

TEST(Tokenizer, HostileFilesAndTextsCostBoundedWork) {
  // A pattern that backtracks without end on a run of spaces is stopped.
  const Tokenizer slow = Tokenizer::from_json(
      with("/pre_tokenizer/pretokenizers/0/pattern/Regex", "\\s*\\s*\\s*\\s*\\s*x"), "t.json");
  EXPECT_EQ(error_of([&] { slow.encode(std::string(2000, ' ')); }),
            "t.json: pre_tokenizer.pretokenizers[0].pattern.Regex: the regex takes more than "
            "1512000 steps on a text of 2000 characters (1000000 + 256 per character, for all its "
            "patterns); attn stops it rather than run for hours");
  // WordPiece looks up no piece longer than its longest token: a word of
  // 200,000 letters under max_input_chars_per_word 2^20 is linear work.
  nlohmann::json bert =
      nlohmann::json::parse(read_text(source_path("data/tokenizers/small-bert/tokenizer.json")));
  bert["model"]["max_input_chars_per_word"] = 1 << 20;
  const Tokenizer wp = Tokenizer::from_json(bert.dump(), "bert.json");
  EXPECT_FALSE(wp.encode(std::string(200000, 'a'), false).ids.empty());
  TokenizerLimits small;
  small.max_text_bytes = 10;
  const Tokenizer limited = Tokenizer::from_json(gpt2_text(), "gpt2.json", small);
  EXPECT_EQ(error_of([&] { limited.encode("0123456789x", true, "text 1"); }),
            "text 1: 11 bytes of text, more than attn encodes at once (10)");
}

TEST(Tokenizer, TextThatIsNotUtf8IsRefused) {
  const Tokenizer gpt2 = Tokenizer::load(source_path("data/tokenizers/gpt2"));
  EXPECT_EQ(error_of([&] { gpt2.encode("ab\xff", true, "text 1"); }),
            "text 1: not UTF-8 text: the byte at offset 2 starts no character");
}

TEST(Tokenizer, FilesAttnCannotEncodeAsTheLibraryAreRefusedNamingTheField) {
  struct Case {
    std::string json;
    std::string message;
  };
  const std::vector<Case> cases = {
      {with("/model/type", "Unigram"),
       "t.json: model.type: model \"Unigram\" is not one attn implements (BPE, WordPiece, "
       "WordLevel)"},
      {with("/model/merges/0", "Ġ nonexistent"),
       "t.json: model.merges[0]: \"nonexistent\" is not in the vocabulary"},
      {with("/model/merges/0", "a b c"),
       "t.json: model.merges[0]: expected two tokens separated by one space, got \"a b c\""},
      {with("/model/dropout", 0.1),
       "t.json: model.dropout: BPE dropout makes every encoding random; attn encodes as the "
       "library does without it (set it to null)"},
      {with("/normalizer", nlohmann::json{{"type", "Precompiled"}}),
       "t.json: normalizer.type: normalizer \"Precompiled\" is not one attn implements (NFC, NFD, "
       "NFKC, NFKD, Lowercase, StripAccents, Replace, Prepend, Strip, BertNormalizer, Sequence)"},
      {with("/pre_tokenizer/pretokenizers/0/pattern/Regex", "(a)\\1"),
       "t.json: pre_tokenizer.pretokenizers[0].pattern.Regex: the regex cannot be run by attn: "
       "the escape \\1 at character 5 of (a)\\1"},
      {with("/pre_tokenizer/pretokenizers/0/pattern/Regex", "a+?"),
       "t.json: pre_tokenizer.pretokenizers[0].pattern.Regex: the regex cannot be run by attn: "
       "lazy or possessive quantifiers at character 2 of a+?"},
      {with("/pre_tokenizer/pretokenizers/0/pattern/Regex",
            std::string(40, '(') + "a" + std::string(40, ')')),
       "t.json: pre_tokenizer.pretokenizers[0].pattern.Regex: the regex cannot be run by attn: "
       "groups nested deeper than 32 at character 32 of " +
           std::string(40, '(') + "a" + std::string(40, ')')},
      {with("/pre_tokenizer/pretokenizers/0/pattern/Regex", std::string(5000, 'a')),
       "t.json: pre_tokenizer.pretokenizers[0].pattern.Regex: the regex cannot be run by attn: a "
       "pattern of 5000 characters (at most 4096) at character 0 of " +
           std::string(117, 'a') + "..."},
      {with("/post_processor", nlohmann::json{{"type", "Mystery"}}),
       "t.json: post_processor.type: post-processor \"Mystery\" is not one attn implements "
       "(TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence)"},
      {"[1, 2]", "t.json: expected a tokenizer.json object"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(error_of([&] { Tokenizer::from_json(c.json, "t.json"); }), c.message);
  }
}

std::vector<std::pair<size_t, size_t>> matches(const std::u32string& pattern,
                                               const std::u32string& text) {
  tok::RegexBudget budget(text.size());
  return tok::Regex(pattern, "test").find_all(text, budget);
}

TEST(Tokenizer, TheRegexMatchesAsOnigurumaDoes) {
  // Llama 3's pattern on a text with a contraction, digits and spaces.
  const std::u32string llama3 =
      U"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
      U"?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  const std::u32string text = U"I'M 12345  ok\n\n";
  std::vector<std::u32string> pieces;
  for (const auto& [b, e] : matches(llama3, text)) pieces.push_back(text.substr(b, e - b));
  EXPECT_EQ(pieces,
            (std::vector<std::u32string>{U"I", U"'M", U" ", U"123", U"45", U" ", U" ok", U"\n\n"}));
  // \s is White_Space: U+0085 is one, U+200B (zero width space) is not.
  EXPECT_EQ(matches(U"\\s+", U"a\u0085b\u200Bc"), (std::vector<std::pair<size_t, size_t>>{{1, 2}}));
  // \p{L} takes letters of every script.
  EXPECT_EQ(matches(U"\\p{L}+", U"中文 ab"),
            (std::vector<std::pair<size_t, size_t>>{{0, 2}, {3, 5}}));
}

// The tiny models' own tokenizer.json (data/models/make_tiny_tokenizers.py)
// gives the ids their references were computed from (ids.json) and the
// tokens of tokens.json: what `attn run --checkpoint DIR --text` reads
// (ForwardCli.TextRunsTheCheckpointsTokenizerFirst), through the library.
TEST(Tokenizer, EachTinyModelsTokenizerGivesItsReferenceIds) {
  for (const auto& [name, text] : test::tiny_sentences()) {
    const Tokenizer t = Tokenizer::load(test::model(name));
    const Encoding e = t.encode(text);
    EXPECT_EQ(e.ids, nlohmann::json::parse(read_text(test::model(name + "/ids.json")))
                         .get<std::vector<int64_t>>())
        << name;
    EXPECT_EQ(e.tokens, nlohmann::json::parse(read_text(test::model(name + "/tokens.json")))
                            .get<std::vector<std::string>>())
        << name;
  }
}

}  // namespace
}  // namespace attn
