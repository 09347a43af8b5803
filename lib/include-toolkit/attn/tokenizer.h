// Tokenizers from Hugging Face's tokenizer.json, the file next to every
// checkpoint: text to token ids exactly as the `tokenizers` library
// encodes it (encode(text).ids), without Python; and from a GGUF file's
// metadata, exactly as llama.cpp's llama_tokenize encodes it.
//
// The pipeline is the library's: added tokens are split off first (those
// marked normalized after normalization), the normalizer, the
// pre-tokenizer, the model (BPE, byte-level or SentencePiece-style with
// byte fallback; WordPiece), then the post-processor's special tokens when
// add_special_tokens is set. docs/tokenizers.md lists what is read and
// where the behaviour comes from. A file that asks for something attn does
// not implement (a model type, a normalizer, a regex construct) is refused
// with an input error naming the field; nothing is silently skipped.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

namespace detail {
struct TokenizerState;  // the vocabulary and pipeline, private to the library
}

struct Encoding {
  std::vector<int64_t> ids;
  std::vector<std::string> tokens;  // the vocabulary's strings ("Ġcat", "▁the", "##s", "<0xE4>")
};

// Limits of what a tokenizer.json may hold, checked while it is read, and
// of the text one encode() takes. The strings a file has the pipeline add
// to text or look for in it are short in real files ("##", "</w>", "▁",
// "<|endoftext|>"); their limits keep a hostile file from multiplying the
// work of each character of a text.
struct TokenizerLimits {
  int64_t max_file_bytes = int64_t{1} << 28;  // 256 MiB (Gemma 3's is 33 MB)
  // 4,194,304 tokens (the largest models: 262,144), counted while the file
  // is parsed: a larger vocabulary is refused before it is read whole.
  int64_t max_vocab = int64_t{1} << 22;
  int64_t max_text_bytes = int64_t{1} << 26;  // one text to encode: 64 MiB
  // The model's continuing_subword_prefix and end_of_word_suffix: each
  // character of a word may be looked up (or fall back to bytes) with them.
  int64_t max_affix_bytes = 16;
  // A Replace's pattern and content, a Prepend's prepend, a Split's
  // String pattern.
  int64_t max_string_bytes = 256;
  int64_t max_added_token_bytes = 1024;               // one added token's content
  int64_t max_added_tokens_bytes = int64_t{1} << 22;  // all of them together: 4 MiB
};

// How encode() treats special tokens.
struct EncodeOptions {
  // The special tokens the tokenizer adds around a text: the
  // post-processor's (tokenizer.json), BOS, EOS or SEP as the GGUF's
  // metadata asks (llama_tokenize's add_special).
  bool add_special_tokens = true;
  // GGUF vocabularies: control tokens written in the text read as those
  // tokens (llama_tokenize's parse_special); user-defined tokens always
  // do. tokenizer.json's added tokens are always matched, as the
  // tokenizers library matches them, whatever this says.
  bool parse_special = false;
};

class Tokenizer {
 public:
  // Reads tokenizer.json from a file, or from a directory holding one
  // (a checkpoint's), or the tokenizer a GGUF file carries in its
  // metadata (tokenizer.ggml.*; a file named .gguf or starting with
  // "GGUF"), which encodes as llama.cpp's llama_tokenize does. Input
  // errors name the file and the field or key.
  static Tokenizer load(const std::string& path, const TokenizerLimits& limits = {});
  // load(), except that a GGUF file whose metadata names no tokenizer
  // (tokenizer.ggml.model "none" or "no_vocab", or no such key: a model
  // converted without tokenizer files) gives nullopt instead of an error.
  // The file's metadata is read once either way.
  static std::optional<Tokenizer> load_if_any(const std::string& path,
                                              const TokenizerLimits& limits = {});
  // The same from the JSON text; `name` names it in messages.
  static Tokenizer from_json(std::string_view json, const std::string& name,
                             const TokenizerLimits& limits = {});

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // The ids and tokens of UTF-8 text; add_special_tokens false is Hugging
  // Face's encode(text, add_special_tokens=False). Text that is not UTF-8
  // is an input error naming `source` and the byte offset.
  Encoding encode(std::string_view text, bool add_special_tokens = true,
                  const std::string& source = "text") const;
  Encoding encode(std::string_view text, const EncodeOptions& options,
                  const std::string& source = "text") const;

  // The token of an id as the vocabulary writes it, or "" when no token
  // has that id.
  std::string token(int64_t id) const;
  // The token as a person reads it: byte-level characters (Ġ, Ċ) turned
  // back into the text they stand for, SentencePiece's ▁ into a space,
  // byte-fallback pieces (<0xE4>) into their byte, continuation prefixes
  // (##) kept. Bytes that are not a whole UTF-8 character come as "\xNN".
  std::string readable(const std::string& token) const;

  int64_t vocab_size() const;
  const std::string& name() const;

 private:
  explicit Tokenizer(std::unique_ptr<detail::TokenizerState> impl);
  std::unique_ptr<detail::TokenizerState> impl_;
};

}  // namespace attn
