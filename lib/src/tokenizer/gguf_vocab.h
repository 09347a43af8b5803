// The tokenizer a GGUF file carries in its metadata (tokenizer.ggml.*),
// read as llama.cpp's llama_vocab reads it (src/llama-vocab.cpp) and run
// as llama_tokenize runs it: the special tokens found in the text first
// (special_split.h), then each piece of text through the model —
// "llama" (SentencePiece: merges by score, bytes as <0xNN>), "gpt2"
// (byte-pair merges by rank after the pre-tokenizer tokenizer.ggml.pre
// names, gguf_pre.h) or "bert" (WordPiece) — and BOS, EOS or SEP added as
// the metadata and llama.cpp's defaults for the model say.
//
// The metadata is hostile input: its arrays are counted before they are
// copied, every id and merge must name a token, and anything llama.cpp
// would read differently from attn (another model, an unknown
// pre-tokenizer) is an input error naming the key.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/gguf_pre.h"
#include "tokenizer/special_split.h"

namespace attn {
class GgufFile;
}

namespace attn::tok {

class GgufVocab {
 public:
  enum class Kind { kSpm, kBpe, kWpm };

  // The tokenizer of an open GGUF file; at most max_vocab tokens.
  static std::unique_ptr<GgufVocab> read(const GgufFile& file, int64_t max_vocab);

  // llama_tokenize(text, add_special, parse_special): special tokens added
  // when add_special is set and the vocabulary asks for them; control
  // tokens written in the text read as tokens only when parse_special is
  // set (user-defined ones always are). `text` is UTF-8; `source` names it
  // in messages.
  std::vector<int64_t> encode(std::string_view text, bool add_special, bool parse_special,
                              const std::string& source) const;

  Kind kind() const { return kind_; }
  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  // The token's string as the file writes it; "" out of range.
  const std::string& token(int64_t id) const;
  // Tokens in GPT-2's byte alphabet (Ġ for a space).
  bool byte_level() const { return kind_ == Kind::kBpe && pre_.byte_encode; }

  struct Merge {
    int64_t rank = 0, merged = 0;
  };

 private:
  GgufVocab() = default;
  std::optional<int64_t> find(std::string_view text) const;
  // The same, for a string already made (no copy).
  std::optional<int64_t> find_token(const std::string& text) const;
  // The token of one byte, as llama.cpp's byte_to_token and the byte
  // fallbacks of its models look it up; -1 when there is none.
  int64_t byte_token(unsigned char byte, bool hex_form) const;
  void spm(const std::string& text, std::vector<int64_t>& out, const std::string& source) const;
  void bpe(const std::string& text, std::vector<int64_t>& out) const;
  void bpe_word(const std::string& word, std::vector<int64_t>& out) const;
  void wpm(const std::string& text, std::vector<int64_t>& out) const;

  Kind kind_ = Kind::kSpm;
  std::string name_;  // the file, for messages
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int64_t> ids_;
  std::vector<float> scores_;
  std::unordered_map<uint64_t, Merge> merges_;  // (left id << 32 | right id)
  GgufPre pre_;
  size_t max_token_bytes_ = 0;
  int64_t bos_ = -1, eos_ = -1, unk_ = -1, sep_ = -1;
  bool add_bos_ = false, add_eos_ = false, add_space_prefix_ = false;
  bool lowercase_ = true, strip_accents_ = true;
  // The special tokens in llama.cpp's order of trial: all of them, and
  // those matched without parse_special (the user-defined ones).
  std::unique_ptr<SpecialSplitter> all_specials_, user_specials_;
};

}  // namespace attn::tok
