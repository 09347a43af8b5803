#!/usr/bin/env python3
"""Writes lib/src/tokenizer/unicode_data.inc: the Unicode tables behind
lib/src/tokenizer/unicode.cc (general category, White_Space, Cased,
Case_Ignorable, canonical combining class, decompositions, composition
pairs and lowercase mappings), for the tokenizer.json normalizers and
pre-tokenizer regexes.

Everything comes from the running Python's unicodedata module and str
methods, so the tables are exactly the data the cross-check in
tests/unicode_test.cc compares against. Run it with Debian's python3:

    /usr/bin/python3 scripts/gen_unicode_tables.py

The output is deterministic (sorted tables, no timestamps), so running it
again with the same Python changes nothing. The Unicode version is written
into the file. The Rust `tokenizers` crate gets its data from the Rust
standard library and the unicode-normalization crate, which follow newer
Unicode versions; code points assigned or changed since ours may differ,
which is accepted (they are rare in text and in vocabularies).
"""

import os
import sys
import unicodedata

MAX_CODE_POINT = 0x10FFFF
SURROGATES = range(0xD800, 0xE000)
HANGUL_SYLLABLES = range(0xAC00, 0xD7A4)

# The order of attn::unicode::Category (lib/src/tokenizer/unicode.h): the
# enum is indexed by these names' positions.
CATEGORIES = ["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd",
              "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc",
              "Cf", "Cs", "Co", "Cn"]

# White_Space from PropList.txt, which unicodedata does not expose. It has
# not changed since Unicode 6.3 (U+180E left it then). Rust's regex `\s`
# and Oniguruma's Unicode `\s` are this property.
WHITE_SPACE = [(0x0009, 0x000D), (0x0020, 0x0020), (0x0085, 0x0085), (0x00A0, 0x00A0),
               (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F),
               (0x205F, 0x205F), (0x3000, 0x3000)]

# Word_Break MidLetter, MidNumLet and Single_Quote (WordBreakProperty.txt):
# with the categories Mn, Me, Cf, Lm and Sk they make up Case_Ignorable
# (DerivedCoreProperties.txt). Only used to check the Case_Ignorable that
# is read from str.lower()'s behaviour below.
WORD_BREAK_MID = [0x0027, 0x002E, 0x003A, 0x00B7, 0x0387, 0x055F, 0x05F4, 0x2018, 0x2019,
                  0x2024, 0x2027, 0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A]

CAPITAL_SIGMA = "\u03a3"
FINAL_SIGMA = "\u03c2"


def code_points():
    """Every code point a Python str can hold as text (surrogates left out)."""
    return (c for c in range(MAX_CODE_POINT + 1) if c not in SURROGATES)


def category_runs():
    """[first, category index] at each change of category; a run lasts to
    the next run's first."""
    runs = []
    for c in range(MAX_CODE_POINT + 1):
        index = CATEGORIES.index(unicodedata.category(chr(c)))
        if not runs or runs[-1][1] != index:
            runs.append([c, index])
    return runs


def ranges_of(members):
    """Sorted [first, last] ranges of a set of code points."""
    ranges = []
    for c in sorted(members):
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    return ranges


def cased_and_case_ignorable():
    """Cased and Case_Ignorable, the two properties of the Final_Sigma rule.

    unicodedata has neither. Cased is Lowercase or Uppercase or Lt by its
    definition, and str.islower()/str.isupper() of one character are
    Lowercase and Uppercase. Case_Ignorable is read from how str.lower()
    applies Final_Sigma (CPython's handle_capital_sigma, the rule Rust's
    str::to_lowercase also follows): in "A" + c + "Σ" the sigma is final
    when c is case-ignorable or cased, and in c + "Σ" when c is cased and
    not case-ignorable. The result is checked against Case_Ignorable's
    definition.
    """
    cased, ignorable = set(), set()
    for c in code_points():
        ch = chr(c)
        is_cased = ch.islower() or ch.isupper() or unicodedata.category(ch) == "Lt"
        after_cased = ("A" + ch + CAPITAL_SIGMA).lower()[-1] == FINAL_SIGMA
        alone = (ch + CAPITAL_SIGMA).lower()[-1] == FINAL_SIGMA
        if is_cased:
            cased.add(c)
            if not alone:
                ignorable.add(c)
        else:
            assert not alone, hex(c)
            if after_cased:
                ignorable.add(c)
    by_definition = {c for c in code_points()
                     if unicodedata.category(chr(c)) in ("Mn", "Me", "Cf", "Lm", "Sk")}
    by_definition.update(WORD_BREAK_MID)
    assert ignorable == by_definition, sorted(ignorable ^ by_definition)
    return cased, ignorable


def combining_class_ranges():
    """[first, last, class] for the code points of non-zero class."""
    ranges = []
    for c in range(MAX_CODE_POINT + 1):
        ccc = unicodedata.combining(chr(c))
        if ccc == 0:
            continue
        if ranges and ranges[-1][1] == c - 1 and ranges[-1][2] == ccc:
            ranges[-1][1] = c
        else:
            ranges.append([c, c, ccc])
    return ranges


def decompositions():
    """(code point, compat, mapping) for each code point with a mapping:
    one level, as UnicodeData.txt has it (unicode.cc applies it
    recursively). Hangul syllables have none here: they are decomposed by
    arithmetic."""
    result = []
    for c in code_points():
        text = unicodedata.decomposition(chr(c))
        if not text:
            continue
        assert c not in HANGUL_SYLLABLES
        fields = text.split()
        compat = fields[0].startswith("<")
        if compat:
            fields = fields[1:]
        result.append((c, compat, [int(f, 16) for f in fields]))
    return result


def compositions(decomposition_list):
    """(first, second, composite) for each primary composite: a canonical
    mapping of two code points that NFC puts back together. The others of
    two code points are the composition exclusions (script-specific ones,
    post-composition-version ones and non-starter decompositions), which
    NFC leaves decomposed; singletons never recompose."""
    pairs = []
    for c, compat, mapping in decomposition_list:
        if compat or len(mapping) != 2:
            continue
        if unicodedata.normalize("NFC", chr(c)) == chr(c):
            pairs.append((mapping[0], mapping[1], c))
        else:
            assert unicodedata.normalize("NFC", "".join(map(chr, mapping))) != chr(c)
    pairs.sort()
    return pairs


def lowercase():
    """Ranges of one-code-point lowercase mappings, and the longer ones.

    The mapping of each code point alone is str.lower() of it: UnicodeData's
    simple mapping with SpecialCasing's unconditional full mappings (only
    U+0130 -> "i̇" lowercases to more than one code point), the same data as
    Rust's char::to_lowercase. A single capital sigma lowercases to σ; the
    Final_Sigma context is unicode.cc's.

    A range [first, last, delta, stride] maps first, first + stride, ...
    up to last to c + delta; stride 2 covers the blocks where capitals and
    small letters alternate.
    """
    ranges, special = [], []
    for c in code_points():
        lower = chr(c).lower()
        if lower == chr(c):
            continue
        if len(lower) > 1:
            special.append((c, [ord(x) for x in lower]))
            continue
        delta = ord(lower) - c
        if ranges:
            first, last, d, stride = ranges[-1]
            if d == delta and (c - last == stride or (first == last and c - last in (1, 2))):
                ranges[-1][1] = c
                ranges[-1][3] = c - first if first == last else stride
                continue
        ranges.append([c, c, delta, 1])
    return ranges, special


def rows(items, indent="    ", width=100):
    """The items, space separated, on lines of at most `width` columns."""
    lines, line = [], ""
    for item in items:
        if line and len(indent) + len(line) + 1 + len(item) > width:
            lines.append(indent + line)
            line = ""
        line = f"{line} {item}" if line else item
    if line:
        lines.append(indent + line)
    return lines


def hex_cp(c):
    return f"0x{c:X}"


def render():
    version = unicodedata.unidata_version
    runs = category_runs()
    cased, ignorable = cased_and_case_ignorable()
    ccc = combining_class_ranges()
    decomps = decompositions()
    pairs = compositions(decomps)
    lower_ranges, lower_special = lowercase()

    pool, entries = [], []
    for c, compat, mapping in decomps:
        entries.append((c, len(pool), len(mapping), compat))
        pool.extend(mapping)
    assert len(pool) < 1 << 16 and max(e[2] for e in entries) < 256

    out = [
        "// Generated by scripts/gen_unicode_tables.py; do not edit.",
        f"// Unicode {version} (Python's unicodedata.unidata_version). The Rust",
        "// `tokenizers` crate may use a newer Unicode version: code points",
        "// assigned or changed since then may differ.",
        "//",
        "// Sorted tables of ranges, searched by binary search in unicode.cc.",
        f"// {len(runs)} category runs, {len(ccc)} combining class ranges,",
        f"// {len(entries)} decompositions ({len(pool)} code points),",
        f"// {len(pairs)} composition pairs, {len(lower_ranges)} lowercase ranges.",
        "",
        "#pragma once",
        "",
        "#include <cstdint>",
        "",
        "namespace attn::unicode::data {",
        "",
        f'inline constexpr const char* kUnicodeVersion = "{version}";',
        "",
        "// The general categories in the order of attn::unicode::Category.",
        "inline constexpr const char* kCategoryNames[] = {",
    ]
    out += rows([f'"{name}",' for name in CATEGORIES])
    out += [
        "};",
        "",
        "struct Range {",
        "  char32_t first, last;",
        "};",
        "",
        "// General category from `first` up to the next run's first; the runs",
        "// cover U+0000..U+10FFFF. `category` indexes kCategoryNames.",
        "struct CategoryRun {",
        "  char32_t first;",
        "  uint8_t category;",
        "};",
        "",
        "// Canonical_Combining_Class of first..last (0 elsewhere).",
        "struct CombiningClassRange {",
        "  char32_t first, last;",
        "  uint8_t combining_class;",
        "};",
        "",
        "// The one-level decomposition mapping of code_point:",
        "// kDecompositionPool[offset, offset + length). compat marks a",
        "// compatibility mapping (NFKD only); the others are canonical.",
        "struct Decomposition {",
        "  char32_t code_point;",
        "  uint16_t offset;",
        "  uint8_t length;",
        "  bool compat;",
        "};",
        "",
        "// A primary composite: NFC composes first + second into composite.",
        "struct Composition {",
        "  char32_t first, second, composite;",
        "};",
        "",
        "// first, first + stride, ... up to last lowercase to c + delta: the",
        "// mapping of each code point alone (str.lower() of it, Rust's",
        "// char::to_lowercase). U+03A3 maps to U+03C3 here; the Final_Sigma",
        "// rule (U+03C2 at the end of a word) needs context and is applied by",
        "// to_lower in unicode.cc, as Rust's str::to_lowercase applies it.",
        "struct LowerRange {",
        "  char32_t first, last;",
        "  int32_t delta;",
        "  uint8_t stride;",
        "};",
        "",
        "// A lowercase mapping of more than one code point (SpecialCasing.txt's",
        "// unconditional ones).",
        "struct LowerSpecial {",
        "  char32_t code_point;",
        "  char32_t mapping[3];",
        "  uint8_t length;",
        "};",
        "",
        "// clang-format off",
        "inline constexpr CategoryRun kCategoryRuns[] = {",
    ]
    out += rows([f"{{{hex_cp(c)}, {i}}}," for c, i in runs])
    out += ["};", "", "// White_Space (PropList.txt).", "inline constexpr Range kWhiteSpace[] = {"]
    out += rows([f"{{{hex_cp(a)}, {hex_cp(b)}}}," for a, b in WHITE_SPACE])
    out += ["};", "", "// Cased (DerivedCoreProperties.txt).",
            "inline constexpr Range kCased[] = {"]
    out += rows([f"{{{hex_cp(a)}, {hex_cp(b)}}}," for a, b in ranges_of(cased)])
    out += ["};", "", "// Case_Ignorable (DerivedCoreProperties.txt).",
            "inline constexpr Range kCaseIgnorable[] = {"]
    out += rows([f"{{{hex_cp(a)}, {hex_cp(b)}}}," for a, b in ranges_of(ignorable)])
    out += ["};", "", "inline constexpr CombiningClassRange kCombiningClass[] = {"]
    out += rows([f"{{{hex_cp(a)}, {hex_cp(b)}, {k}}}," for a, b, k in ccc])
    out += ["};", "", "inline constexpr char32_t kDecompositionPool[] = {"]
    out += rows([f"{hex_cp(c)}," for c in pool])
    out += ["};", "", "inline constexpr Decomposition kDecompositions[] = {"]
    out += rows([f"{{{hex_cp(c)}, {o}, {n}, {int(k)}}},"
                 for c, o, n, k in entries])
    out += ["};", "", "// Sorted by (first, second).",
            "inline constexpr Composition kCompositions[] = {"]
    out += rows([f"{{{hex_cp(a)}, {hex_cp(b)}, {hex_cp(c)}}}," for a, b, c in pairs])
    out += ["};", "", "inline constexpr LowerRange kLowerRanges[] = {"]
    out += rows([f"{{{hex_cp(a)}, {hex_cp(b)}, {d}, {s}}}," for a, b, d, s in lower_ranges])
    out += ["};", "", "inline constexpr LowerSpecial kLowerSpecial[] = {"]
    for c, mapping in lower_special:
        assert len(mapping) <= 3
        padded = mapping + [0] * (3 - len(mapping))
        code_points = ", ".join(hex_cp(x) for x in padded)
        out.append(f"    {{{hex_cp(c)}, {{{code_points}}}, {len(mapping)}}},")
    out += ["};", "// clang-format on", "", "}  // namespace attn::unicode::data", ""]
    return "\n".join(out)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(root, "lib", "src", "tokenizer", "unicode_data.inc")
    if len(sys.argv) > 1:
        out = sys.argv[1]
    text = render()
    with open(out, "w", encoding="ascii", newline="\n") as f:
        f.write(text)
    print(f"wrote {out} (Unicode {unicodedata.unidata_version}, {len(text)} bytes)")


if __name__ == "__main__":
    main()
