// Text in outputs: the one place where a string that comes from outside attn
// (a title, description or source, a label, a file name, the command line)
// is made safe for the language of the output it is written into. Every
// writer passes such text through the function of its language, so a title
// holding `"""`, `\end{document}`, `</text>` or a newline cannot end a
// docstring, a document, an element or a row and turn data into code.
//
// Each function first makes the text valid UTF-8 (sanitize_utf8): invalid
// UTF-8 never reaches an output. The rules are listed in docs/formats.md
// ("Text in outputs").
#pragma once

#include <string>
#include <string_view>

namespace attn {

// The text with each ill-formed UTF-8 sequence replaced by U+FFFD, one per
// maximal subpart (the Unicode Standard's recommended practice, §3.9, also
// what Python's and browsers' decoders do): overlong forms, surrogates,
// code points above U+10FFFF, stray continuation bytes and truncated
// sequences. Valid text comes back unchanged.
std::string sanitize_utf8(std::string_view s);

// Whether s is well-formed UTF-8 (sanitize_utf8 would not change it).
bool is_valid_utf8(std::string_view s);

// A Python 3 string literal that evaluates to s: single-quoted, on one
// line, like repr(). Backslash and quote are escaped; \n, \r, \t stay
// readable; every other code point for which Python's str.isprintable() is
// False (controls, format and invisible characters such as bidirectional
// controls and tag characters, spaces other than U+0020, separators,
// private-use and unassigned code points) is written as \xNN, \uNNNN or
// \UNNNNNNNN, as repr() writes it, so the source reads as what it does.
std::string python_string_literal(std::string_view s);

// A Python 3 expression for a file path, as open() and np.load() take it:
// python_string_literal(path) when the path is valid UTF-8; otherwise a
// bytes literal b'...' with the path's bytes exactly (a file name need not
// be text), printable ASCII as it is but for \ and ', every other byte as
// \xNN.
std::string python_path_literal(std::string_view path);

// Text for LaTeX, in running text or inside \text{...}: the ten special
// characters \ { } $ & # ^ _ % ~ are escaped, < > | get their text-mode
// commands (OT1 fonts print other glyphs for them), control characters
// (newlines too) become spaces, so the text stays on its line, and U+FFFD
// becomes "?" (pdflatex has no glyph for it and would stop). The result is
// ASCII: other characters become LaTeX commands (latex_ascii).
std::string latex_text(std::string_view s);

// LaTeX made ASCII, so that pdflatex reads it without inputenc or
// Unicode fonts: ASCII is kept as it is, math symbols become commands in
// \ensuremath (σ \ensuremath{\sigma}, · \ensuremath{\cdot}, ᵀ
// \ensuremath{^{\top}}, − \ensuremath{-}, … \ldots{}), Latin-1's accented letters their
// accent commands (é \'{e}), and any other character its code point,
// \texttt{U+5B83}. Invalid UTF-8 becomes "?".
std::string latex_ascii(std::string_view s);

// Inline Markdown text (CommonMark and GitHub's dialect), also for table
// cells: \ ` * _ [ ] < > & | ~ # $ are backslash-escaped, a leading - + or
// "1." / "1)" that would start a list is escaped, and control characters
// (newlines too) become spaces, so the text cannot start a new block or
// end a table row.
std::string markdown_text(std::string_view s);

// A Markdown code span showing s literally: fenced with one backtick more
// than the longest run of backticks in s (padded with spaces where
// CommonMark needs it); control characters become spaces, and an empty s
// one space (a code span cannot be empty).
std::string markdown_code(std::string_view s);

// XML 1.0 / HTML character data: & < > " ' as entities (&apos;, which XML
// and HTML5 know), and the characters XML 1.0 forbids (C0 controls other
// than tab, newline and carriage return; U+FFFE, U+FFFF) dropped.
std::string xml_text(std::string_view s);

// An XML / HTML attribute value (to go between double quotes): as
// xml_text, and tab, newline and carriage return as character references,
// which attribute-value normalization would otherwise turn into spaces.
std::string xml_attribute(std::string_view s);

// One CSV field (RFC 4180). The field is quoted, with quotes doubled, when
// it holds the delimiter, a quote, CR or LF, and also when attn's own CSV
// reader (and NumPy's) would read it differently bare: when it holds '#'
// (a comment), a tab, a space, ',' or ';' (other delimiters the reader
// may pick), when it is empty, or when it could be read as a number or a
// boolean. Other control characters become U+FFFD (the reader refuses
// them). Spreadsheet formula injection (a leading = + - @) is not
// neutralized: attn's CSV is for NumPy and pandas, and a prefixed quote
// would change the data.
std::string csv_field(std::string_view s, char delimiter = ',');

// A JSON string literal, quotes included: quote and backslash escaped,
// control characters as \b \f \n \r \t or \u00XX (lowercase hex), other
// characters as UTF-8 (DEL, U+2028 and U+2029 too), as nlohmann::json
// writes them.
std::string json_string(std::string_view s);
// Appends json_string(s) to out without a temporary string.
void append_json_string(std::string& out, std::string_view s);

// JSON text (as json_string writes its strings) made safe to stand inside
// an HTML <script> element: < > & and the line separators U+2028, U+2029
// as \u escapes, so no "</script>", "<!--" or "]]>" can appear in it. They
// can only occur inside strings there, where the escapes mean the same
// characters: the text parses to the same value.
std::string script_json(std::string_view json_text);

// Text for a terminal or a plain text file (tables, text traces, the
// terminal heatmap): control characters other than newline and tab
// (escape sequences, carriage return, backspace, C1 controls) become
// U+FFFD, so the text cannot restyle the terminal or overwrite a line.
std::string terminal_text(std::string_view s);

// A token in attn tokenize's text table (which attn run --tokens FILE
// reads back): a space as ␣, newline, carriage return and tab written out
// as \n, \r, \t, the rest as terminal_text.
std::string token_table_text(std::string_view token);

// Bytes as base64 (RFC 4648, with padding): images inlined in SVG, numbers
// inlined in an HTML page.
std::string base64(const std::string& data);

}  // namespace attn
