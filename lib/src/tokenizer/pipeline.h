// The normalizers and pre-tokenizers of tokenizer.json, read from the
// file's JSON and applied to text as the tokenizers library applies them.
// A Sequence is flattened into the list; a type attn does not implement is
// refused by name when the file is read.
//
// A text may grow on its way through (NFKD writes up to 18 characters for
// one, ByteLevel a character per byte, a Replace its content for each
// match, and a Sequence may chain them), so each step is checked against a
// GrowthLimit before it builds its result: the pipeline's memory is linear
// in the text whatever the file says.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attn/json.h"
#include "attn/tokenizer.h"
#include "tokenizer/regex.h"

namespace attn::tok {

// How long a text may become: after each normalizer, the normalized text,
// and after each pre-tokenizer, its pieces together, hold at most
// kPerCharacter characters for each character of the text as given, plus
// kExtra. Real files stay far below (ByteLevel on 4-byte characters gives
// 4, BertNormalizer on Chinese 3); a file whose steps multiply the text is
// stopped at the step that passes it, before it builds the longer text.
struct GrowthLimit {
  static constexpr size_t kPerCharacter = 8;
  static constexpr size_t kExtra = 1024;
  GrowthLimit(size_t given_chars, std::string subject)
      : max_chars(kPerCharacter * given_chars + kExtra), subject(std::move(subject)) {}

  size_t max_chars;     // for all the pieces of the text together
  size_t used = 0;      // characters of the pieces already through these steps
  std::string subject;  // what grows, for messages: "the text"
};

// One normalizer step.
struct Normalizer {
  enum Kind {
    kNfc,
    kNfd,
    kNfkc,
    kNfkd,
    kLowercase,
    kStripAccents,
    kReplace,
    kPrepend,
    kBert,
    kStrip,
  } kind = kNfc;
  // kReplace: a literal or a regex, and what replaces each match.
  std::u32string pattern;
  std::shared_ptr<const Regex> regex;
  std::u32string content;  // kReplace's replacement, kPrepend's prefix
  // kBert
  bool clean_text = true, chinese_chars = true, strip_accents = false, lowercase = true;
  // kStrip
  bool left = false, right = false;
  std::string place;  // the file and the field, for messages
};

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// One pre-tokenizer step.
struct PreTokenizer {
  enum Kind {
    kByteLevel,
    kSplit,
    kMetaspace,
    kBert,
    kWhitespace,
    kWhitespaceSplit,
    kDigits,
    kPunctuation,
  } kind = kByteLevel;
  // kByteLevel
  bool add_prefix_space = false, use_regex = true;
  // kSplit (regex or literal), kPunctuation (behavior)
  std::shared_ptr<const Regex> regex;
  std::u32string literal;
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
  // kMetaspace
  char32_t replacement = U'\u2581';
  enum Prepend { kAlways, kFirst, kNever } prepend = kAlways;
  bool split = true;
  // kDigits
  bool individual_digits = false;
  std::string place;  // the file and the field, for messages
};

// Reads a "normalizer" or "pre_tokenizer" value (null: none). `place` is
// the file and the field, for messages; strings longer than
// limits.max_string_bytes are refused.
std::vector<Normalizer> read_normalizers(const json::Value& v, const std::string& place,
                                         const TokenizerLimits& limits);
std::vector<PreTokenizer> read_pre_tokenizers(const json::Value& v, const std::string& place,
                                              const TokenizerLimits& limits);

// Normalizes text (code points) through the steps in order. A step that
// would take growth.used plus the text past growth.max_chars is an input
// error naming it; the regexes' steps count against `budget`.
std::u32string normalize(const std::vector<Normalizer>& steps, std::u32string text,
                         const GrowthLimit& growth, RegexBudget& budget);

// The pieces one split of text becomes through the steps in order, each as
// the model will read it (byte-level pieces already in GPT-2's alphabet).
// `first` tells whether the split starts the whole text (Metaspace's
// prepend_scheme "first"). The pieces are checked against `growth` as
// normalize's text is.
std::vector<std::u32string> pre_tokenize(const std::vector<PreTokenizer>& steps,
                                         const std::u32string& text, bool first,
                                         const GrowthLimit& growth, RegexBudget& budget);

// GPT-2's byte-to-character table: byte b is shown as byte_char(b).
char32_t byte_char(unsigned char b);
// The byte a byte-level character stands for, or -1.
int char_byte(char32_t c);

std::u32string to_u32(const std::string& utf8);
std::string to_utf8(const std::u32string& text);

}  // namespace attn::tok
