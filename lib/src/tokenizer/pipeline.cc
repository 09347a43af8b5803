#include "tokenizer/pipeline.h"

#include <algorithm>
#include <utility>

#include "attn/error.h"
#include "base/utf8.h"
#include "tokenizer/unicode.h"

namespace attn::tok {

std::u32string to_u32(const std::string& utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  const auto* p = reinterpret_cast<const unsigned char*>(utf8.data());
  const auto* end = p + utf8.size();
  while (p < end) {
    const size_t n = utf8_sequence_length(p, end);
    if (n == 0) {  // not reached for checked text; U+FFFD as a reader would
      out += U'\uFFFD';
      ++p;
      continue;
    }
    out += decode_utf8_sequence(p, n);
    p += n;
  }
  return out;
}

std::string to_utf8(const std::u32string& text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) append_utf8(out, c);
  return out;
}

char32_t byte_char(unsigned char b) {
  // GPT-2's table: printable Latin-1 bytes stand for themselves, the other
  // 68 bytes for U+0100 onwards, in byte order.
  static const std::vector<char32_t> table = [] {
    std::vector<char32_t> t(256);
    char32_t next = 256;
    for (unsigned c = 0; c < 256; ++c) {
      const bool printable =
          (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255);
      t[c] = printable ? c : next++;
    }
    return t;
  }();
  return table[b];
}

int char_byte(char32_t c) {
  static const std::vector<int> table = [] {
    std::vector<int> t(512, -1);
    for (unsigned b = 0; b < 256; ++b)
      t[byte_char(static_cast<unsigned char>(b))] = static_cast<int>(b);
    return t;
  }();
  return c < table.size() ? table[c] : -1;
}

namespace {

[[noreturn]] void bad(const std::string& place, const std::string& what) {
  throw_input(place, what);
}

std::string type_of(const json::Value& v, const std::string& place) {
  const json::Value* t = v.is_object() ? v.find("type") : nullptr;
  if (!t || !t->is_string()) bad(place, "expected an object with a \"type\"");
  return t->as_string();
}

bool flag(const json::Value& v, const char* key, bool fallback, const std::string& place) {
  const json::Value* f = v.find(key);
  if (!f || f->is_null()) return fallback;
  if (!f->is_bool()) bad(place + "." + key, "expected true or false, got " + json::describe(*f));
  return f->as_bool();
}

// A string of at most max_bytes (the strings a step adds to text or looks
// for in it).
const std::string& short_string(const json::Value& s, const std::string& place, int64_t max_bytes) {
  if (static_cast<int64_t>(s.as_string().size()) > max_bytes) {
    bad(place, "a string of " + std::to_string(s.as_string().size()) + " bytes (at most " +
                   std::to_string(max_bytes) + ")");
  }
  return s.as_string();
}

std::string text(const json::Value& v, const char* key, const std::string& place,
                 int64_t max_bytes) {
  const json::Value* f = v.find(key);
  if (!f || !f->is_string()) {
    bad(place + "." + key, "expected a string" + (f ? ", got " + json::describe(*f) : ""));
  }
  return short_string(*f, place + "." + key, max_bytes);
}

// {"String": "..."} or {"Regex": "..."}: a literal, or a compiled regex.
void read_pattern(const json::Value& v, const std::string& place, std::u32string& literal,
                  std::shared_ptr<const Regex>& regex, const TokenizerLimits& limits) {
  const json::Value* p = v.find("pattern");
  if (p && p->is_object()) {
    if (const json::Value* s = p->find("String"); s && s->is_string()) {
      literal = to_u32(short_string(*s, place + ".pattern.String", limits.max_string_bytes));
      return;
    }
    if (const json::Value* r = p->find("Regex"); r && r->is_string()) {
      regex = std::make_shared<const Regex>(to_u32(r->as_string()), place + ".pattern.Regex");
      return;
    }
  }
  bad(place + ".pattern", "expected {\"String\": ...} or {\"Regex\": ...}");
}

SplitBehavior behavior(const json::Value& v, const std::string& place) {
  const json::Value* b = v.find("behavior");
  const std::string s = b && b->is_string() ? b->as_string() : "Isolated";
  if (s == "Removed") return SplitBehavior::kRemoved;
  if (s == "Isolated") return SplitBehavior::kIsolated;
  if (s == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (s == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (s == "Contiguous") return SplitBehavior::kContiguous;
  bad(place + ".behavior", "\"" + message_text(s) +
                               "\" is not one of Removed, Isolated, MergedWithPrevious, "
                               "MergedWithNext, Contiguous");
}

void read_normalizer(const json::Value& v, const std::string& place, const TokenizerLimits& limits,
                     std::vector<Normalizer>& out) {
  if (v.is_null()) return;
  const std::string type = type_of(v, place);
  Normalizer n;
  n.place = place;
  if (type == "Sequence") {
    const json::Value* list = v.find("normalizers");
    if (!list || !list->is_array()) bad(place + ".normalizers", "expected a list");
    for (size_t i = 0; i < list->size(); ++i) {
      read_normalizer(list->element(i), place + ".normalizers[" + std::to_string(i) + "]", limits,
                      out);
    }
    return;
  }
  if (type == "NFC") {
    n.kind = Normalizer::kNfc;
  } else if (type == "NFD") {
    n.kind = Normalizer::kNfd;
  } else if (type == "NFKC") {
    n.kind = Normalizer::kNfkc;
  } else if (type == "NFKD") {
    n.kind = Normalizer::kNfkd;
  } else if (type == "Lowercase") {
    n.kind = Normalizer::kLowercase;
  } else if (type == "StripAccents") {
    n.kind = Normalizer::kStripAccents;
  } else if (type == "Replace") {
    n.kind = Normalizer::kReplace;
    read_pattern(v, place, n.pattern, n.regex, limits);
    n.content = to_u32(text(v, "content", place, limits.max_string_bytes));
  } else if (type == "Prepend") {
    n.kind = Normalizer::kPrepend;
    n.content = to_u32(text(v, "prepend", place, limits.max_string_bytes));
  } else if (type == "Strip") {
    n.kind = Normalizer::kStrip;
    n.left = flag(v, "strip_left", false, place);
    n.right = flag(v, "strip_right", false, place);
  } else if (type == "BertNormalizer") {
    n.kind = Normalizer::kBert;
    n.clean_text = flag(v, "clean_text", true, place);
    n.chinese_chars = flag(v, "handle_chinese_chars", true, place);
    n.lowercase = flag(v, "lowercase", true, place);
    n.strip_accents = flag(v, "strip_accents", n.lowercase, place);
  } else {
    bad(place + ".type", "normalizer \"" + message_text(type) +
                             "\" is not one attn implements (NFC, NFD, NFKC, NFKD, Lowercase, "
                             "StripAccents, Replace, Prepend, Strip, BertNormalizer, Sequence)");
  }
  out.push_back(std::move(n));
}

void read_pre_tokenizer(const json::Value& v, const std::string& place,
                        const TokenizerLimits& limits, std::vector<PreTokenizer>& out) {
  if (v.is_null()) return;
  const std::string type = type_of(v, place);
  PreTokenizer p;
  p.place = place;
  if (type == "Sequence") {
    const json::Value* list = v.find("pretokenizers");
    if (!list || !list->is_array()) bad(place + ".pretokenizers", "expected a list");
    for (size_t i = 0; i < list->size(); ++i) {
      read_pre_tokenizer(list->element(i), place + ".pretokenizers[" + std::to_string(i) + "]",
                         limits, out);
    }
    return;
  }
  if (type == "ByteLevel") {
    p.kind = PreTokenizer::kByteLevel;
    p.add_prefix_space = flag(v, "add_prefix_space", true, place);
    p.use_regex = flag(v, "use_regex", true, place);
    if (p.use_regex) {
      // GPT-2's pattern, as the library hard-codes it.
      static const std::shared_ptr<const Regex> gpt2 = std::make_shared<const Regex>(
          U"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
          "GPT-2's pattern");
      p.regex = gpt2;
    }
  } else if (type == "Split") {
    p.kind = PreTokenizer::kSplit;
    read_pattern(v, place, p.literal, p.regex, limits);
    p.behavior = behavior(v, place);
    p.invert = flag(v, "invert", false, place);
  } else if (type == "Metaspace") {
    p.kind = PreTokenizer::kMetaspace;
    const std::u32string r = to_u32(text(v, "replacement", place, limits.max_string_bytes));
    if (r.size() != 1) bad(place + ".replacement", "expected one character");
    p.replacement = r[0];
    const json::Value* scheme = v.find("prepend_scheme");
    const std::string s = scheme && scheme->is_string() ? scheme->as_string() : "always";
    if (s == "always") {
      p.prepend = PreTokenizer::kAlways;
    } else if (s == "first") {
      p.prepend = PreTokenizer::kFirst;
    } else if (s == "never") {
      p.prepend = PreTokenizer::kNever;
    } else {
      bad(place + ".prepend_scheme", "expected always, first or never");
    }
    // The older spelling: add_prefix_space false means never.
    if (!flag(v, "add_prefix_space", true, place)) p.prepend = PreTokenizer::kNever;
    p.split = flag(v, "split", true, place);
  } else if (type == "BertPreTokenizer") {
    p.kind = PreTokenizer::kBert;
  } else if (type == "Whitespace") {
    p.kind = PreTokenizer::kWhitespace;
    static const std::shared_ptr<const Regex> words =
        std::make_shared<const Regex>(U"\\w+|[^\\w\\s]+", "Whitespace's pattern");
    p.regex = words;
  } else if (type == "WhitespaceSplit") {
    p.kind = PreTokenizer::kWhitespaceSplit;
  } else if (type == "Digits") {
    p.kind = PreTokenizer::kDigits;
    p.individual_digits = flag(v, "individual_digits", false, place);
  } else if (type == "Punctuation") {
    p.kind = PreTokenizer::kPunctuation;
    p.behavior = behavior(v, place);
  } else {
    bad(place + ".type", "pre-tokenizer \"" + message_text(type) +
                             "\" is not one attn implements (ByteLevel, Split, Metaspace, "
                             "BertPreTokenizer, Whitespace, WhitespaceSplit, Digits, Punctuation, "
                             "Sequence)");
  }
  out.push_back(std::move(p));
}

// BERT's punctuation: ASCII punctuation and every P* character.
bool is_bert_punctuation(char32_t c) {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
         (c >= 123 && c <= 126) || unicode::is_punctuation(c);
}

// The pieces [begin, end) of text with whether each is a match: matches
// and the gaps between them, covering the text, as find_matches gives them.
using Pieces = std::vector<std::pair<std::pair<size_t, size_t>, bool>>;

Pieces cover(const std::vector<std::pair<size_t, size_t>>& matches, size_t size, bool invert) {
  Pieces out;
  size_t at = 0;
  for (const auto& [b, e] : matches) {
    if (b > at) out.push_back({{at, b}, invert});
    out.push_back({{b, e}, !invert});
    at = e;
  }
  if (at < size) out.push_back({{at, size}, invert});
  return out;
}

template <typename Pred>
std::vector<std::pair<size_t, size_t>> char_matches(const std::u32string& t, Pred pred) {
  std::vector<std::pair<size_t, size_t>> m;
  for (size_t i = 0; i < t.size(); ++i) {
    if (pred(t[i])) m.emplace_back(i, i + 1);
  }
  return m;
}

// The non-overlapping occurrences of lit in t, left to right, by
// Knuth-Morris-Pratt: O(|t| + |lit|) whatever the two hold (a search that
// compares from each position would cost |t| × |lit| on "aaa…").
std::vector<std::pair<size_t, size_t>> literal_matches(const std::u32string& t,
                                                       const std::u32string& lit) {
  std::vector<std::pair<size_t, size_t>> m;
  const size_t n = lit.size();
  if (n == 0) return m;
  std::vector<size_t> border(n, 0);  // the longest proper border of lit[0..i]
  for (size_t i = 1, k = 0; i < n; ++i) {
    while (k > 0 && lit[i] != lit[k]) k = border[k - 1];
    if (lit[i] == lit[k]) ++k;
    border[i] = k;
  }
  for (size_t i = 0, k = 0; i < t.size(); ++i) {
    while (k > 0 && t[i] != lit[k]) k = border[k - 1];
    if (t[i] == lit[k]) ++k;
    if (k == n) {
      m.emplace_back(i + 1 - n, i + 1);
      k = 0;  // the next occurrence starts after this one
    }
  }
  return m;
}

// The library's NormalizedString::split: which pieces stay, and merged how.
std::vector<std::u32string> split(const std::u32string& t, const Pieces& pieces, SplitBehavior b) {
  std::vector<std::pair<std::pair<size_t, size_t>, bool>> kept;  // offsets, removed
  bool previous = false;
  switch (b) {
    case SplitBehavior::kIsolated:
      for (const auto& [o, m] : pieces) kept.push_back({o, false});
      break;
    case SplitBehavior::kRemoved:
      kept = pieces;
      break;
    case SplitBehavior::kContiguous:
      for (const auto& [o, m] : pieces) {
        if (m == previous && !kept.empty()) {
          kept.back().first.second = o.second;
        } else {
          kept.push_back({o, false});
        }
        previous = m;
      }
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (const auto& [o, m] : pieces) {
        if (m && !previous && !kept.empty()) {
          kept.back().first.second = o.second;
        } else {
          kept.push_back({o, false});
        }
        previous = m;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
        const auto& [o, m] = *it;
        if (m && !previous && !kept.empty()) {
          kept.back().first.first = o.first;
        } else {
          kept.push_back({o, false});
        }
        previous = m;
      }
      std::reverse(kept.begin(), kept.end());
      break;
  }
  std::vector<std::u32string> out;
  for (const auto& [o, removed] : kept) {
    if (!removed && o.second > o.first) out.push_back(t.substr(o.first, o.second - o.first));
  }
  return out;
}

std::u32string replace_all(const std::u32string& t, const std::vector<std::pair<size_t, size_t>>& m,
                           const std::u32string& content) {
  std::u32string out;
  size_t at = 0;
  for (const auto& [b, e] : m) {
    out.append(t, at, b - at);
    out += content;
    at = e;
  }
  out.append(t, at, std::u32string::npos);
  return out;
}

// The length replace_all gives, without building it.
size_t replaced_length(const std::u32string& t, const std::vector<std::pair<size_t, size_t>>& m,
                       const std::u32string& content) {
  size_t n = t.size();
  for (const auto& [b, e] : m) n = n - (e - b) + content.size();
  return n;
}

// The library lowercases character by character (char::to_lowercase), so
// a final Σ becomes σ, not ς as str::to_lowercase would make it.
std::u32string lowercase_each(const std::u32string& t) {
  std::u32string out;
  out.reserve(t.size());
  for (char32_t c : t) unicode::append_lower(c, out);
  return out;
}

// The length lowercase_each gives (İ lowercases to two code points).
size_t lowercase_length(const std::u32string& t) {
  size_t n = 0;
  std::u32string one;
  for (char32_t c : t) {
    if (c < 0x80) {
      ++n;
      continue;
    }
    one.clear();
    unicode::append_lower(c, one);
    n += one.size();
  }
  return n;
}

// The "Other" categories (Cc, Cf, Cs, Co, Cn): BERT's control characters.
bool is_other(char32_t c) {
  using unicode::Category;
  const Category k = unicode::category(c);
  return k == Category::Cc || k == Category::Cf || k == Category::Cs || k == Category::Co ||
         k == Category::Cn;
}

bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Rust's char::is_whitespace, with \t \n \r (already White_Space).
bool is_space(char32_t c) { return unicode::is_white_space(c); }

const char* normalizer_name(Normalizer::Kind k) {
  switch (k) {
    case Normalizer::kNfc:
      return "NFC";
    case Normalizer::kNfd:
      return "NFD";
    case Normalizer::kNfkc:
      return "NFKC";
    case Normalizer::kNfkd:
      return "NFKD";
    case Normalizer::kLowercase:
      return "Lowercase";
    case Normalizer::kStripAccents:
      return "StripAccents";
    case Normalizer::kReplace:
      return "Replace";
    case Normalizer::kPrepend:
      return "Prepend";
    case Normalizer::kBert:
      return "BertNormalizer";
    case Normalizer::kStrip:
      return "Strip";
  }
  return "normalizer";
}

const char* pre_tokenizer_name(PreTokenizer::Kind k) {
  switch (k) {
    case PreTokenizer::kByteLevel:
      return "ByteLevel";
    case PreTokenizer::kSplit:
      return "Split";
    case PreTokenizer::kMetaspace:
      return "Metaspace";
    case PreTokenizer::kBert:
      return "BertPreTokenizer";
    case PreTokenizer::kWhitespace:
      return "Whitespace";
    case PreTokenizer::kWhitespaceSplit:
      return "WhitespaceSplit";
    case PreTokenizer::kDigits:
      return "Digits";
    case PreTokenizer::kPunctuation:
      return "Punctuation";
  }
  return "pre-tokenizer";
}

// Refuses a step that would make the text `length` characters long (with
// the pieces already through) when that passes the limit.
void check_growth(const GrowthLimit& g, size_t length, const std::string& place, const char* step) {
  if (length <= g.max_chars - std::min(g.used, g.max_chars)) return;
  bad(place, std::string(step) + " would make " + g.subject + " " +
                 std::to_string(g.used + length) + " characters long, more than " +
                 std::to_string(g.max_chars) + " (" + std::to_string(GrowthLimit::kPerCharacter) +
                 " per character given, plus " + std::to_string(GrowthLimit::kExtra) + ")");
}

std::u32string bert(const Normalizer& n, std::u32string t, const GrowthLimit& g) {
  if (n.clean_text) {
    std::u32string out;
    for (char32_t c : t) {
      const bool control = c != U'\t' && c != U'\n' && c != U'\r' && is_other(c);
      if (c == 0 || c == 0xFFFD || control) continue;
      out += is_space(c) ? U' ' : c;
    }
    t = std::move(out);
  }
  if (n.chinese_chars) {
    const size_t chinese = static_cast<size_t>(std::count_if(t.begin(), t.end(), is_chinese_char));
    check_growth(g, t.size() + 2 * chinese, n.place, "BertNormalizer");
    std::u32string out;
    for (char32_t c : t) {
      if (is_chinese_char(c)) {
        out += U' ';
        out += c;
        out += U' ';
      } else {
        out += c;
      }
    }
    t = std::move(out);
  }
  if (n.strip_accents) {
    check_growth(g, unicode::decomposed_length(t, false), n.place, "BertNormalizer");
    std::u32string out;
    for (char32_t c : unicode::nfd(t)) {
      if (unicode::category(c) != unicode::Category::Mn) out += c;
    }
    t = std::move(out);
  }
  if (n.lowercase) {
    check_growth(g, lowercase_length(t), n.place, "BertNormalizer");
    t = lowercase_each(t);
  }
  return t;
}

}  // namespace

std::vector<Normalizer> read_normalizers(const json::Value& v, const std::string& place,
                                         const TokenizerLimits& limits) {
  std::vector<Normalizer> out;
  read_normalizer(v, place, limits, out);
  return out;
}

std::vector<PreTokenizer> read_pre_tokenizers(const json::Value& v, const std::string& place,
                                              const TokenizerLimits& limits) {
  std::vector<PreTokenizer> out;
  read_pre_tokenizer(v, place, limits, out);
  return out;
}

std::u32string normalize(const std::vector<Normalizer>& steps, std::u32string t,
                         const GrowthLimit& growth, RegexBudget& budget) {
  for (const Normalizer& n : steps) {
    // Each step that can lengthen the text is measured before it is built:
    // the four forms by their decomposition (which NFC and NFKC compose
    // again), Lowercase by each character's mapping, Replace by its matches.
    auto check = [&](size_t length) {
      check_growth(growth, length, n.place, normalizer_name(n.kind));
    };
    switch (n.kind) {
      case Normalizer::kNfc:
        check(unicode::decomposed_length(t, false));
        t = unicode::nfc(t);
        break;
      case Normalizer::kNfd:
        check(unicode::decomposed_length(t, false));
        t = unicode::nfd(t);
        break;
      case Normalizer::kNfkc:
        check(unicode::decomposed_length(t, true));
        t = unicode::nfkc(t);
        break;
      case Normalizer::kNfkd:
        check(unicode::decomposed_length(t, true));
        t = unicode::nfkd(t);
        break;
      case Normalizer::kLowercase:
        check(lowercase_length(t));
        t = lowercase_each(t);
        break;
      case Normalizer::kStripAccents: {
        std::u32string out;
        for (char32_t c : t) {
          if (!unicode::is_mark(c)) out += c;
        }
        t = std::move(out);
        break;
      }
      case Normalizer::kReplace: {
        const auto m = n.regex ? n.regex->find_all(t, budget) : literal_matches(t, n.pattern);
        check(replaced_length(t, m, n.content));
        t = replace_all(t, m, n.content);
        break;
      }
      case Normalizer::kPrepend:
        if (!t.empty()) {
          check(t.size() + n.content.size());
          t = n.content + t;
        }
        break;
      case Normalizer::kStrip: {
        size_t b = 0, e = t.size();
        if (n.left) {
          while (b < e && is_space(t[b])) ++b;
        }
        if (n.right) {
          while (e > b && is_space(t[e - 1])) --e;
        }
        t = t.substr(b, e - b);
        break;
      }
      case Normalizer::kBert:
        t = bert(n, std::move(t), growth);
        break;
    }
  }
  return t;
}

std::vector<std::u32string> pre_tokenize(const std::vector<PreTokenizer>& steps,
                                         const std::u32string& text, bool first,
                                         const GrowthLimit& growth, RegexBudget& budget) {
  // Each piece remembers whether it starts the whole text.
  std::vector<std::pair<std::u32string, bool>> pieces = {{text, first}};
  for (const PreTokenizer& p : steps) {
    std::vector<std::pair<std::u32string, bool>> next;
    // ByteLevel (a character a byte, and a space) and Metaspace (its ▁)
    // lengthen the pieces: each is measured before it is built.
    size_t total = 0;  // characters of `next`
    auto check = [&](size_t more) {
      check_growth(growth, total + more, p.place, pre_tokenizer_name(p.kind));
    };
    for (auto& [t, starts] : pieces) {
      std::vector<std::u32string> out;
      switch (p.kind) {
        case PreTokenizer::kByteLevel: {
          std::u32string s = t;
          if (p.add_prefix_space && (s.empty() || s[0] != U' ')) {
            check(s.size() + 1);
            s.insert(s.begin(), U' ');
          }
          out = p.use_regex ? split(s, cover(p.regex->find_all(s, budget), s.size(), false),
                                    SplitBehavior::kIsolated)
                            : std::vector<std::u32string>{s};
          // Each piece in GPT-2's alphabet: its UTF-8 bytes as characters.
          size_t mapped_so_far = 0;
          for (std::u32string& piece : out) {
            const std::string bytes = to_utf8(piece);
            mapped_so_far += bytes.size();
            check(mapped_so_far);
            std::u32string mapped;
            mapped.reserve(bytes.size());
            for (unsigned char b : bytes) mapped += byte_char(b);
            piece = std::move(mapped);
          }
          break;
        }
        case PreTokenizer::kSplit: {
          const auto m = p.regex ? p.regex->find_all(t, budget) : literal_matches(t, p.literal);
          out = split(t, cover(m, t.size(), p.invert), p.behavior);
          break;
        }
        case PreTokenizer::kMetaspace: {
          std::u32string s = t;
          std::replace(s.begin(), s.end(), U' ', p.replacement);
          const bool prepend =
              p.prepend == PreTokenizer::kAlways || (p.prepend == PreTokenizer::kFirst && starts);
          if (prepend && (s.empty() || s[0] != p.replacement)) {
            check(s.size() + 1);
            s.insert(s.begin(), p.replacement);
          }
          out = p.split
                    ? split(s,
                            cover(char_matches(s, [&](char32_t c) { return c == p.replacement; }),
                                  s.size(), false),
                            SplitBehavior::kMergedWithNext)
                    : std::vector<std::u32string>{s};
          break;
        }
        case PreTokenizer::kBert: {
          for (const std::u32string& w : split(t, cover(char_matches(t, is_space), t.size(), false),
                                               SplitBehavior::kRemoved)) {
            for (std::u32string& q :
                 split(w, cover(char_matches(w, is_bert_punctuation), w.size(), false),
                       SplitBehavior::kIsolated)) {
              out.push_back(std::move(q));
            }
          }
          break;
        }
        case PreTokenizer::kWhitespace:
          out = split(t, cover(p.regex->find_all(t, budget), t.size(), true),
                      SplitBehavior::kRemoved);
          break;
        case PreTokenizer::kWhitespaceSplit:
          out =
              split(t, cover(char_matches(t, is_space), t.size(), false), SplitBehavior::kRemoved);
          break;
        case PreTokenizer::kDigits:
          out = split(t, cover(char_matches(t, unicode::is_number), t.size(), false),
                      p.individual_digits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous);
          break;
        case PreTokenizer::kPunctuation:
          out = split(t, cover(char_matches(t, is_bert_punctuation), t.size(), false), p.behavior);
          break;
      }
      for (size_t i = 0; i < out.size(); ++i) {
        total += out[i].size();
        next.emplace_back(std::move(out[i]), starts && i == 0);
      }
    }
    pieces = std::move(next);
  }
  std::vector<std::u32string> out;
  out.reserve(pieces.size());
  for (auto& [t, starts] : pieces) out.push_back(std::move(t));
  return out;
}

}  // namespace attn::tok
