// The tokenizer's Unicode layer (lib/src/tokenizer/unicode.h): categories,
// White_Space, lowercasing and the normalization forms on literal cases,
// the generated tables' shape, then everything against Python's
// unicodedata and str.lower(), the source the tables were generated from.
#include "tokenizer/unicode.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "test_util.h"
#include "tokenizer/unicode_data.inc"

namespace attn::unicode {
namespace {

// Code points as "U+0041 U+0301", for messages.
std::string hex(const std::u32string& s) {
  std::ostringstream out;
  out << std::hex << std::uppercase;
  for (size_t i = 0; i < s.size(); ++i) {
    out << (i ? " " : "") << "U+" << static_cast<uint32_t>(s[i]);
  }
  return out.str();
}

std::u32string u32(std::string_view utf8) {
  bool valid = false;
  std::u32string s = utf8_to_u32(utf8, &valid);
  EXPECT_TRUE(valid) << utf8;
  return s;
}

#define EXPECT_U32_EQ(got, want) EXPECT_EQ(hex(got), hex(want))

TEST(UnicodeNormalization, AccentedLetters) {
  const std::u32string e_acute = U"\u00E9", e_combining = U"e\u0301";
  EXPECT_U32_EQ(nfd(e_acute), e_combining);
  EXPECT_U32_EQ(nfc(e_combining), e_acute);
  EXPECT_U32_EQ(nfc(e_acute), e_acute);
  EXPECT_U32_EQ(nfkd(e_acute), e_combining);
  EXPECT_U32_EQ(nfkc(e_combining), e_acute);
  // Å three ways: the letter, the Angstrom sign (a singleton that never
  // comes back) and A + ring.
  for (const std::u32string s : {U"\u00C5", U"\u212B", U"A\u030A"}) {
    EXPECT_U32_EQ(nfc(s), U"\u00C5") << hex(s);
    EXPECT_U32_EQ(nfd(s), U"A\u030A") << hex(s);
    EXPECT_U32_EQ(nfkc(s), U"\u00C5") << hex(s);
  }
  // UTF-8 in, UTF-8 out.
  EXPECT_EQ(u32_to_utf8(nfc(u32("caf"
                                "e\xCC\x81"))),
            "caf\xC3\xA9");
}

TEST(UnicodeNormalization, CompatibilityForms) {
  EXPECT_U32_EQ(nfkc(U"\uFB01"), U"fi");  // ﬁ ligature
  EXPECT_U32_EQ(nfc(U"\uFB01"), U"\uFB01");
  EXPECT_U32_EQ(nfkc(U"\u2460"), U"1");                         // ①
  EXPECT_U32_EQ(nfkd(U"\uFF21\uFF42"), U"Ab");                  // fullwidth
  EXPECT_U32_EQ(nfkc(U"\u3300"), U"\u30A2\u30D1\u30FC\u30C8");  // ㌀: パ composes
  EXPECT_U32_EQ(nfkd(U"\u3300"), U"\u30A2\u30CF\u309A\u30FC\u30C8");
  EXPECT_U32_EQ(nfkc(U"\u00A0x"), U" x");
}

TEST(UnicodeNormalization, Hangul) {
  const std::u32string han = U"\uD55C", jamo = U"\u1112\u1161\u11AB";
  EXPECT_U32_EQ(nfd(han), jamo);
  EXPECT_U32_EQ(nfc(jamo), han);
  EXPECT_U32_EQ(nfc(nfd(han)), han);
  EXPECT_U32_EQ(nfd(U"\uAC00"), U"\u1100\u1161");              // LV: no trailing consonant
  EXPECT_U32_EQ(nfc(U"\uAC00\u11A8"), U"\uAC01");              // LV + T
  EXPECT_U32_EQ(nfc(U"\u1100\u1161\u11A7"), U"\uAC00\u11A7");  // U+11A7 is no T
}

TEST(UnicodeNormalization, OrderingBlockingAndExclusions) {
  // Marks sort by class (220 before 230); the acute still reaches the a.
  EXPECT_U32_EQ(nfd(U"a\u0301\u0316"), U"a\u0316\u0301");
  EXPECT_U32_EQ(nfc(U"a\u0301\u0316"), U"\u00E1\u0316");
  // A second acute is blocked by the first.
  EXPECT_U32_EQ(nfc(U"a\u0301\u0301"), U"\u00E1\u0301");
  EXPECT_U32_EQ(nfc(U"a\u030B\u0301"), U"a\u030B\u0301");  // blocked by a mark of its class
  // Composites compose further: A + diaeresis, then Ä + macron.
  EXPECT_U32_EQ(nfc(U"A\u0308\u0304"), U"\u01DE");
  // Composition exclusions stay decomposed.
  EXPECT_U32_EQ(nfc(U"\u0958"), U"\u0915\u093C");
  EXPECT_U32_EQ(nfc(U"\u2ADC"), U"\u2ADD\u0338");
  EXPECT_U32_EQ(nfc(U"\u0344"), U"\u0308\u0301");
  // Two starters compose when adjacent (Oriya vowel sign O).
  EXPECT_U32_EQ(nfc(U"\u0B47\u0B3E"), U"\u0B4B");
  // Non-starters at the start have nothing to compose with.
  EXPECT_U32_EQ(nfc(U"\u0301e"), U"\u0301e");
  EXPECT_U32_EQ(nfc(U""), U"");
}

// A long run of marks is sorted in n log n, and stably: 200,000 marks.
TEST(UnicodeNormalization, LongRunOfMarks) {
  std::u32string text = U"a";
  for (int i = 0; i < 100000; ++i) text += U"\u0301\u0316";
  const std::u32string d = nfd(text);
  ASSERT_EQ(d.size(), text.size());
  EXPECT_EQ(d.find(U'\u0301'), 100001u);
  EXPECT_EQ(d.rfind(U'\u0316'), 100000u);
  const std::u32string c = nfc(text);
  ASSERT_EQ(c.size(), text.size() - 1);
  EXPECT_EQ(c[0], U'\u00E1');
}

TEST(UnicodeLower, FullMappingAndFinalSigma) {
  EXPECT_U32_EQ(to_lower(U"\u0130"), U"i\u0307");                         // İ
  EXPECT_U32_EQ(to_lower(U"\u03A3\u0391\u03A3"), U"\u03C3\u03B1\u03C2");  // ΣΑΣ → σας
  EXPECT_U32_EQ(to_lower(U"\u03A3"), U"\u03C3");                          // no cased letter before
  EXPECT_U32_EQ(to_lower(U"\u0391\u03A3 x"), U"\u03B1\u03C2 x");
  EXPECT_U32_EQ(to_lower(U"\u0391\u03A3\u0391"), U"\u03B1\u03C3\u03B1");
  // Case-ignorable code points are skipped on both sides.
  EXPECT_U32_EQ(to_lower(U"\u0391'\u03A3'"), U"\u03B1'\u03C2'");
  EXPECT_U32_EQ(to_lower(U"\u0391\u03A3'\u0391"), U"\u03B1\u03C3'\u03B1");
  EXPECT_U32_EQ(to_lower(U"HELLO World \u00C9T\u00C9"), U"hello world \u00E9t\u00E9");
  // One code point alone, as the tokenizers library's Lowercase maps it.
  std::u32string out;
  append_lower(U'\u03A3', out);
  append_lower(U'\u0130', out);
  append_lower(U'\u212A', out);  // Kelvin sign
  append_lower(U'\u1E9E', out);  // capital sharp s
  append_lower(U'z', out);
  EXPECT_U32_EQ(out, U"\u03C3i\u0307k\u00DFz");
}

TEST(UnicodeCategory, Literals) {
  const std::vector<std::pair<char32_t, const char*>> cases = {
      {U'a', "Ll"},      {U'A', "Lu"},      {U'1', "Nd"},      {U'\u00BD', "No"},
      {U'\u0301', "Mn"}, {U'\u4E2D', "Lo"}, {U'\uFF0C', "Po"}, {U'$', "Sc"},
      {U' ', "Zs"},      {U'\u3000', "Zs"}, {U'\n', "Cc"},     {U'\u01C5', "Lt"},
      {0xD800, "Cs"},    {U'\uE000', "Co"}, {0x10FFFF, "Cn"},  {0x110000, "Cn"},
  };
  for (const auto& [c, name] : cases) {
    EXPECT_STREQ(category_name(category(c)), name) << hex(std::u32string(1, c));
  }
  EXPECT_TRUE(is_letter(U'\u4E2D'));
  EXPECT_TRUE(is_number(U'\u00BD'));
  EXPECT_TRUE(is_mark(U'\u0301'));
  EXPECT_TRUE(is_punctuation(U'\uFF0C'));
  EXPECT_TRUE(is_symbol(U'$'));
  EXPECT_TRUE(is_separator(U'\u3000'));
  EXPECT_TRUE(is_control(U'\t'));
  EXPECT_FALSE(is_control(U'\u200B'));  // Cf, not Cc
  EXPECT_FALSE(is_letter(U'1'));
}

TEST(UnicodeCategory, WhiteSpace) {
  for (char32_t c : {U'\t', U'\n', U'\r', U' ', U'\u0085', U'\u00A0', U'\u1680', U'\u2000',
                     U'\u200A', U'\u2028', U'\u2029', U'\u202F', U'\u205F', U'\u3000'}) {
    EXPECT_TRUE(is_white_space(c)) << hex(std::u32string(1, c));
  }
  for (char32_t c : {U'\u200B', U'\u180E', U'\uFEFF', U'x', U'\u0000', U'\u001F'}) {
    EXPECT_FALSE(is_white_space(c)) << hex(std::u32string(1, c));
  }
}

TEST(UnicodeUtf8, RoundTripAndInvalidBytes) {
  bool valid = false;
  EXPECT_U32_EQ(utf8_to_u32("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80", &valid),
                U"a\u00E9\u4E2D\U0001F600");
  EXPECT_TRUE(valid);
  EXPECT_EQ(u32_to_utf8(U"a\u00E9\u4E2D\U0001F600"), "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80");
  EXPECT_U32_EQ(utf8_to_u32("a\xFF"
                            "b\xE4\xB8",
                            &valid),
                U"a\uFFFDb\uFFFD\uFFFD");
  EXPECT_FALSE(valid);
  EXPECT_EQ(u32_to_utf8(std::u32string{0x110000, 0xD800, U'x'}),
            "\xEF\xBF\xBD\xEF\xBF\xBD"
            "x");
}

// The generated tables are sorted and disjoint, the category runs cover
// the code space, and every category index names a category.
TEST(UnicodeTables, AreWellFormed) {
  EXPECT_STREQ(unicode_version(), data::kUnicodeVersion);
  EXPECT_EQ(data::kCategoryRuns[0].first, 0u);
  for (size_t i = 1; i < std::size(data::kCategoryRuns); ++i) {
    EXPECT_LT(data::kCategoryRuns[i - 1].first, data::kCategoryRuns[i].first);
    EXPECT_NE(data::kCategoryRuns[i - 1].category, data::kCategoryRuns[i].category);
  }
  for (const auto& r : data::kCategoryRuns) EXPECT_LT(r.category, std::size(data::kCategoryNames));
  auto disjoint = [](const auto& table, const char* name) {
    for (size_t i = 0; i < std::size(table); ++i) {
      EXPECT_LE(table[i].first, table[i].last) << name << " " << i;
      if (i > 0) {
        EXPECT_LT(table[i - 1].last, table[i].first) << name << " " << i;
      }
    }
  };
  disjoint(data::kWhiteSpace, "kWhiteSpace");
  disjoint(data::kCased, "kCased");
  disjoint(data::kCaseIgnorable, "kCaseIgnorable");
  disjoint(data::kCombiningClass, "kCombiningClass");
  disjoint(data::kLowerRanges, "kLowerRanges");
  for (size_t i = 1; i < std::size(data::kDecompositions); ++i) {
    EXPECT_LT(data::kDecompositions[i - 1].code_point, data::kDecompositions[i].code_point);
  }
  const auto& last = data::kDecompositions[std::size(data::kDecompositions) - 1];
  EXPECT_EQ(last.offset + last.length, std::size(data::kDecompositionPool));
  for (size_t i = 1; i < std::size(data::kCompositions); ++i) {
    const auto& a = data::kCompositions[i - 1];
    const auto& b = data::kCompositions[i];
    EXPECT_TRUE(a.first < b.first || (a.first == b.first && a.second < b.second)) << i;
  }
}

// ---- against Python -----------------------------------------------------

bool python_has_unicodedata() {
  return std::system("/usr/bin/python3 -c 'import unicodedata' >/dev/null 2>&1") == 0;
}

// Random strings of 1 to 6 clusters: a code point from the ranges where
// the forms and lowercasing do something, half the time followed by 1 to 3
// combining marks, so that composition, reordering, blocking and
// Final_Sigma meet each other often.
std::vector<std::u32string> random_strings(size_t count) {
  using Ranges = std::vector<std::pair<char32_t, char32_t>>;
  const Ranges bases = {
      {0x0041, 0x007A},    // ASCII letters
      {0x00C0, 0x024F},    // Latin-1 and Latin Extended
      {0x1E00, 0x1EFF},    // Latin Extended Additional
      {0x0370, 0x03FF},    // Greek
      {0x1F00, 0x1FFF},    // Greek Extended
      {0x1100, 0x11FF},    // Hangul jamo
      {0xAC00, 0xD7A3},    // Hangul syllables
      {0x3130, 0x318F},    // Hangul compatibility jamo
      {0x3040, 0x30FF},    // kana (voiced sound marks compose)
      {0x3200, 0x33FF},    // enclosed CJK and CJK compatibility
      {0xF900, 0xFAFF},    // CJK compatibility ideographs
      {0x2F800, 0x2FA1F},  // CJK compatibility ideographs supplement
      {0xFF00, 0xFFEF},    // half- and fullwidth forms
      {0xFB00, 0xFB4F},    // alphabetic presentation forms (ligatures)
      {0xFB50, 0xFDFF},    // Arabic presentation forms A
      {0xFE70, 0xFEFF},    // Arabic presentation forms B
      {0x2460, 0x24FF},    // enclosed alphanumerics
      {0x1D400, 0x1D7FF},  // mathematical alphanumerics
      {0x0900, 0x097F},    // Devanagari (exclusions, nukta)
      {0x0B00, 0x0B7F},    // Oriya (starter + starter)
      {0x0F40, 0x0F81},    // Tibetan (non-starter decompositions)
      {0x03A3, 0x03A3},    // Σ
      {0x0027, 0x0027},    // apostrophe (case-ignorable)
      {0x0130, 0x0130},    // İ
      {0x0020, 0x0020},
  };
  const Ranges marks = {
      {0x0300, 0x036F},  // combining diacritical marks
      {0x0300, 0x0314},  // the commonest of them again (class 230)
      {0x0591, 0x05C7},  // Hebrew points (many classes)
      {0x0F71, 0x0F84},  // Tibetan vowel signs
      {0x1DC0, 0x1DFF},  // combining marks supplement
      {0x20D0, 0x20F0},  // combining marks for symbols
      {0x3099, 0x309A},  // kana voiced sound marks
      {0x093C, 0x094D},  // Devanagari nukta and signs
  };
  std::mt19937 rng(20240611);
  auto pick = [&rng](const Ranges& ranges) {
    const auto& [first, last] =
        ranges[std::uniform_int_distribution<size_t>(0, ranges.size() - 1)(rng)];
    return static_cast<char32_t>(std::uniform_int_distribution<uint32_t>(first, last)(rng));
  };
  std::uniform_int_distribution<int> clusters(1, 6), mark_count(-3, 3);
  std::vector<std::u32string> strings;
  for (size_t i = 0; i < count; ++i) {
    std::u32string s;
    for (int n = clusters(rng); n > 0; --n) {
      s += pick(bases);
      for (int m = mark_count(rng); m > 0; --m) s += pick(marks);
    }
    strings.push_back(s);
  }
  return strings;
}

std::string hex_line(const std::u32string& s) {
  std::ostringstream out;
  out << std::hex << std::uppercase;
  for (size_t i = 0; i < s.size(); ++i) out << (i ? " " : "") << static_cast<uint32_t>(s[i]);
  return out.str();
}

std::u32string parse_hex_line(const std::string& line) {
  std::u32string s;
  std::istringstream in(line);
  in >> std::hex;
  uint32_t c;
  while (in >> c) s += static_cast<char32_t>(c);
  return s;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

constexpr char32_t kCategoryStep = 7;

// nfc, nfd, nfkc, nfkd and to_lower of 4,000 random strings and of every
// 7th code point alone, and the category of every 7th code point, each
// against Python's unicodedata.normalize, str.lower and
// unicodedata.category (str.lower applies Final_Sigma as to_lower does).
TEST(UnicodeCrossCheck, MatchesPython) {
  if (!python_has_unicodedata()) {
    GTEST_SKIP() << "/usr/bin/python3 with unicodedata is not installed";
  }
  std::vector<std::u32string> inputs = random_strings(4000);
  for (char32_t c = 0; c <= 0x10FFFF; c += kCategoryStep) {
    if (c < 0xD800 || c > 0xDFFF) inputs.emplace_back(1, c);
  }
  std::string lines;
  for (const std::u32string& s : inputs) lines += hex_line(s) + "\n";
  const std::string in_file = test::write_temp("unicode_inputs.txt", lines);
  const std::string script = test::write_temp(
      "unicode_check.py",
      "import sys, unicodedata\n"
      "if unicodedata.unidata_version != sys.argv[2]:\n"
      "    print('SKIP', unicodedata.unidata_version)\n"
      "    sys.exit(0)\n"
      "def enc(s):\n"
      "    return ' '.join('%X' % ord(ch) for ch in s)\n"
      "out = []\n"
      "for line in open(sys.argv[1]).read().split('\\n')[:-1]:\n"
      "    s = ''.join(chr(int(x, 16)) for x in line.split())\n"
      "    out.append('\\t'.join(enc(unicodedata.normalize(f, s))\n"
      "                         for f in ('NFC', 'NFD', 'NFKC', 'NFKD')) + '\\t' + "
      "enc(s.lower()))\n"
      "out.append(' '.join(unicodedata.category(chr(c)) for c in range(0, 0x110000, " +
          std::to_string(kCategoryStep) +
          ")))\n"
          "sys.stdout.write('\\n'.join(out) + '\\n')\n");
  const std::string base = test::temp_dir() + "/unicode_check";
  const test::Run p =
      test::run_redirected("/usr/bin/python3 " + test::quote(script) + " " + test::quote(in_file) +
                               " " + test::quote(data::kUnicodeVersion),
                           base + ".out", base + ".err");
  ASSERT_EQ(p.code, 0) << p.err;
  if (p.out.rfind("SKIP ", 0) == 0) {
    GTEST_SKIP() << "python3 has Unicode " << p.out.substr(5) << "but the tables have "
                 << data::kUnicodeVersion << ": run scripts/gen_unicode_tables.py with it";
  }
  const std::vector<std::string> out_lines = split(p.out, '\n');
  ASSERT_EQ(out_lines.size(), inputs.size() + 2);  // the categories, and "" after the last \n

  const char* names[] = {"nfc", "nfd", "nfkc", "nfkd", "lower"};
  std::u32string (*functions[])(const std::u32string&) = {nfc, nfd, nfkc, nfkd, to_lower};
  size_t compared = 0, wrong = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<std::string> fields = split(out_lines[i], '\t');
    ASSERT_EQ(fields.size(), 5u) << out_lines[i];
    for (size_t f = 0; f < 5; ++f) {
      ++compared;
      const std::u32string got = functions[f](inputs[i]);
      const std::u32string want = parse_hex_line(fields[f]);
      if (got != want && ++wrong <= 20) {
        ADD_FAILURE() << names[f] << "(" << hex(inputs[i]) << ") = " << hex(got) << ", Python "
                      << hex(want);
      }
    }
  }
  const std::vector<std::string> categories = split(out_lines[inputs.size()], ' ');
  ASSERT_EQ(categories.size(), 0x110000 / kCategoryStep + 1);
  for (size_t k = 0; k < categories.size(); ++k) {
    ++compared;
    const char32_t c = static_cast<char32_t>(k * kCategoryStep);
    if (categories[k] != category_name(category(c)) && ++wrong <= 20) {
      ADD_FAILURE() << "category(" << hex(std::u32string(1, c))
                    << ") = " << category_name(category(c)) << ", Python " << categories[k];
    }
  }
  EXPECT_EQ(wrong, 0u) << "of " << compared << " comparisons";
  RecordProperty("compared", static_cast<int>(compared));
}

}  // namespace
}  // namespace attn::unicode
