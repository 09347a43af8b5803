#include "tokenizer/unicode.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <vector>

#include "base/utf8.h"
#include "unicode_data.inc"

namespace attn::unicode {

namespace {

using data::CategoryRun;
using data::Range;

static_assert(std::size(data::kCategoryNames) == static_cast<size_t>(Category::Cn) + 1,
              "Category and the generated kCategoryNames disagree");

constexpr char32_t kMaxCodePoint = 0x10FFFF;
constexpr char32_t kReplacement = 0xFFFD;

// Hangul syllables decompose and compose by arithmetic (Unicode §3.12):
// S = SBase + (L·VCount + V)·TCount + T, with T = 0 for an LV syllable.
constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28;
constexpr uint32_t kNCount = kVCount * kTCount;  // syllables per leading consonant
constexpr uint32_t kSCount = kLCount * kNCount;

// The categories of U+0000..U+00FF, read from the runs at compile time:
// most text a tokenizer sees is ASCII, which then skips the binary search.
constexpr std::array<uint8_t, 256> latin1_categories() {
  std::array<uint8_t, 256> table{};
  size_t run = 0;
  for (size_t c = 0; c < table.size(); ++c) {
    while (run + 1 < std::size(data::kCategoryRuns) && data::kCategoryRuns[run + 1].first <= c) {
      ++run;
    }
    table[c] = data::kCategoryRuns[run].category;
  }
  return table;
}
constexpr std::array<uint8_t, 256> kLatin1Categories = latin1_categories();

// The entry of a sorted table whose `first` is the greatest not above c,
// or nullptr when c comes before them all.
template <class T, size_t N>
const T* last_at_or_before(const T (&table)[N], char32_t c) {
  const T* it = std::upper_bound(std::begin(table), std::end(table), c,
                                 [](char32_t v, const T& entry) { return v < entry.first; });
  return it == std::begin(table) ? nullptr : std::prev(it);
}

template <size_t N>
bool in_ranges(const Range (&ranges)[N], char32_t c) {
  const Range* r = last_at_or_before(ranges, c);
  return r != nullptr && c <= r->last;
}

bool is_cased(char32_t c) { return in_ranges(data::kCased, c); }
bool is_case_ignorable(char32_t c) { return in_ranges(data::kCaseIgnorable, c); }

const data::Decomposition* find_decomposition(char32_t c) {
  const auto* begin = std::begin(data::kDecompositions);
  const auto* end = std::end(data::kDecompositions);
  const auto* it = std::lower_bound(
      begin, end, c, [](const data::Decomposition& d, char32_t v) { return d.code_point < v; });
  return it != end && it->code_point == c ? it : nullptr;
}

// Appends the full decomposition of c: its mapping applied recursively
// (the tables hold one level, as UnicodeData.txt does; chains are at most
// four deep). Compatibility mappings are followed only when `compat`.
void decompose(char32_t c, bool compat, std::u32string& out) {
  const uint32_t s = static_cast<uint32_t>(c) - kSBase;
  if (s < kSCount) {
    out += static_cast<char32_t>(kLBase + s / kNCount);
    out += static_cast<char32_t>(kVBase + s % kNCount / kTCount);
    if (s % kTCount != 0) out += static_cast<char32_t>(kTBase + s % kTCount);
    return;
  }
  const data::Decomposition* d = find_decomposition(c);
  if (d == nullptr || (d->compat != 0 && !compat)) {
    out += c;
    return;
  }
  for (size_t k = 0; k < d->length; ++k) {
    decompose(data::kDecompositionPool[d->offset + k], compat, out);
  }
}

// Text in a decomposed form, with the combining class of each code point
// kept beside it for the ordering and composition steps.
struct Decomposed {
  std::u32string text;
  std::vector<uint8_t> classes;
};

// Sorts each run of non-starters by combining class, keeping the order of
// equal classes (the Canonical Ordering Algorithm). A run is sorted with
// std::stable_sort, so a long run costs n log n, not n².
void reorder(Decomposed& d) {
  std::vector<std::pair<uint8_t, char32_t>> run;
  const size_t n = d.text.size();
  size_t i = 0;
  while (i < n) {
    if (d.classes[i] == 0) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < n && d.classes[j] != 0) ++j;
    if (j - i > 1) {
      run.clear();
      for (size_t k = i; k < j; ++k) run.emplace_back(d.classes[k], d.text[k]);
      std::stable_sort(run.begin(), run.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (size_t k = i; k < j; ++k) {
        d.classes[k] = run[k - i].first;
        d.text[k] = run[k - i].second;
      }
    }
    i = j;
  }
}

Decomposed decomposed(const std::u32string& text, bool compat) {
  Decomposed d;
  d.text.reserve(text.size());
  for (char32_t c : text) decompose(c, compat, d.text);
  d.classes.reserve(d.text.size());
  for (char32_t c : d.text) d.classes.push_back(combining_class(c));
  reorder(d);
  return d;
}

// The primary composite of a + b, or 0 when there is none.
char32_t compose_pair(char32_t a, char32_t b) {
  const uint32_t l = static_cast<uint32_t>(a) - kLBase;
  const uint32_t v = static_cast<uint32_t>(b) - kVBase;
  if (l < kLCount && v < kVCount)
    return static_cast<char32_t>(kSBase + (l * kVCount + v) * kTCount);
  const uint32_t s = static_cast<uint32_t>(a) - kSBase;
  const uint32_t t = static_cast<uint32_t>(b) - kTBase;
  if (s < kSCount && s % kTCount == 0 && t - 1 < kTCount - 1) return static_cast<char32_t>(a + t);
  const auto* begin = std::begin(data::kCompositions);
  const auto* end = std::end(data::kCompositions);
  const auto* it =
      std::lower_bound(begin, end, std::make_pair(a, b),
                       [](const data::Composition& p, std::pair<char32_t, char32_t> k) {
                         return std::make_pair(p.first, p.second) < k;
                       });
  return it != end && it->first == a && it->second == b ? it->composite : 0;
}

// The Canonical Composition Algorithm: each code point is composed with
// the last starter before it unless something between them blocks it (a
// code point of class 0, or of a class not below its own). After
// reordering, the code points left between the starter and the current one
// rise in class, so the last of them decides.
std::u32string composed(const Decomposed& d) {
  std::u32string out;
  out.reserve(d.text.size());
  size_t starter = std::u32string::npos;
  int last_class = -1;  // -1: nothing left between the starter and here
  for (size_t i = 0; i < d.text.size(); ++i) {
    const char32_t c = d.text[i];
    const int cc = d.classes[i];
    if (starter != std::u32string::npos && (last_class == -1 || last_class < cc)) {
      if (const char32_t composite = compose_pair(out[starter], c)) {
        out[starter] = composite;
        continue;
      }
    }
    if (cc == 0) {
      starter = out.size();
      last_class = -1;
    } else {
      last_class = cc;
    }
    out += c;
  }
  return out;
}

// Below U+00A0 no code point has a decomposition or a non-zero combining
// class, so such text is already in all four forms.
bool below_a0(const std::u32string& text) {
  return std::all_of(text.begin(), text.end(), [](char32_t c) { return c < 0xA0; });
}

// Whether the capital sigma at text[i] ends a word (Final_Sigma): a cased
// code point before it and none after it, case-ignorable ones skipped.
// The scans stop at the next cased code point, and a sigma is cased, so
// each stretch of text is scanned by at most the sigmas on its two sides.
bool is_final_sigma(const std::u32string& text, size_t i) {
  size_t before = i;
  while (before > 0 && is_case_ignorable(text[before - 1])) --before;
  if (before == 0 || !is_cased(text[before - 1])) return false;
  size_t after = i + 1;
  while (after < text.size() && is_case_ignorable(text[after])) ++after;
  return after == text.size() || !is_cased(text[after]);
}

}  // namespace

const char* unicode_version() { return data::kUnicodeVersion; }

Category category(char32_t c) {
  if (c < kLatin1Categories.size()) return static_cast<Category>(kLatin1Categories[c]);
  if (c > kMaxCodePoint) return Category::Cn;
  return static_cast<Category>(last_at_or_before(data::kCategoryRuns, c)->category);
}

const char* category_name(Category category) {
  return data::kCategoryNames[static_cast<size_t>(category)];
}

bool is_letter(char32_t c) { return category(c) <= Category::Lo; }

bool is_mark(char32_t c) {
  const Category k = category(c);
  return k >= Category::Mn && k <= Category::Me;
}

bool is_number(char32_t c) {
  const Category k = category(c);
  return k >= Category::Nd && k <= Category::No;
}

bool is_punctuation(char32_t c) {
  const Category k = category(c);
  return k >= Category::Pc && k <= Category::Po;
}

bool is_symbol(char32_t c) {
  const Category k = category(c);
  return k >= Category::Sm && k <= Category::So;
}

bool is_separator(char32_t c) {
  const Category k = category(c);
  return k >= Category::Zs && k <= Category::Zp;
}

bool is_control(char32_t c) { return category(c) == Category::Cc; }

bool is_white_space(char32_t c) { return in_ranges(data::kWhiteSpace, c); }

uint8_t combining_class(char32_t c) {
  if (c < 0x300) return 0;  // the first non-zero class is U+0300's
  const data::CombiningClassRange* r = last_at_or_before(data::kCombiningClass, c);
  return r != nullptr && c <= r->last ? r->combining_class : 0;
}

void append_lower(char32_t c, std::u32string& out) {
  if (c < 0x80) {
    out += c >= 'A' && c <= 'Z' ? static_cast<char32_t>(c + 0x20) : c;
    return;
  }
  for (const data::LowerSpecial& s : data::kLowerSpecial) {
    if (s.code_point == c) {
      out.append(s.mapping, s.length);
      return;
    }
  }
  const data::LowerRange* r = last_at_or_before(data::kLowerRanges, c);
  if (r != nullptr && c <= r->last && (c - r->first) % r->stride == 0) {
    out += static_cast<char32_t>(static_cast<int32_t>(c) + r->delta);
  } else {
    out += c;
  }
}

std::u32string to_lower(const std::u32string& text) {
  constexpr char32_t kCapitalSigma = 0x3A3, kSmallSigma = 0x3C3, kFinalSigma = 0x3C2;
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == kCapitalSigma) {
      out += is_final_sigma(text, i) ? kFinalSigma : kSmallSigma;
    } else {
      append_lower(text[i], out);
    }
  }
  return out;
}

std::u32string nfd(const std::u32string& text) {
  if (below_a0(text)) return text;
  return decomposed(text, false).text;
}

std::u32string nfkd(const std::u32string& text) {
  if (below_a0(text)) return text;
  return decomposed(text, true).text;
}

std::u32string nfc(const std::u32string& text) {
  if (below_a0(text)) return text;
  return composed(decomposed(text, false));
}

std::u32string nfkc(const std::u32string& text) {
  if (below_a0(text)) return text;
  return composed(decomposed(text, true));
}

size_t decomposed_length(const std::u32string& text, bool compat) {
  if (below_a0(text)) return text.size();
  size_t n = 0;
  std::u32string one;
  for (char32_t c : text) {
    if (c < 0xA0) {
      ++n;
      continue;
    }
    one.clear();
    decompose(c, compat, one);
    n += one.size();
  }
  return n;
}

std::u32string utf8_to_u32(std::string_view text, bool* valid) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  std::u32string out;
  out.reserve(text.size());
  bool ok = true;
  while (p < end) {
    if (*p < 0x80) {
      out += static_cast<char32_t>(*p++);
      continue;
    }
    const size_t n = utf8_sequence_length(p, end);
    if (n == 0) {
      out += kReplacement;
      ok = false;
      ++p;
      continue;
    }
    out += decode_utf8_sequence(p, n);
    p += n;
  }
  if (valid != nullptr) *valid = ok;
  return out;
}

std::string u32_to_utf8(const std::u32string& text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    const bool encodable = c <= kMaxCodePoint && !(c >= 0xD800 && c <= 0xDFFF);
    append_utf8(out, encodable ? c : kReplacement);
  }
  return out;
}

}  // namespace attn::unicode
