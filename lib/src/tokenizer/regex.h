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
// quantifiers ? * + {n} {n,} {n,m} (greedy) on single characters, on
// groups that always read one character ((A|B), (?=[\p{L}])[^a-z]) and ?
// on any group, and look-ahead (?=..) (?!..); in ECMAScript's syntax (the
// std::regex of llama.cpp's pre-tokenizers) also the anchors ^ and $ of
// the text searched. Anything else is refused when the pattern is
// compiled, with what was not understood; a pattern is never run with a
// construct ignored.
//
// Quantified characters are counted in a loop, not by recursion, and every
// match attempt starts where the last ended, so matching stays linear in
// the text for these patterns (a run of n spaces costs O(n) once). Every
// step is counted against a budget that one text's encoding shares: each
// character a quantifier or a look-ahead reads, and each position tried,
// so no pattern costs more than the budget on any text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn::tok {

// The steps the regexes may take over one text, all patterns and pieces
// together: kBaseSteps plus kStepsPerCharacter for each character of the
// text (the real files' patterns take a few per character).
struct RegexBudget {
  static constexpr uint64_t kBaseSteps = 1'000'000;
  static constexpr uint64_t kStepsPerCharacter = 256;
  explicit RegexBudget(size_t text_chars)
      : text_chars(text_chars), steps(kBaseSteps + kStepsPerCharacter * text_chars) {}

  size_t text_chars;  // the text's length, for the message
  uint64_t steps;     // the whole budget
  uint64_t used = 0;
};

// Oniguruma's, of tokenizer.json files; ECMAScript's, of llama.cpp's
// pre-tokenizers. The two differ, for what attn runs, in the anchors alone.
enum class RegexSyntax { kOniguruma, kEcmaScript };

class Regex {
 public:
  // Throws attn::Error (kInput) naming `place` when the pattern uses a
  // construct outside the supported set or is malformed.
  Regex(const std::u32string& pattern, const std::string& place,
        RegexSyntax syntax = RegexSyntax::kOniguruma);
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  ~Regex();

  // Every non-overlapping match [begin, end) of text, left to right (an
  // empty match advances by one code point, as Oniguruma's search does).
  // The steps taken are added to budget.used; an input error naming the
  // pattern when they pass budget.steps.
  std::vector<std::pair<size_t, size_t>> find_all(const std::u32string& text,
                                                  RegexBudget& budget) const;

  struct Program;

 private:
  std::unique_ptr<Program> program_;
};

}  // namespace attn::tok
