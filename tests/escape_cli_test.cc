// Hostile titles, labels and file names (quotes, backslashes, newlines,
// """, </script>, \end{document}, -->, ]]>, NUL, escape sequences, invalid
// UTF-8) through every writer of the real binary, each output read back by
// a parser of its language: the emitted PyTorch program runs under Python,
// the JSON trace parses with nlohmann::json, the SVG with Python's XML
// parser, the LaTeX trace compiles with pdflatex. The escaping functions
// themselves: escape_test.cc.
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
using test::run_attn;
using test::temp_dir;
using test::write_temp;

// Every nasty piece in one title: if any escaper misses one, some output breaks.
const std::string kHostile = "q\"uo'te \\back\\ \"\"\" ''' </script> \\end{document} "s +
                             "--> ]]> <!-- # $ % & _ { } ~ ^ | * ` [x](y)\n# heading\r\n" +
                             "nul\0 esc\x1b[2J tab\t"s + " \xE2\x80\xAE" + "end";

const std::vector<std::string> kHostileLabels = {"<b>", "]]>", "-->", "a|b", "\\end{document}"};

const std::string kInjection = "t\"\"\"\nimport os; print('INJECTED')\n\"\"\"";

bool torch_available() {
  return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

// A self-attention document with the given title (also in its description
// and source) and labels: X has one row per label (two rows without).
std::string document(const std::string& title, const std::vector<std::string>& labels) {
  nlohmann::json d;
  d["title"] = title;
  d["description"] = "about: " + title;
  d["source"] = "from " + title;
  d["X"] = nlohmann::json::array();
  for (size_t i = 0; i < std::max<size_t>(labels.size(), 2); ++i) {
    d["X"].push_back({static_cast<double>(i % 2), static_cast<double>(i % 3)});
  }
  if (!labels.empty()) d["labels"] = labels;
  return d.dump();
}

TEST(EscapeCli, ReproducerProgramPrintsTheTitleAndNotInjected) {
  if (!python_available()) GTEST_SKIP() << "/usr/bin/python3 is not installed";
  const std::string in = write_temp("inject.json", document(kInjection, {}));
  auto r = run_attn({"run", "--mode", "self", in, "--emit-pytorch"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string prog = write_temp("inject.py", r.out);
  // Whatever torch does, the title is a string constant: the module
  // compiles and TITLE evaluates to the title.
  auto ast = python(
      "import ast, sys\n"
      "tree = ast.parse(open(sys.argv[1], encoding='utf-8').read())\n"
      "for node in tree.body:\n"
      "    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) \\\n"
      "            and node.targets[0].id == 'TITLE':\n"
      "        sys.stdout.buffer.write(ast.literal_eval(node.value).encode('utf-8'))\n",
      {prog});
  ASSERT_EQ(ast.code, 0) << ast.err;
  EXPECT_EQ(ast.out, kInjection);
  if (!torch_available()) {
    GTEST_SKIP() << "Debian's python3-torch is not installed (apt-get install python3-torch); "
                    "checked that TITLE holds the title, not that the program runs";
  }
  const std::string base = temp_dir() + "/inject_run";
  auto run =
      test::run_redirected("/usr/bin/python3 " + test::quote(prog), base + ".out", base + ".err");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out.find("INJECTED"), std::string::npos) << run.out;
  EXPECT_EQ(run.err, kInjection + "\n");
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["output"].size(), 2u);
}

TEST(EscapeCli, HostileTitleAndFileNameStayDataInThePythonProgram) {
  if (!python_available()) GTEST_SKIP() << "/usr/bin/python3 is not installed";
  const std::string in = write_temp("hostile.json", document(kHostile, kHostileLabels));
  // The file name reaches the program through COMMAND.
  const std::string dir = temp_dir() + "/a'\"\"\"\nb\xFF";
  ASSERT_EQ(std::system(("mkdir -p " + test::quote(dir)).c_str()), 0);
  const std::string named = dir + "/in.json";
  ASSERT_EQ(std::system(("cp " + test::quote(in) + " " + test::quote(named)).c_str()), 0);
  auto r = run_attn({"run", named, "--emit-pytorch"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(is_valid_utf8(r.out));
  const std::string prog = write_temp("hostile.py", r.out);
  auto ast = python(
      "import ast, sys\n"
      "tree = ast.parse(open(sys.argv[1], encoding='utf-8').read())\n"
      "names = {}\n"
      "for node in tree.body:\n"
      "    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):\n"
      "        names[node.targets[0].id] = node.value\n"
      "title = ast.literal_eval(names['TITLE'])\n"
      "command = ast.literal_eval(names['COMMAND'])\n"
      "sys.stdout.buffer.write(title.encode('utf-8') + b'\\x01' + command.encode('utf-8'))\n",
      {prog});
  ASSERT_EQ(ast.code, 0) << ast.err;
  const size_t cut = ast.out.find('\x01');
  ASSERT_NE(cut, std::string::npos);
  EXPECT_EQ(ast.out.substr(0, cut), kHostile);
  const std::string command = ast.out.substr(cut + 1);
  EXPECT_EQ(command.rfind("attn run '", 0), 0u) << command;
  EXPECT_NE(command.find("\"\"\"\nb" + kFffd + "/in.json"), std::string::npos) << command;
  if (!torch_available()) GTEST_SKIP() << "python3-torch is not installed; the program did not run";
  const std::string base = temp_dir() + "/hostile_run";
  auto run =
      test::run_redirected("/usr/bin/python3 " + test::quote(prog), base + ".out", base + ".err");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.err, kHostile + "\n");
  EXPECT_NO_THROW(nlohmann::json::parse(run.out)) << run.out;
}

TEST(EscapeCli, JsonTraceRoundTripsTitleAndLabels) {
  const std::string in = write_temp("hostile_trace.json", document(kHostile, kHostileLabels));
  auto r = run_attn({"run", in, "--trace", "--trace-format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["title"], kHostile);
  EXPECT_EQ(j["description"], "about: " + kHostile);
  EXPECT_EQ(j["source"], "from " + kHostile);
  bool labelled = false;
  for (const auto& s : j["steps"]) {
    if (s["row_labels"].size() == kHostileLabels.size()) {
      EXPECT_EQ(s["row_labels"].get<std::vector<std::string>>(), kHostileLabels);
      labelled = true;
    }
  }
  EXPECT_TRUE(labelled);
}

// Invalid UTF-8 cannot be in a JSON document, but it can be in a CSV
// file's labels and in --labels.
std::string invalid_utf8_csv() {
  return write_temp("bad_utf8.csv", "tok,a,b\n\xFFx,1,0\nok\xC3,0,1\n");
}

TEST(EscapeCli, InvalidUtf8InputIsRefusedAndMessagesStayUtf8) {
  // Text inputs are checked as UTF-8 when read (the writers' sanitizing,
  // tested above, is the second line of defence), and the message that
  // refuses them is itself valid UTF-8.
  const std::string csv = invalid_utf8_csv();
  const std::vector<std::vector<std::string>> runs = {
      {"run", csv, "--trace", "--trace-format", "json"},
      {"run", csv, "--trace", "--trace-format", "latex"},
      {"run", csv, "--weights"},
      {"run", csv, "--emit-pytorch"},
  };
  for (const auto& args : runs) {
    auto r = run_attn(args);
    EXPECT_EQ(r.code, 3) << args.back() << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(is_valid_utf8(r.err)) << r.err;
  }
  const std::string ok = write_temp("good_utf8.csv", "tok,a,b\nx,1,0\ny,0,1\n");
  auto l = run_attn(
      {"run", ok, "--labels", "\xE0\x80,\xED\xA0\x80", "--trace", "--trace-format", "json"});
  EXPECT_EQ(l.code, 2) << l.err;
  EXPECT_TRUE(is_valid_utf8(l.err)) << l.err;
}

TEST(EscapeCli, LatexTraceCannotEndTheDocument) {
  const std::string in = write_temp("hostile_tex.json", document(kHostile, kHostileLabels));
  auto r = run_attn({"run", in, "--trace", "--trace-format", "latex"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("\\end{document}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("% q\"uo'te \\textbackslash{}back"), std::string::npos) << r.out;
  // Every line that starts a comment stays one line.
  EXPECT_EQ(r.out.find("\n# heading"), std::string::npos);
  if (std::system("command -v pdflatex >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "pdflatex is not installed (apt-get install texlive-latex-base)";
  }
  const std::string dir = temp_dir() + "/hostile_tex";
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  // TeX must get past the trace: an \end{document} smuggled in would stop
  // it before the \typeout.
  test::write_temp("hostile_tex/t.tex",
                   "\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n" + r.out +
                       "\n\\typeout{REACHED-THE-END}\n\\end{document}\n");
  const int rc = std::system(("cd " + dir +
                              " && pdflatex -interaction=nonstopmode -halt-on-error t.tex "
                              ">pdflatex.log 2>&1")
                                 .c_str());
  const std::string log = test::read_text(dir + "/pdflatex.log");
  ASSERT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("REACHED-THE-END"), std::string::npos) << log;
}

TEST(EscapeCli, MarkdownTraceKeepsBlocksAndTableRows) {
  const std::string in = write_temp("hostile_md.json", document(kHostile, kHostileLabels));
  auto r = run_attn({"run", in, "--trace", "--trace-format", "markdown"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# q\"uo'te \\\\back\\\\ ", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("\n# heading"), std::string::npos);
  EXPECT_EQ(r.out.find("</script>"), std::string::npos);
  EXPECT_EQ(r.out.find('\r'), std::string::npos);
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  // Every table row has as many unescaped pipes as its header.
  auto pipes = [](const std::string& line) {
    int n = 0;
    for (size_t i = 0; i < line.size(); ++i) n += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    return n;
  };
  std::istringstream lines(r.out);
  std::string line;
  int header = 0, rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("|  |", 0) == 0) header = pipes(line);
    if (line.rfind("| **", 0) != 0) continue;
    EXPECT_EQ(pipes(line), header) << line;
    ++rows;
  }
  EXPECT_GT(rows, 5);
}

TEST(EscapeCli, TablesAndTextTracesCarryNoEscapeSequences) {
  const std::string in = write_temp("hostile_table.json", document(kHostile, kHostileLabels));
  for (const std::vector<std::string>& args : {std::vector<std::string>{"run", in, "--weights"},
                                               {"run", in, "--trace"},
                                               {"run", in, "--show", "--weights"}}) {
    auto r = run_attn(args, "", {"NO_COLOR=1"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << args.back();
    EXPECT_EQ(r.out.find('\r'), std::string::npos) << args.back();
    EXPECT_NE(r.out.find("<b>"), std::string::npos) << args.back();  // labels shown as they are
  }
}

TEST(EscapeCli, SvgParsesAsXmlWithTheLabelsIntact) {
  if (!python_available()) GTEST_SKIP() << "/usr/bin/python3 is not installed";
  const std::string in = write_temp("hostile_svg.json", document(kHostile, {"<b>&", "]]>", "-->"}));
  const std::string svg = temp_dir() + "/hostile.svg";
  auto r = run_attn({"run", in, "--heatmap", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = test::read_text(svg);
  std::string why;
  EXPECT_TRUE(test::well_formed_xml(text, &why)) << why;
  // A real XML parser: expat refuses control characters, invalid UTF-8
  // and stray markup.
  auto p = python(
      "import sys, xml.etree.ElementTree as ET\n"
      "root = ET.parse(sys.argv[1]).getroot()\n"
      "for t in root.iter('{http://www.w3.org/2000/svg}text'):\n"
      "    if t.get('class') == 'row-label':\n"
      "        sys.stdout.buffer.write(t.text.encode('utf-8') + b'\\n')\n",
      {svg});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, "<b>&\n]]>\n-->\n");
  // Invalid UTF-8 in labels.
  const std::string svg2 = temp_dir() + "/bad.svg";
  auto r2 = run_attn({"run", invalid_utf8_csv(), "--heatmap", svg2});
  EXPECT_EQ(r2.code, 3) << r2.err;  // refused when read, before any figure
}

TEST(EscapeCli, CsvOutputSplitsIntoItsFields) {
  const std::string in = write_temp("hostile_csv.json", document(kHostile, kHostileLabels));
  auto r = run_attn({"run", in, "-f", "csv", "--weights"});
  ASSERT_EQ(r.code, 0) << r.err;
  // The output and the weights blocks, each read back as a matrix.
  const size_t w = r.out.find("# weights");
  ASSERT_NE(w, std::string::npos) << r.out;
  const int64_t n = static_cast<int64_t>(kHostileLabels.size());
  // Each block is a labelled table: the hostile labels come back as given.
  const CsvMatrix out = parse_csv(r.out.substr(0, w), "out.csv");
  EXPECT_EQ(out.values.shape(), (Shape{n, 2}));
  const CsvMatrix weights = parse_csv(r.out.substr(w), "w.csv");
  EXPECT_EQ(weights.values.shape(), (Shape{n, n}));
  EXPECT_EQ(out.row_labels, kHostileLabels);
  EXPECT_EQ(weights.row_labels, kHostileLabels);
  EXPECT_EQ(weights.column_labels, kHostileLabels);
}

}  // namespace
}  // namespace attn
