// attn tokenize: the ids and tokens of texts from the command line, stdin
// and files, as text and JSON, and its mistakes as one-line errors. The
// tokenizers themselves: tokenizer_test.cc.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using test::run_attn;
using test::source_path;
using test::write_temp;

std::string gpt2_dir() { return source_path("data/tokenizers/gpt2"); }

TEST(TokenizeCli, TextShowsEachTokenAsItReads) {
  const auto r = run_attn({"tokenize", "--tokenizer", gpt2_dir(), "The cat\tsat"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "    464  The\n"
            "   3797  ␣cat\n"
            "    197  \\t\n"
            "  49720  sat\n");
}

TEST(TokenizeCli, JsonIsOneObjectPerTextAndAnArrayForSeveral) {
  const auto one = run_attn({"tokenize", "--tokenizer", gpt2_dir(), "-f", "json", "Hello, world!"});
  EXPECT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out,
            "{\"text\": \"Hello, world!\", \"ids\": [15496, 11, 995, 0], \"tokens\": [\"Hello\", "
            "\",\", \"Ġworld\", \"!\"]}\n");
  const std::string file = write_temp("text.txt", "from a file\n");
  const auto many = run_attn({"tokenize", "--checkpoint", gpt2_dir(), "-f", "json", "a", "-",
                              "--text-file", file, "--", "-x"},
                             "from stdin\n");
  EXPECT_EQ(many.code, 0) << many.err;
  const nlohmann::json j = nlohmann::json::parse(many.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[0]["text"], "a");
  EXPECT_EQ(j[1]["text"], "from stdin");
  EXPECT_EQ(j[2]["text"], "-x");
  EXPECT_EQ(j[3]["text"], "from a file");
}

TEST(TokenizeCli, NoSpecialLeavesOutThePostProcessorsTokens) {
  const std::string dir = source_path("data/tokenizers/small-bert");
  const auto with = run_attn({"tokenize", "--tokenizer", dir, "-f", "json", "hello"});
  const auto without =
      run_attn({"tokenize", "--tokenizer", dir, "-f", "json", "--no-special", "hello"});
  ASSERT_EQ(with.code, 0) << with.err;
  ASSERT_EQ(without.code, 0) << without.err;
  const auto a = nlohmann::json::parse(with.out)["tokens"];
  const auto b = nlohmann::json::parse(without.out)["tokens"];
  EXPECT_EQ(a.front(), "[CLS]");
  EXPECT_EQ(a.back(), "[SEP]");
  EXPECT_EQ(a.size(), b.size() + 2);
}

TEST(TokenizeCli, MistakesAreOneLineErrors) {
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string err;
  };
  const std::string empty_dir = test::temp_dir() + "/no_tokenizer";
  fs::create_directories(empty_dir);
  const std::string fifo = test::temp_dir() + "/tokenizer_fifo.json";
  ::mkfifo(fifo.c_str(), 0600);
  const std::string bad = write_temp("bad_tokenizer.json", "{\"model\": {\"type\": \"Unigram\"}}");
  // Over 256 MiB: refused from its size (the file is sparse), and no flag
  // of tokenize raises the limit.
  const std::string huge = test::temp_dir() + "/huge_tokenizer.json";
  fs::resize_file(write_temp("huge_tokenizer.json", "{"), 300000000);
  const std::vector<Case> cases = {
      {{"tokenize", "hello"}, 2, "tokenize needs --tokenizer FILE|DIR (or --checkpoint DIR)"},
      {{"tokenize", "--tokenizer", gpt2_dir()},
       2,
       "nothing to tokenize; give TEXT..., - (stdin) or --text-file FILE"},
      {{"tokenize", "--tokenizer", gpt2_dir(), "--checkpoint", gpt2_dir(), "x"},
       2,
       "give --tokenizer or --checkpoint, not both"},
      {{"tokenize", "--tokenizer", gpt2_dir(), "--no-specials", "x"},
       2,
       "tokenize: unknown option '--no-specials' (attn tokenize --help lists the options; a "
       "text that starts with - goes after --)"},
      {{"tokenize", "--tokenizer", gpt2_dir(), "-f", "yaml", "x"},
       2,
       "--format yaml: expected text or json"},
      {{"tokenize", "--tokenizer", empty_dir, "x"},
       4,
       empty_dir + ": no tokenizer.json in this directory"},
      {{"tokenize", "--tokenizer", fifo, "x"},
       3,
       fifo + ": not a regular file; --tokenizer takes tokenizer.json or its directory"},
      {{"tokenize", "--tokenizer", bad, "x"},
       3,
       bad + ": model.type: model \"Unigram\" is not one attn implements (BPE, WordPiece, "
             "WordLevel)"},
      {{"tokenize", "--tokenizer", huge, "x"},
       3,
       huge + ": 300000000 bytes, more than attn reads of a tokenizer.json (268435456)"},
  };
  for (const Case& c : cases) {
    const auto r = run_attn(c.args);
    EXPECT_EQ(r.code, c.code) << c.err;
    EXPECT_EQ(r.err, "attn: error: " + c.err + "\n");
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace
}  // namespace attn
