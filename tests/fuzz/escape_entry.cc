// The escape fuzz entry point: arbitrary bytes as a title and as labels,
// through every escaping function of attn/escape.h and through the real
// writers, with each output decoded again or checked against the rules of
// its language. A broken rule throws std::logic_error: libFuzzer reports
// the uncaught exception as a crash, the replay test as a failure.
#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/csv.h"
#include "attn/document.h"
#include "attn/emit_pytorch.h"
#include "attn/error.h"
#include "attn/escape.h"
#include "attn/heatmap.h"
#include "attn/output.h"
#include "attn/problem.h"
#include "attn/trace.h"
#include "base/utf8.h"
#include "fuzz_entry.h"
// The table python_string_literal escapes by, checked against Python by
// escape_test.
#include "base/unicode_printable.inc"

namespace attn::fuzz {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::logic_error("fuzz_escape: " + what);
}

// The code points of text that is already valid UTF-8.
std::vector<char32_t> code_points(const std::string& s) {
  std::vector<char32_t> out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += len;
  }
  return out;
}

bool is_control(char32_t c) { return c < 0x20 || (c >= 0x7F && c <= 0x9F); }

// Python 3's str.isprintable() for one code point.
bool is_printable(char32_t c) {
  for (const auto& r : unicode_printable::kNonPrintable) {
    if (c < r.first) return true;
    if (c <= r.last) return false;
  }
  return true;
}

// The sanitized text with each code point passed through f (which
// appends what the escaper's readers should get back).
template <class F>
std::string map_code_points(const std::string& valid, F f) {
  std::string out;
  for (char32_t c : code_points(valid)) f(out, c);
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads a Python literal as Python would, for the escapes python_string_literal
// writes; anything else (a raw quote, backslash or line break) is an error,
// and so is what repr() would not write: a raw non-printable code point, an
// escaped printable one, an escape longer than it needs or upper-case hex.
std::string decode_python(const std::string& lit) {
  require(lit.size() >= 2 && lit.front() == '\'' && lit.back() == '\'', "python: not quoted");
  std::string out, raw;
  for (size_t i = 1; i + 1 < lit.size(); ++i) {
    const char c = lit[i];
    require(c != '\n' && c != '\r' && c != '\'', "python: raw line break or quote");
    if (c != '\\') {
      out += c;
      raw += c;
      continue;
    }
    require(i + 2 < lit.size(), "python: backslash escapes the closing quote");
    const char e = lit[++i];
    if (e == '\\' || e == '\'') {
      out += e;
    } else if (e == 'n') {
      out += '\n';
    } else if (e == 'r') {
      out += '\r';
    } else if (e == 't') {
      out += '\t';
    } else if (e == 'x' || e == 'u' || e == 'U') {
      const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      require(i + digits + 1 < lit.size(), "python: short escape");
      char32_t cp = 0;
      for (size_t k = 1; k <= digits; ++k) {
        const int h = hex_value(lit[i + k]);
        require(h >= 0 && !(lit[i + k] >= 'A' && lit[i + k] <= 'F'),
                "python: bad or upper-case hex digit");
        cp = cp * 16 + static_cast<char32_t>(h);
      }
      i += digits;
      require(cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF), "python: escape out of range");
      require(!is_printable(cp) && cp != '\n' && cp != '\r' && cp != '\t',
              "python: escaped a code point repr() writes as it is");
      const size_t width = cp < 0x100 ? 2 : cp < 0x10000 ? 4 : 8;
      require(digits == width, "python: escape not of repr()'s width");
      append_utf8(out, cp);
    } else {
      require(false, std::string("python: unknown escape \\") + e);
    }
  }
  for (char32_t cp : code_points(raw)) {
    require(is_printable(cp), "python: raw non-printable code point");
  }
  return out;
}

// Reads XML character data; attribute says whether character references
// for tab, newline and CR are expected instead of the raw characters.
std::string decode_xml(const std::string& x, bool attribute) {
  static const std::pair<const char*, const char*> entities[] = {
      {"&amp;", "&"},  {"&lt;", "<"},  {"&gt;", ">"},   {"&quot;", "\""},
      {"&apos;", "'"}, {"&#9;", "\t"}, {"&#10;", "\n"}, {"&#13;", "\r"}};
  std::string out;
  for (size_t i = 0; i < x.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(x[i]);
    require(c != '<' && c != '>' && c != '"' && c != '\'', "xml: raw markup character");
    require(c >= 0x20 || ((c == '\t' || c == '\n' || c == '\r') && !attribute),
            "xml: forbidden or unnormalized control character");
    if (c != '&') {
      out += static_cast<char>(c);
      continue;
    }
    bool known = false;
    for (const auto& [e, v] : entities) {
      const std::string entity = e;
      if (x.compare(i, entity.size(), entity) == 0) {
        out += v;
        i += entity.size() - 1;
        known = true;
        break;
      }
    }
    require(known, "xml: unknown entity");
  }
  require(out.find("\xEF\xBF\xBE") == std::string::npos &&
              out.find("\xEF\xBF\xBF") == std::string::npos,
          "xml: U+FFFE or U+FFFF");
  return out;
}

std::string decode_latex(const std::string& t) {
  static const std::pair<const char*, char> commands[] = {
      {"textbackslash{}", '\\'}, {"textasciitilde{}", '~'}, {"textasciicircum{}", '^'},
      {"textless{}", '<'},       {"textgreater{}", '>'},    {"textbar{}", '|'}};
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    require(static_cast<unsigned char>(c) >= 0x20 && c != 0x7F, "latex: control character");
    require(std::string("{}#$%&_^~<>|").find(c) == std::string::npos, "latex: raw special");
    if (c != '\\') {
      out += c;
      continue;
    }
    require(i + 1 < t.size(), "latex: trailing backslash");
    if (std::string("{}#$%&_").find(t[i + 1]) != std::string::npos) {
      out += t[++i];
      continue;
    }
    bool known = false;
    for (const auto& [name, v] : commands) {
      const std::string n = name;
      if (t.compare(i + 1, n.size(), n) == 0) {
        out += v;
        i += n.size();
        known = true;
        break;
      }
    }
    if (!known) {  // a character above ASCII (latex_ascii)
      static const std::map<std::string, char32_t> by_command = [] {
        std::map<std::string, char32_t> m;
        for (char32_t cp = 0x80; cp < 0x3000; ++cp) {
          if (cp >= 0xD800 && cp < 0xE000) continue;
          std::string one;
          append_utf8(one, cp);
          const std::string command = latex_ascii(one);
          if (command.rfind("\\texttt{U+", 0) != 0) m.emplace(command, cp);
        }
        return m;
      }();
      size_t longest = 0;
      char32_t cp = 0;
      for (const auto& [command, c] : by_command) {
        if (command.size() > longest && t.compare(i, command.size(), command) == 0) {
          longest = command.size();
          cp = c;
        }
      }
      if (longest == 0 && t.compare(i, 10, "\\texttt{U+") == 0) {
        const size_t end = t.find('}', i);
        require(end != std::string::npos, "latex: unclosed code point");
        cp = static_cast<char32_t>(std::stoul(t.substr(i + 10, end - i - 10), nullptr, 16));
        longest = end + 1 - i;
      }
      require(longest > 0, "latex: unknown command");
      append_utf8(out, cp);
      i += longest - 1;
      known = true;
    }
  }
  return out;
}

std::string decode_markdown(const std::string& m) {
  std::string out;
  for (size_t i = 0; i < m.size(); ++i) {
    const char c = m[i];
    require(static_cast<unsigned char>(c) >= 0x20 && c != 0x7F, "markdown: control character");
    require(std::string("`*_[]<>&|~#$").find(c) == std::string::npos, "markdown: raw special");
    if (c == '\\') {
      require(i + 1 < m.size(), "markdown: trailing backslash");
      const char e = m[++i];
      require(std::string("\\`*_[]<>&|~#$-+.)").find(e) != std::string::npos,
              "markdown: escape of a character that needs none");
      out += e;
      continue;
    }
    require(!(i == 0 && (c == '-' || c == '+')), "markdown: a list marker at the start");
    out += c;
  }
  return out;
}

std::string decode_markdown_code(const std::string& m) {
  const size_t fence = m.find_first_not_of('`');
  require(fence != std::string::npos && fence > 0, "code span: no fence");
  require(m.size() >= 2 * fence + 1 && m.compare(m.size() - fence, fence, m, 0, fence) == 0 &&
              m[m.size() - fence - 1] != '`',
          "code span: fences differ");
  std::string body = m.substr(fence, m.size() - 2 * fence);
  require(body.find(std::string(fence, '`')) == std::string::npos, "code span: fence inside");
  for (char c : body) {
    require(static_cast<unsigned char>(c) >= 0x20 && c != 0x7F, "code span: control character");
  }
  // CommonMark strips one space from each end when both ends have one.
  if (body.size() >= 2 && body.front() == ' ' && body.back() == ' ' &&
      body.find_first_not_of(' ') != std::string::npos) {
    body = body.substr(1, body.size() - 2);
  }
  return body;
}

std::string decode_csv(const std::string& f) {
  if (f.empty() || f[0] != '"') {
    require(f.find_first_of("\",;#\t\r\n ") == std::string::npos, "csv: bare field needs quotes");
    return f;
  }
  require(f.size() >= 2 && f.back() == '"', "csv: unterminated quoted field");
  std::string out;
  for (size_t i = 1; i + 1 < f.size(); ++i) {
    if (f[i] == '"') {
      require(i + 2 < f.size() && f[i + 1] == '"', "csv: lone quote inside a quoted field");
      ++i;
    }
    out += f[i];
  }
  return out;
}

// One string through every escaper.
void check_escapers(const std::string& s) {
  const std::string valid = sanitize_utf8(s);
  require(is_valid_utf8(valid), "sanitize_utf8 gave invalid UTF-8");
  require(sanitize_utf8(valid) == valid, "sanitize_utf8 is not idempotent");
  require(is_valid_utf8(s) == (valid == s), "is_valid_utf8 disagrees with sanitize_utf8");

  const std::string py = python_string_literal(s);
  require(is_valid_utf8(py), "python: invalid UTF-8");
  require(decode_python(py) == valid, "python: does not round-trip");

  for (bool attribute : {false, true}) {
    const std::string x = attribute ? xml_attribute(s) : xml_text(s);
    require(is_valid_utf8(x), "xml: invalid UTF-8");
    const std::string want = map_code_points(valid, [](std::string& o, char32_t c) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0xFFFE || c == 0xFFFF) return;
      append_utf8(o, c);
    });
    require(decode_xml(x, attribute) == want, "xml: does not round-trip");
  }

  const std::string tex = latex_text(s);
  require(is_valid_utf8(tex), "latex: invalid UTF-8");
  require(decode_latex(tex) == map_code_points(valid,
                                               [](std::string& o, char32_t c) {
                                                 if (is_control(c)) {
                                                   o += ' ';
                                                 } else if (c == 0xFFFD) {
                                                   o += '?';
                                                 } else {
                                                   append_utf8(o, c);
                                                 }
                                               }),
          "latex: does not round-trip");

  const std::string spaced = map_code_points(valid, [](std::string& o, char32_t c) {
    if (is_control(c)) {
      o += ' ';
    } else {
      append_utf8(o, c);
    }
  });
  const std::string md = markdown_text(s);
  require(is_valid_utf8(md), "markdown: invalid UTF-8");
  require(decode_markdown(md) == spaced, "markdown: does not round-trip");
  const std::string code = markdown_code(s);
  require(is_valid_utf8(code), "code span: invalid UTF-8");
  require(decode_markdown_code(code) == (spaced.empty() ? " " : spaced),
          "code span: does not round-trip");

  const std::string field = csv_field(s);
  require(is_valid_utf8(field), "csv: invalid UTF-8");
  const std::string cell = map_code_points(valid, [](std::string& o, char32_t c) {
    if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7F) {
      append_utf8(o, 0xFFFD);
    } else {
      append_utf8(o, c);
    }
  });
  require(decode_csv(field) == cell, "csv: does not round-trip");
  // attn's reader is line-based: fields without line breaks come back.
  if (cell.find_first_of("\r\n") == std::string::npos) {
    const CsvMatrix m = parse_csv("name,value\n" + field + ",1\n", "fuzz.csv");
    require(m.row_labels.size() == 1 && m.row_labels[0] == cell,
            "csv: attn's reader reads the field back differently");
  }

  const std::string js = json_string(s);
  require(is_valid_utf8(js) && js.find('\n') == std::string::npos, "json: raw line break");
  require(nlohmann::json::parse(js).get<std::string>() == valid, "json: does not round-trip");

  const std::string term = terminal_text(s);
  require(is_valid_utf8(term), "terminal: invalid UTF-8");
  for (char32_t c : code_points(term)) {
    require(!is_control(c) || c == '\n' || c == '\t', "terminal: control character");
  }
}

struct Run {
  Problem problem;
  Result result;
  std::vector<TraceStep> steps;
};

// A small self-attention run with the title as its title, description and
// source, and one row of X per label.
Run small_run(const std::string& title, const std::vector<std::string>& labels) {
  InputDocument doc;
  doc.source = "fuzz.json";
  doc.settings_place = "fuzz.json";
  const int64_t n = static_cast<int64_t>(labels.size());
  Values<double> x(static_cast<size_t>(n * 2));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 3);
  doc.X = Input{Tensor<double>({n, 2}, std::move(x)), "fuzz.json: X"};
  doc.labels = LabelSet{labels, labels, true, "fuzz.json: labels"};
  doc.title = title;
  doc.description = title;
  doc.source_text = title;
  Run run{build_problem(doc), {}, {}};
  ComputeRequest req;
  req.weights = true;
  TraceRecorder recorder;
  run.result = compute(run.problem, req, &recorder);
  run.steps = recorder.steps();
  return run;
}

size_t lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

// The real writers with the bytes as the title, description, source and
// labels. Markdown, LaTeX and JSON traces must have as many lines as for a
// plain title and plain labels: no text from the input starts a line.
void check_writers(const std::string& title, const std::vector<std::string>& labels) {
  const Run run = small_run(title, labels);
  // The plain run depends only on whether there is a title and on the
  // number of labels (2 to 4): computed once each, as it costs as much as
  // the run under test.
  static std::map<std::pair<bool, size_t>, Run> plain_runs;
  auto [it, fresh] = plain_runs.try_emplace({title.empty(), labels.size()});
  if (fresh) {
    std::vector<std::string> plain_labels;
    for (size_t i = 0; i < labels.size(); ++i) plain_labels.push_back("l" + std::to_string(i));
    it->second = small_run(title.empty() ? "" : "t", plain_labels);
  }
  const Run& plain = it->second;
  const Problem& p = run.problem;
  const Result& r = run.result;

  TraceOptions o;
  for (TraceFormat f :
       {TraceFormat::kText, TraceFormat::kMarkdown, TraceFormat::kLatex, TraceFormat::kJson}) {
    o.format = f;
    const std::string t = format_trace(p, run.steps, o);
    require(is_valid_utf8(t), "trace: invalid UTF-8");
    if (f != TraceFormat::kText) {
      require(lines(t) == lines(format_trace(plain.problem, plain.steps, o)),
              "trace: input text changed the lines");
    }
    if (f == TraceFormat::kJson) {
      const auto j = nlohmann::json::parse(t);
      require(j["title"] == sanitize_utf8(title), "json trace: title does not round-trip");
      std::vector<std::string> want;
      for (const std::string& l : labels) want.push_back(sanitize_utf8(l));
      bool found = false;
      for (const auto& step : j["steps"]) found |= step["row_labels"] == want;
      require(found, "json trace: labels do not round-trip");
    }
    if (f == TraceFormat::kLatex) {
      require(t.find("\\end{document}") == std::string::npos, "latex trace: \\end{document}");
    }
    if (f == TraceFormat::kText || f == TraceFormat::kMarkdown) {
      require(t.find('\x1b') == std::string::npos && t.find('\r') == std::string::npos,
              "trace: escape sequence or carriage return");
    }
  }
  // The program: the header up to COMMAND is fixed text, and COMMAND and
  // TITLE are one line each whose literal gives the text back.
  const std::string command = "attn run '" + title + "'";
  const std::string program = emit_pytorch(p, command, false);
  require(is_valid_utf8(program), "program: invalid UTF-8");
  const std::string plain_program = emit_pytorch(plain.problem, "attn run", false);
  const size_t head = plain_program.find("\nCOMMAND = ");
  require(
      head != std::string::npos && program.compare(0, head + 11, plain_program, 0, head + 11) == 0,
      "program: the docstring changed");
  auto literal_line = [&](const std::string& name) {
    const size_t at = program.find("\n" + name + " = ");
    require(at != std::string::npos, "program: no " + name);
    const size_t start = at + name.size() + 4;
    return decode_python(program.substr(start, program.find('\n', start) - start));
  };
  require(literal_line("COMMAND") == sanitize_utf8(command),
          "program: COMMAND does not round-trip");
  require(literal_line("TITLE") == sanitize_utf8(title), "program: TITLE does not round-trip");

  OutputOptions table;
  table.weights = true;
  const std::string t = format_result(p, r, table);
  require(is_valid_utf8(t) && t.find('\x1b') == std::string::npos, "table: unsafe text");

  const HeatmapData d = heatmap_from_result(p, r, HeatmapStage::kWeights);
  const std::string svg = render_svg(d, HeatmapOptions{});
  require(is_valid_utf8(svg), "svg: invalid UTF-8");
  for (char c : svg) {
    const unsigned char u = static_cast<unsigned char>(c);
    require(u >= 0x20 || c == '\n' || c == '\t' || c == '\r', "svg: forbidden control character");
  }
  for (size_t at = svg.find('>'); at != std::string::npos; at = svg.find('>', at + 1)) {
    // Between tags only character data: a '<' opens the next tag right away.
    const size_t next = svg.find('<', at);
    if (next == std::string::npos) break;
    const std::string text = svg.substr(at + 1, next - at - 1);
    require(text.find('>') == std::string::npos, "svg: raw '>' in character data");
  }
  // The page: strings only inside its JSON block, which holds no '<' (so
  // nothing in it ends the script) and gives the labels back, as shown
  // (--token-style readable, the default) and as given (raw).
  HeatmapOptions raw;
  raw.token_style = TokenStyle::kRaw;
  const std::string readable_page = render_html(d, HeatmapOptions{});
  require(is_valid_utf8(readable_page), "html: invalid UTF-8");
  const std::vector<std::string> shown = shown_tokens(d.row_labels, TokenStyle::kReadable);
  require(shown.size() == d.row_labels.size(), "tokens: a label lost");
  for (const std::string& s : shown) require(is_valid_utf8(sanitize_utf8(s)), "tokens: bad text");
  const std::string html = render_html(d, raw);
  require(is_valid_utf8(html), "html: invalid UTF-8");
  const std::string open = "<script type=\"application/json\" id=\"attn-data\">";
  const size_t start = html.find(open) + open.size();
  const std::string block = html.substr(start, html.find("</script>", start) - start);
  require(block.find('<') == std::string::npos, "html: '<' in the data block");
  const nlohmann::json page = nlohmann::json::parse(block);
  require(page["title"] == sanitize_utf8(d.title), "html: the title does not round-trip");
  for (size_t i = 0; i < d.row_labels.size(); ++i) {
    require(page["row_labels"][i] == sanitize_utf8(d.row_labels[i]),
            "html: a label does not round-trip");
  }
  size_t scripts = 0;
  for (size_t at = html.find("</script"); at != std::string::npos;
       at = html.find("</script", at + 1))
    ++scripts;
  require(scripts == 3, "html: a label ended a script element");
  TerminalStyle style;
  const std::string term = render_terminal(d, HeatmapOptions{}, style);
  require(is_valid_utf8(term) && term.find('\x1b') == std::string::npos, "terminal: unsafe text");
}

}  // namespace

void escape_text(std::string_view data) {
  const std::string all(data);
  check_escapers(all);
  // Labels: the bytes cut in up to four pieces (cuts may split a sequence).
  std::vector<std::string> labels;
  const size_t piece = std::max<size_t>(1, (all.size() + 3) / 4);
  for (size_t at = 0; at < all.size(); at += piece) labels.push_back(all.substr(at, piece));
  while (labels.size() < 2) labels.push_back(labels.empty() ? "" : labels.back());
  for (const std::string& l : labels) check_escapers(l);
  // The writers cost some twenty times what the escapers do: one input in
  // four (by a hash of its bytes, so an input always takes the same path)
  // goes through them, and the escapers get the executions.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : all) h = (h ^ c) * 1099511628211ull;
  if (h % 4 != 0) return;
  try {
    check_writers(all, labels);
  } catch (const Error&) {
    // Not expected for this small run; an attn::Error is a message, not a crash.
  }
}

}  // namespace attn::fuzz
