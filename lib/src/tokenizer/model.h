// The models of tokenizer.json: one pre-token (a word) to token ids.
// BPE as the tokenizers library runs it (merges by rank, leftmost first,
// with byte fallback, unknown-token fusing, ignore_merges, and the
// continuing-subword prefix and end-of-word suffix), and WordPiece (greedy
// longest match, the whole word unknown when a piece is missing).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace attn::tok {

struct Vocab {
  std::unordered_map<std::string, int64_t> ids;
  std::vector<std::string> tokens;  // by id; "" where no token has the id

  std::optional<int64_t> find(const std::string& token) const {
    const auto it = ids.find(token);
    if (it == ids.end()) return std::nullopt;
    return it->second;
  }
  void add(const std::string& token, int64_t id);
};

struct Bpe {
  // (left id, right id) packed in 64 bits → (rank, merged id).
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> merges;
  std::optional<int64_t> unk;
  std::string continuing_subword_prefix, end_of_word_suffix;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
};

struct WordPiece {
  int64_t unk = 0;
  std::string continuing_subword_prefix = "##";
  size_t max_input_chars_per_word = 100;
  // The longest token of the vocabulary in bytes: longer pieces are not
  // looked up, so a word costs O(length × this), not O(length²).
  size_t max_token_bytes = 0;
};

// Appends the ids of one word (UTF-8) to `ids`.
void bpe_word(const Vocab& v, const Bpe& m, const std::string& word, std::vector<int64_t>& ids);
void wordpiece_word(const Vocab& v, const WordPiece& m, const std::string& word,
                    std::vector<int64_t>& ids);

}  // namespace attn::tok
