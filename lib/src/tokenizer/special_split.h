// How llama.cpp finds the special tokens of a GGUF vocabulary in text
// before anything else (tokenizer_st_partition): the tokens are tried one
// after another, longest first, each at every place it occurs, left to
// right, in the text that earlier tokens left; a token marked lstrip or
// rstrip also takes the spaces beside it. That is not the leftmost-longest
// match of tokenizer.json's added tokens: of "ab" and "bcd" in "abcd",
// llama.cpp takes "bcd".
//
// llama.cpp searches the text once per token. attn gets the same pieces in
// time linear in the text (times the longest token at worst): the longest
// token starting at each byte comes from one pass of the added tokens'
// automaton (added_tokens.h, over bytes), and the text is split at the
// token llama.cpp would take first in it, then each side on its own, which
// no token crosses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/added_tokens.h"

namespace attn::tok {

struct SpecialToken {
  int64_t id = 0;
  std::string text;  // bytes
  bool lstrip = false, rstrip = false;
};

// A piece of the text: bytes [begin, end) not yet tokenized, or a token.
struct Fragment {
  size_t begin = 0, end = 0;
  int64_t id = -1;  // >= 0: a special token
};

class SpecialSplitter {
 public:
  // The tokens in the order llama.cpp tries them (each non-empty, no two
  // alike).
  explicit SpecialSplitter(std::vector<SpecialToken> tokens);
  SpecialSplitter(const SpecialSplitter&) = delete;
  SpecialSplitter& operator=(const SpecialSplitter&) = delete;

  // The fragments of text, in order; none for an empty text.
  std::vector<Fragment> split(std::string_view text) const;

 private:
  std::vector<AddedToken> tokens_;  // content: the bytes as code points
  std::vector<SpecialToken> specials_;
  AddedTokenSet set_;
  size_t longest_ = 0;  // the longest token's bytes
};

}  // namespace attn::tok
