// The regular expressions of tokenizer.json files (the Split pre-tokenizer,
// GPT-2's ByteLevel splitting, Replace normalizers), run over code points
// with the semantics of Oniguruma, which the tokenizers library uses:
// leftmost match, alternatives tried in order, greedy quantifiers that
// back off one step at a time.
//
// std::regex has neither \p{L} nor Unicode \s, so this is a small
// backtracking matcher for the constructs real files carry: literals and
// escapes, classes with ranges, negation, \p{..}/\P{..} (general
// categories and their one-letter groups), \s \S \d \D \w \W, `.`, groups
// (?:..), (..) and (?i:..) (ASCII case-insensitive), alternation, the
// quantifiers ? * + {n} {n,} {n,m} (greedy) on single characters and ? on
// groups, and look-ahead (?=..) (?!..). Anything else is refused when the
// pattern is compiled, with what was not understood; a pattern is never
// run with a construct ignored.
//
// Quantified characters are counted in a loop, not by recursion, and every
// match attempt starts where the last ended, so matching stays linear in
// the text for these patterns (a run of n spaces costs O(n) once).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn::tok {

class Regex {
 public:
  // Throws attn::Error (kInput) naming `place` when the pattern uses a
  // construct outside the supported set or is malformed.
  Regex(const std::u32string& pattern, const std::string& place);
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  ~Regex();

  // Every non-overlapping match [begin, end) of text, left to right (an
  // empty match advances by one code point, as Oniguruma's search does).
  std::vector<std::pair<size_t, size_t>> find_all(const std::u32string& text) const;

  struct Program;

 private:
  std::unique_ptr<Program> program_;
};

}  // namespace attn::tok
