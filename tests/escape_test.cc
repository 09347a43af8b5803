// Text in outputs: the escaping functions one by one (attn/escape.h),
// Python's literals checked against Python's own repr(), and invalid UTF-8
// replaced as the standard says. Hostile titles, labels and
// file names through every writer of the real binary: escape_cli_test.cc.
#include "attn/escape.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>
#include <vector>

#include "attn/csv.h"
#include "attn/error.h"
#include "base/unicode_printable.inc"
#include "base/utf8.h"
#include "python_util.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace std::string_literals;
using test::kFffd;
using test::python;
using test::python_available;
using test::temp_dir;
using test::write_temp;

TEST(Utf8, ValidTextIsUnchanged) {
  for (const std::string& s : {""s, "plain"s, "caf\xC3\xA9"s, "\xE2\x82\xAC 5"s,
                               "\xF0\x9D\x84\x9E"s, "nul\0inside"s, "\xEF\xBF\xBD"s}) {
    EXPECT_EQ(sanitize_utf8(s), s);
    EXPECT_TRUE(is_valid_utf8(s)) << s;
  }
}

TEST(Utf8, EachMaximalSubpartBecomesOneReplacement) {
  EXPECT_EQ(sanitize_utf8("a\xFF"
                          "b"),
            "a" + kFffd + "b");
  EXPECT_EQ(sanitize_utf8("\xC3"), kFffd);  // truncated at the end
  EXPECT_EQ(sanitize_utf8("\xE2\x82"
                          "x"),
            kFffd + "x");  // truncated, one replacement
  EXPECT_EQ(sanitize_utf8("\xF0\x9F\x98"
                          "A"),
            kFffd + "A");
  EXPECT_EQ(sanitize_utf8("\xC0\xAF"), kFffd + kFffd);                          // overlong '/'
  EXPECT_EQ(sanitize_utf8("\xE0\x80\xAF"), kFffd + kFffd + kFffd);              // overlong, 3 bytes
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);              // a surrogate
  EXPECT_EQ(sanitize_utf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // > U+10FFFF
  EXPECT_EQ(sanitize_utf8("\x80\xBF"), kFffd + kFffd);  // stray continuation bytes
  EXPECT_FALSE(is_valid_utf8("\xC3"));
  EXPECT_FALSE(is_valid_utf8("ok\xED\xA0\x80"));
}

TEST(Escape, PythonStringLiteral) {
  EXPECT_EQ(python_string_literal("plain"), "'plain'");
  EXPECT_EQ(python_string_literal("it's \"q\" \\"), "'it\\'s \"q\" \\\\'");
  EXPECT_EQ(python_string_literal("a\nb\rc\td"), "'a\\nb\\rc\\td'");
  EXPECT_EQ(python_string_literal("\0\x1b\x7f"s), "'\\x00\\x1b\\x7f'");
  EXPECT_EQ(python_string_literal("\xC2\x85"), "'\\x85'");  // NEL, a C1 control
  EXPECT_EQ(python_string_literal("\xE2\x80\xAE"
                                  "abc\xE2\x80\xA8"),
            "'\\u202eabc\\u2028'");
  EXPECT_EQ(python_string_literal("caf\xC3\xA9"), "'caf\xC3\xA9'");
  EXPECT_EQ(python_string_literal("\xFF"), "'" + kFffd + "'");
  EXPECT_EQ(python_string_literal("t\"\"\"\nx"), "'t\"\"\"\\nx'");
}

// A path is text when it can be (the same literal as any string), else
// its bytes, exactly: U+FFFD would name another file.
TEST(Escape, PythonPathLiteral) {
  EXPECT_EQ(python_path_literal("dir/x.npy"), "'dir/x.npy'");
  EXPECT_EQ(python_path_literal("a'b\\c\nd \xC3\xA9"), "'a\\'b\\\\c\\nd \xC3\xA9'");
  EXPECT_EQ(python_path_literal("raw\xFF/it's\\\n\xC3\xA9.npy"),
            "b'raw\\xff/it\\'s\\\\\\x0a\\xc3\\xa9.npy'");
  EXPECT_TRUE(is_valid_utf8(python_path_literal("\xFF\xFE\x80")));
}

// The escapes Python 3's repr() writes: each code point for which
// str.isprintable() is False, as \xNN, \uNNNN or \UNNNNNNNN (lower case).
TEST(Escape, PythonStringLiteralEscapesWhatReprEscapes) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\xC2\xA0", "\\xa0"},                // U+00A0 no-break space (Zs)
      {"\xC2\xAD", "\\xad"},                // U+00AD soft hyphen (Cf)
      {"\xE3\x80\x80", "\\u3000"},          // U+3000 ideographic space (Zs)
      {"\xE1\x9A\x80", "\\u1680"},          // U+1680 Ogham space mark (Zs)
      {"\xD8\x80", "\\u0600"},              // U+0600 Arabic number sign (Cf)
      {"\xEF\xBF\xBE", "\\ufffe"},          // U+FFFE noncharacter (Cn)
      {"\xEF\xBF\xBF", "\\uffff"},          // U+FFFF noncharacter (Cn)
      {"\xEE\x80\x80", "\\ue000"},          // U+E000 private use (Co)
      {"\xCD\xB8", "\\u0378"},              // U+0378 unassigned (Cn)
      {"\xE2\x80\xA9", "\\u2029"},          // U+2029 paragraph separator (Zp)
      {"\xEF\xBB\xBF", "\\ufeff"},          // U+FEFF byte order mark (Cf)
      {"\xF3\xA0\x80\x81", "\\U000e0001"},  // U+E0001 language tag (Cf)
      {"\xF3\xA0\x81\x81", "\\U000e0041"},  // U+E0041 tag latin capital A (Cf)
      {"\xF3\xA0\x81\xBF", "\\U000e007f"},  // U+E007F cancel tag (Cf)
      {"\xF3\xB0\x80\x80", "\\U000f0000"},  // U+F0000 supplementary private use (Co)
      {"\xF4\x8F\xBF\xBF", "\\U0010ffff"},  // U+10FFFF, the last code point (Cn)
  };
  for (const auto& [in, escape] : cases) {
    EXPECT_EQ(python_string_literal(in), "'" + escape + "'") << escape;
    EXPECT_EQ(python_string_literal("a" + in + "b"), "'a" + escape + "b'") << escape;
  }
  // A flag made of tag characters, as repr() writes it.
  EXPECT_EQ(
      python_string_literal("\xF0\x9F\x8F\xB4\xF3\xA0\x81\xA7\xF3\xA0\x81\xA2\xF3\xA0\x81\xBF"),
      "'\xF0\x9F\x8F\xB4\\U000e0067\\U000e0062\\U000e007f'");
}

TEST(Escape, PythonStringLiteralLeavesPrintableCharactersAsTheyAre) {
  for (const std::string& s :
       {"caf\xC3\xA9"s, "\xE4\xB8\xAD"s, "\xF0\x9F\x98\x80"s, "a b"s, " "s, "~"s,
        "\xC2\xA1"s /* U+00A1 */, "\xEF\xBF\xBD"s /* U+FFFD */, "\xF0\x9D\x84\x9E"s}) {
    EXPECT_EQ(python_string_literal(s), "'" + s + "'") << s;
  }
  // Invalid UTF-8 still becomes U+FFFD, which is printable.
  EXPECT_EQ(python_string_literal("a\xF4\x90\x80\x80"), "'a" + kFffd + kFffd + kFffd + kFffd + "'");
}

// The generated table is sorted, disjoint and non-adjacent, within the
// code space, and holds the space's neighbours but not the space.
TEST(Escape, NonPrintableTableIsWellFormed) {
  using unicode_printable::kNonPrintable;
  char32_t previous_last = 0;
  bool first = true;
  for (const auto& r : kNonPrintable) {
    EXPECT_LE(r.first, r.last);
    EXPECT_LE(r.last, 0x10FFFFu);
    if (!first) {
      EXPECT_GT(r.first, previous_last + 1) << std::hex << static_cast<uint32_t>(r.first);
    }
    previous_last = r.last;
    first = false;
  }
  EXPECT_EQ(python_string_literal(" \x1f"), "' \\x1f'");
}

TEST(Escape, LatexText) {
  EXPECT_EQ(latex_text("\\end{document}"), "\\textbackslash{}end\\{document\\}");
  EXPECT_EQ(latex_text("# $ % & _ { }"), "\\# \\$ \\% \\& \\_ \\{ \\}");
  EXPECT_EQ(latex_text("~^"), "\\textasciitilde{}\\textasciicircum{}");
  EXPECT_EQ(latex_text("a<b>c|d"), "a\\textless{}b\\textgreater{}c\\textbar{}d");
  EXPECT_EQ(latex_text("line\nnext\r\x01"), "line next  ");
  EXPECT_EQ(latex_text("bad\xFF"), "bad?");
  EXPECT_EQ(latex_text("caf\xC3\xA9"), "caf\\'{e}");
}

// LaTeX is written in ASCII: symbols as math commands, accented letters
// with their accents, anything else as its code point.
TEST(Escape, LatexAsciiSpellsEveryCharacterInAscii) {
  EXPECT_EQ(latex_ascii("\xCF\x83_i"), "\\ensuremath{\\sigma}_i");  // σ
  EXPECT_EQ(latex_ascii("Q\xC2\xB7K\xE1\xB5\x80"),                  // Q·Kᵀ
            "Q\\ensuremath{\\cdot}K\\ensuremath{^{\\top}}");
  EXPECT_EQ(latex_ascii("a \xE2\x88\x92 b \xE2\x80\xA6"), "a \\ensuremath{-} b \\ldots{}");  // − …
  EXPECT_EQ(latex_ascii("\xC3\xA9\xC3\x96\xC3\xA7\xC3\x9F"), "\\'{e}\\\"{O}\\c{c}\\ss{}");  // éÖçß
  EXPECT_EQ(latex_ascii("\xE5\xAE\x83"), "\\texttt{U+5B83}");                               // 它
  EXPECT_EQ(latex_ascii("\xF0\x9F\x98\x80"), "\\texttt{U+1F600}");
  EXPECT_EQ(latex_ascii("bad\xFF"), "bad?");
  EXPECT_EQ(latex_text("\xE2\x96\x81the_\xE5\xAE\x83"), "\\texttt{U+2581}the\\_\\texttt{U+5B83}");
}

TEST(Escape, MarkdownText) {
  EXPECT_EQ(markdown_text("a|b"), "a\\|b");
  EXPECT_EQ(markdown_text("</script>"), "\\</script\\>");
  EXPECT_EQ(markdown_text("*x* _y_ `z` [l](u) ~s~ #h $m$ &amp; \\"),
            "\\*x\\* \\_y\\_ \\`z\\` \\[l\\](u) \\~s\\~ \\#h \\$m\\$ \\&amp; \\\\");
  EXPECT_EQ(markdown_text("- item"), "\\- item");
  EXPECT_EQ(markdown_text("+"), "\\+");
  EXPECT_EQ(markdown_text("a - b"), "a - b");
  EXPECT_EQ(markdown_text("1. item"), "1\\. item");
  EXPECT_EQ(markdown_text("12)"), "12\\)");
  EXPECT_EQ(markdown_text("1.5"), "1.5");
  EXPECT_EQ(markdown_text("line\n# heading\r\n| a |"), "line \\# heading  \\| a \\|");
  EXPECT_EQ(markdown_text("-->"), "\\--\\>");
  EXPECT_EQ(markdown_text("\xFF"), kFffd);
}

TEST(Escape, MarkdownCode) {
  EXPECT_EQ(markdown_code("S = Q·Kᵀ"), "`S = Q·Kᵀ`");
  EXPECT_EQ(markdown_code("a`b"), "``a`b``");
  EXPECT_EQ(markdown_code("`a``"), "``` `a`` ```");
  EXPECT_EQ(markdown_code(" x "), "`  x  `");
  EXPECT_EQ(markdown_code("a\nb"), "`a b`");
  EXPECT_EQ(markdown_code(""), "` `");
}

TEST(Escape, XmlTextAndAttribute) {
  EXPECT_EQ(xml_text("<a href='x'>&\"</a>"), "&lt;a href=&apos;x&apos;&gt;&amp;&quot;&lt;/a&gt;");
  EXPECT_EQ(xml_text("]]>"), "]]&gt;");
  EXPECT_EQ(xml_text("<!-- -->"), "&lt;!-- --&gt;");
  EXPECT_EQ(xml_text("a\0b\x0b"
                     "c\x1b"s),
            "abc");                                     // forbidden in XML 1.0
  EXPECT_EQ(xml_text("\xEF\xBF\xBE\xEF\xBF\xBF"), "");  // U+FFFE, U+FFFF
  EXPECT_EQ(xml_text("t\tn\nr\r"), "t\tn\nr\r");
  EXPECT_EQ(xml_text("\xC3"), kFffd);
  EXPECT_EQ(xml_attribute("a\tb\nc\"d'"), "a&#9;b&#10;c&quot;d&apos;");
}

TEST(Escape, CsvField) {
  EXPECT_EQ(csv_field("cat"), "cat");
  EXPECT_EQ(csv_field("v1"), "v1");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
  EXPECT_EQ(csv_field(""), "\"\"");
  EXPECT_EQ(csv_field("#c"), "\"#c\"");
  EXPECT_EQ(csv_field("a b"), "\"a b\"");
  EXPECT_EQ(csv_field("a;b"), "\"a;b\"");
  EXPECT_EQ(csv_field("a\tb", '\t'), "\"a\tb\"");
  // Bare, these would be read as numbers.
  for (const char* s : {"1", "-2.5", "nan", "inf", "e5", "1e", "true"}) {
    EXPECT_EQ(csv_field(s), "\"" + std::string(s) + "\"") << s;
  }
  EXPECT_EQ(csv_field("n\0l"s), "n" + kFffd + "l");
  EXPECT_EQ(csv_field("\xFF"), kFffd);
  // A formula is data: not neutralized (see escape.h).
  EXPECT_EQ(csv_field("=1+1"), "=1+1");
}

// Labels through csv_field come back from attn's own CSV reader as they
// went in (made valid UTF-8, control characters replaced).
TEST(Escape, CsvFieldsRoundTripThroughTheReader) {
  const std::vector<std::string> labels = {
      "cat",    "a,b",         "say \"hi\"", "#c",        " pad ",     "1",
      "nan",    "e5",          "x;y",        "tab\there", "</script>", "\\end{document}",
      "\"\"\"", "caf\xC3\xA9", "bad\xFF",    "=1+1",      "-->",       "]]>"};
  std::string text = "name," + csv_field("value") + "\n";
  for (const std::string& l : labels) text += csv_field(l) + ",1\n";
  const CsvMatrix m = parse_csv(text, "t.csv");
  ASSERT_EQ(m.row_labels.size(), labels.size()) << text;
  for (size_t i = 0; i < labels.size(); ++i) EXPECT_EQ(m.row_labels[i], sanitize_utf8(labels[i]));
  ASSERT_EQ(m.column_labels.size(), 1u);
  EXPECT_EQ(m.column_labels[0], "value");
}

TEST(Escape, JsonString) {
  for (const std::string& s : {"plain"s, "q\"b\\s/"s, "line\nnext\ttab\r"s, "nul\0x"s, "\x1b[31m"s,
                               "</script>"s, "caf\xC3\xA9 \xF0\x9D\x84\x9E"s}) {
    const std::string j = json_string(s);
    EXPECT_EQ(j.find('\n'), std::string::npos) << j;
    EXPECT_EQ(nlohmann::json::parse(j).get<std::string>(), s) << j;
  }
  EXPECT_EQ(json_string("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(nlohmann::json::parse(json_string("x\xFF\xC3")).get<std::string>(),
            "x" + kFffd + kFffd);
}

TEST(Escape, TerminalText) {
  EXPECT_EQ(terminal_text("\x1b[31mred\x1b[0m"), kFffd + "[31mred" + kFffd + "[0m");
  EXPECT_EQ(terminal_text("safe\rEVIL"), "safe" + kFffd + "EVIL");
  EXPECT_EQ(terminal_text("\xC2\x9B"
                          "2J"),
            kFffd + "2J");  // CSI as a C1 control
  EXPECT_EQ(terminal_text("a\tb\nc"), "a\tb\nc");
  EXPECT_EQ(terminal_text("\xFF"), kFffd);
}

std::string utf8(char32_t c) {
  std::string out;
  append_utf8(out, c);
  return out;
}

// python_string_literal against Python's own repr(), code point by code
// point: every 97th code point of the whole range and both sides of each
// edge of the non-printable table (surrogates left out: UTF-8 cannot hold
// them). Each literal must evaluate to the code point, be repr()'s literal
// (up to the quote repr() picks for "'"), and hold no raw non-printable
// character.
TEST(Escape, PythonStringLiteralMatchesPythonRepr) {
  if (!python_available()) GTEST_SKIP() << "/usr/bin/python3 is not installed";
  std::vector<char32_t> sample;
  for (char32_t c = 0; c <= 0x10FFFF; c += 97) sample.push_back(c);
  for (const auto& r : unicode_printable::kNonPrintable) {
    for (char32_t c :
         {static_cast<char32_t>(r.first - 1), r.first, r.last, static_cast<char32_t>(r.last + 1)}) {
      if (c <= 0x10FFFF) sample.push_back(c);
    }
  }
  std::sort(sample.begin(), sample.end());
  sample.erase(std::unique(sample.begin(), sample.end()), sample.end());
  sample.erase(std::remove_if(sample.begin(), sample.end(),
                              [](char32_t c) { return c >= 0xD800 && c <= 0xDFFF; }),
               sample.end());
  // One line per code point: its number in hex, a tab, the literal.
  std::string lines;
  for (char32_t c : sample) {
    std::ostringstream hex;
    hex << std::hex << static_cast<uint32_t>(c);
    lines += hex.str() + "\t" + python_string_literal(utf8(c)) + "\n";
  }
  const std::string file = write_temp("repr_sample.txt", lines);
  auto p = python(
      "import ast, sys, unicodedata\n"
      "if unicodedata.unidata_version != sys.argv[2]:\n"
      "    print('SKIP python3 has Unicode', unicodedata.unidata_version)\n"
      "    sys.exit(0)\n"
      "checked = escaped = 0\n"
      "for line in open(sys.argv[1], encoding='utf-8', newline='').read().split('\\n')[:-1]:\n"
      "    number, literal = line.split('\\t', 1)\n"
      "    s = chr(int(number, 16))\n"
      "    checked += 1\n"
      "    if not s.isprintable():\n"
      "        escaped += 1\n"
      "    want = repr(s)\n"
      "    if ast.literal_eval(literal) != ast.literal_eval(want):\n"
      "        print('WRONG', number, ascii(literal), ascii(want))\n"
      "    elif not literal.isprintable():\n"
      "        print('RAW', number, ascii(literal))\n"
      "    elif literal != want and s != \"'\":\n"
      "        print('DIFFERENT', number, ascii(literal), ascii(want))\n"
      "print('checked', checked, 'escaped', escaped)\n",
      {file, unicode_printable::kUnicodeVersion});
  ASSERT_EQ(p.code, 0) << p.err;
  if (p.out.rfind("SKIP ", 0) == 0) {
    GTEST_SKIP() << p.out << "but the table (lib/src/base/unicode_printable.inc) has Unicode "
                 << unicode_printable::kUnicodeVersion
                 << ": run scripts/gen_unicode_printable.py with that python3";
  }
  // Escaped here: all but the backslash and the quote, which are printable.
  size_t escaped = 0;
  for (char32_t c : sample) {
    escaped +=
        c != '\\' && c != '\'' && python_string_literal(utf8(c)).find('\\') != std::string::npos;
  }
  EXPECT_EQ(p.out, "checked " + std::to_string(sample.size()) + " escaped " +
                       std::to_string(escaped) + "\n");
  EXPECT_GT(sample.size(), 12000u);
  EXPECT_GT(escaped, 9000u);
}

// Python reads each path literal back as the same bytes (a str through the
// file system's encoding, as open() takes it).
TEST(Escape, PythonPathLiteralNamesTheSameBytes) {
  if (!python_available()) GTEST_SKIP() << "/usr/bin/python3 is not installed";
  std::string all;
  for (int c = 1; c < 256; ++c) all += static_cast<char>(c);
  const std::vector<std::string> paths = {"x.npy", "a'\"\"\"\nb\\ c\xC3\xA9/\xF0\x9F\x98\x80",
                                          "raw\xFF/x", all};
  std::string lines;
  for (const std::string& p : paths) lines += python_path_literal(p) + "\n";
  const std::string file = write_temp("path_literals.txt", lines);
  auto r = python(
      "import ast, os, sys\n"
      "for line in open(sys.argv[1], encoding='utf-8').read().splitlines():\n"
      "    sys.stdout.buffer.write(os.fsencode(ast.literal_eval(line)) + b'\\0')\n",
      {file});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string want;
  for (const std::string& p : paths) want += p + '\0';
  EXPECT_EQ(r.out, want);
}

}  // namespace
}  // namespace attn
