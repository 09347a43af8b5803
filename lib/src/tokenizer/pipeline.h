// The normalizers and pre-tokenizers of tokenizer.json, read from the
// file's JSON and applied to text as the tokenizers library applies them.
// A Sequence is flattened into the list; a type attn does not implement is
// refused by name when the file is read.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attn/json.h"
#include "tokenizer/regex.h"

namespace attn::tok {

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
};

// Reads a "normalizer" or "pre_tokenizer" value (null: none). `place` is
// the file and the field, for messages.
std::vector<Normalizer> read_normalizers(const json::Value& v, const std::string& place);
std::vector<PreTokenizer> read_pre_tokenizers(const json::Value& v, const std::string& place);

// Normalizes text (code points) through the steps in order; the regexes'
// steps count against `budget`.
std::u32string normalize(const std::vector<Normalizer>& steps, std::u32string text,
                         RegexBudget& budget);

// The pieces one split of text becomes through the steps in order, each as
// the model will read it (byte-level pieces already in GPT-2's alphabet).
// `first` tells whether the split starts the whole text (Metaspace's
// prepend_scheme "first").
std::vector<std::u32string> pre_tokenize(const std::vector<PreTokenizer>& steps,
                                         const std::u32string& text, bool first,
                                         RegexBudget& budget);

// GPT-2's byte-to-character table: byte b is shown as byte_char(b).
char32_t byte_char(unsigned char b);
// The byte a byte-level character stands for, or -1.
int char_byte(char32_t c);

std::u32string to_u32(const std::string& utf8);
std::string to_utf8(const std::u32string& text);

}  // namespace attn::tok
