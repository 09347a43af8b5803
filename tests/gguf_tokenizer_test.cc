// The tokenizer of GGUF files: every text of tests/tokenizer/texts.json
// through each vocabulary of tests/tokenizer/gguf gives llama.cpp's
// llama_tokenize ids (NAME.expected.json, made by
// tests/tokenizer/make_gguf_vocabs.py) with and without the special tokens
// added and with special tokens parsed; and hostile metadata refused with
// one line naming the key.
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/json.h"
#include "attn/tokenizer.h"
#include "test_util.h"

namespace attn {
namespace {

std::vector<std::string> vocabularies() {
  std::vector<std::string> out;
  const std::string dir = test::source_path("tests/tokenizer/gguf");
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".gguf") == 0) {
        out.push_back(n.substr(0, n.size() - 5));
      }
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> ids_of(const json::Value& list) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < list.size(); ++i) {
    out.push_back(static_cast<int64_t>(list.element(i).as_number()));
  }
  return out;
}

class GgufVocabulary : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufVocabulary, EveryTextGivesLlamaCppsIds) {
  const std::string base = test::source_path("tests/tokenizer/gguf/" + GetParam());
  std::ifstream in(base + ".expected.json", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const json::Value doc = json::parse(ss.str(), GetParam() + ".expected.json");
  const Tokenizer t = Tokenizer::load(base + ".gguf");
  const json::Value* cases = doc.find("cases");
  ASSERT_TRUE(cases && cases->size() >= 60);
  size_t compared = 0;
  for (size_t k = 0; k < cases->size(); ++k) {
    const json::Value c = cases->element(k);
    const std::string text = c.find("text")->as_string();
    struct Mode {
      const char* key;
      bool add, parse;
    };
    for (const Mode m : {Mode{"special", true, false}, Mode{"no_special", false, false},
                         Mode{"parse_special", true, true}}) {
      EncodeOptions o;
      o.add_special_tokens = m.add;
      o.parse_special = m.parse;
      const Encoding e = t.encode(text, o);
      EXPECT_EQ(e.ids, ids_of(*c.find(m.key))) << m.key << ": " << text;
      ASSERT_EQ(e.tokens.size(), e.ids.size());
      compared += e.ids.size();
    }
  }
  EXPECT_GT(compared, 1000u);
}

INSTANTIATE_TEST_SUITE_P(Files, GgufVocabulary, ::testing::ValuesIn(vocabularies()),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(GgufVocabulary, TheCommittedFilesCoverEachModelAndThePreTokenizersAsked) {
  const std::vector<std::string> v = vocabularies();
  for (const char* name : {"spm-llama2", "spm-gemma3", "wpm-bert", "bpe-llama-bpe", "bpe-qwen2",
                           "bpe-gpt-2", "bpe-default", "bpe-deepseek-llm", "bpe-deepseek-v3"}) {
    EXPECT_NE(std::find(v.begin(), v.end(), name), v.end()) << name;
  }
}

// A vocabulary-only GGUF file written field by field.
std::string le(uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}
std::string str(const std::string& s) { return le(s.size(), 8) + s; }

struct Meta {
  std::string kv;
  uint64_t n = 0;
  Meta& text(const std::string& key, const std::string& v) {
    kv += str(key) + le(8, 4) + str(v);
    ++n;
    return *this;
  }
  Meta& u32(const std::string& key, uint32_t v) {
    kv += str(key) + le(4, 4) + le(v, 4);
    ++n;
    return *this;
  }
  Meta& strings(const std::string& key, const std::vector<std::string>& v) {
    kv += str(key) + le(9, 4) + le(8, 4) + le(v.size(), 8);
    for (const std::string& s : v) kv += str(s);
    ++n;
    return *this;
  }
  Meta& floats(const std::string& key, size_t count) {
    kv += str(key) + le(9, 4) + le(6, 4) + le(count, 8) + std::string(4 * count, '\0');
    ++n;
    return *this;
  }
  std::string file() const {
    const std::string path = test::temp_dir() + "/v" + std::to_string(++files) + ".gguf";
    std::ofstream(path, std::ios::binary) << "GGUF" + le(3, 4) + le(0, 8) + le(n, 8) + kv;
    return path;
  }
  static int files;
};
int Meta::files = 0;

Meta bpe(const std::string& pre) {
  Meta m;
  m.text("tokenizer.ggml.model", "gpt2")
      .text("tokenizer.ggml.pre", pre)
      .strings("tokenizer.ggml.tokens", {"a", "b", "ab"});
  return m;
}

std::string load_error(const Meta& m) {
  const std::string path = m.file();
  const std::string e = test::error_of([&] { Tokenizer::load(path); });
  return e.substr(std::min(e.size(), path.size()));
}

TEST(GgufVocabulary, ABytePairVocabularyEncodesThroughItsMerges) {
  const std::string path = bpe("gpt-2")
                               .strings("tokenizer.ggml.merges", {"a b"})
                               .u32("tokenizer.ggml.bos_token_id", 0)
                               .file();
  const Tokenizer t = Tokenizer::load(path);
  EXPECT_EQ(t.encode("abab", false).ids, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.vocab_size(), 3);
}

// load_if_any: a GGUF converted without tokenizer files ("none") has no
// tokenizer, where load() is an error naming the file; one that has a
// tokenizer gives what load() gives.
TEST(GgufVocabulary, AFileWithoutATokenizerHasNoneWhereLoadRefusesIt) {
  const std::string none = test::source_path("data/models/tiny-qwen2/model.gguf");
  EXPECT_FALSE(Tokenizer::load_if_any(none).has_value());
  EXPECT_THROW(Tokenizer::load(none), Error);
  const std::string vocab = test::source_path("tests/tokenizer/gguf/bpe-qwen2.gguf");
  const std::optional<Tokenizer> t = Tokenizer::load_if_any(vocab);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->encode("Hi there, 2025").ids, Tokenizer::load(vocab).encode("Hi there, 2025").ids);
  EXPECT_EQ(t->vocab_size(), 588);
}

TEST(GgufVocabulary, HostileMetadataIsRefusedNamingTheKey) {
  EXPECT_EQ(load_error(bpe("no-such-pre").strings("tokenizer.ggml.merges", {"a b"})),
            ": tokenizer.ggml.pre: \"no-such-pre\" is not a pre-tokenizer llama.cpp knows "
            "(docs/formats.md lists them)");
  EXPECT_EQ(load_error(bpe("gpt-2").strings("tokenizer.ggml.merges", {"a c"})),
            ": tokenizer.ggml.merges[0]: \"c\" is not a token");
  EXPECT_EQ(load_error(bpe("gpt-2").strings("tokenizer.ggml.merges", {"ab"})),
            ": tokenizer.ggml.merges[0]: \"ab\" is not two tokens and a space");
  EXPECT_EQ(load_error(bpe("gpt-2")
                           .strings("tokenizer.ggml.merges", {"a b"})
                           .u32("tokenizer.ggml.bos_token_id", 7)),
            ": tokenizer.ggml.bos_token_id: token 7 is not in the vocabulary (3 tokens)");
  EXPECT_EQ(load_error(bpe("gpt-2")
                           .strings("tokenizer.ggml.merges", {"a b"})
                           .floats("tokenizer.ggml.scores", 2)),
            ": tokenizer.ggml.scores: 2 values for 3 tokens");
  Meta dup;
  dup.text("tokenizer.ggml.model", "llama").strings("tokenizer.ggml.tokens", {"a", "b", "a"});
  EXPECT_EQ(load_error(dup),
            ": tokenizer.ggml.tokens[2]: \"a\" is token 0 too (llama.cpp refuses a vocabulary "
            "with a token twice)");
  Meta none;
  none.text("tokenizer.ggml.model", "none");
  EXPECT_EQ(load_error(none),
            ": tokenizer.ggml.model: \"none\": the file carries no tokenizer (give token ids "
            "with --ids)");
  Meta t5;
  t5.text("tokenizer.ggml.model", "t5").strings("tokenizer.ggml.tokens", {"a"});
  EXPECT_EQ(load_error(t5),
            ": tokenizer.ggml.model: \"t5\" is not a tokenizer attn reads from GGUF (llama, "
            "gpt2, bert)");
}

TEST(GgufVocabulary, AVocabularyOverTheLimitIsRefused) {
  TokenizerLimits limits;
  limits.max_vocab = 2;
  const std::string path = bpe("gpt-2").strings("tokenizer.ggml.merges", {"a b"}).file();
  const std::string e = test::error_of([&] { Tokenizer::load(path, limits); });
  EXPECT_EQ(e.substr(path.size()), ": tokenizer.ggml.tokens: 3 tokens, more than attn reads (2)");
}

}  // namespace
}  // namespace attn
