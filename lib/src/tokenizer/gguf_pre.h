// The pre-tokenizers of GGUF byte-pair vocabularies, as llama.cpp runs
// them: tokenizer.ggml.pre names one, and src/llama-vocab.cpp maps each
// name to a list of regular expressions that split the text in turn (each
// splits the pieces of the one before into its matches and the text
// between them), and to a few settings (merges ignored for whole-token
// words, a BOS token by default, spaces written as ▁, bytes not mapped to
// GPT-2's alphabet).
//
// llama.cpp runs an expression that names a Unicode category (\p{L},
// \p{N}, \p{P}, \p{M}, \p{S}, \p{Lu}...) with std::regex over a collapsed
// text: each character past ASCII is replaced by one byte for its category
// (whitespace by \v), and each \p{..} by that byte and the ASCII
// characters of the category, so \p{Lu} matches every letter. The others
// it runs over the code points with the whitespace past ASCII replaced by
// \v. attn does the same with its own matcher (regex.h), so the pieces are
// llama.cpp's, quirks included. (llama.cpp's own code for the GPT-2,
// Llama 3, Qwen 2 and 3.5 expressions gives what the expressions give.)
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/regex.h"

namespace attn::tok {

struct GgufPre {
  std::string name;
  struct Pattern {
    std::shared_ptr<const Regex> regex;
    bool collapsed = false;  // run over the collapsed text
  };
  std::vector<Pattern> patterns;
  bool byte_encode = true;     // pieces in GPT-2's byte alphabet (else raw UTF-8, <0xNN> bytes)
  bool ignore_merges = false;  // a word that is a token is that token
  bool add_bos = false;        // llama.cpp's default for add_bos_token
  bool no_bos = false;         // no BOS token unless the file names one
  bool escape_spaces = false;  // spaces written as ▁ first (Gemma 4)
  bool newline_words = false;  // a word of newlines that is a token is that token (Gemma 4)
};

// The pre-tokenizer llama.cpp maps `name` to ("" is its "default"). An
// input error naming `place` (the file and tokenizer.ggml.pre) when
// llama.cpp has no such name, or when attn's matcher cannot run one of its
// expressions (llama.cpp's own splitting code for Kimi K2 and AFMoE, the
// repeated groups of exaone-moe and superbpe).
GgufPre gguf_pre(const std::string& name, const std::string& place);

// Every name llama.cpp maps, in its order.
std::vector<std::string> gguf_pre_names();

// The pieces [begin, end) of text (code points as llama.cpp decodes them,
// gguf_code_points) after each expression in turn; empty pieces are left
// out. The expressions' steps count against `budget`.
std::vector<std::pair<size_t, size_t>> gguf_pre_split(const GgufPre& pre,
                                                      const std::u32string& text,
                                                      RegexBudget& budget);

}  // namespace attn::tok
