// Traces: the steps of a computation, in every format, with the numbers of
// the self-attention blog post (QKᵀ, the printed outputs and sim values),
// through the program. The formulas through the library: trace_test.cc.
#include "attn/trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "test_util.h"

namespace attn {
namespace {

using test::run_attn;
using test::write_temp;

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(Trace, SweetShowsTheBlogsQKt) {
  auto r = run_attn({"run", "--example", "sweet", "--trace"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has_line(r.out, "3. Scores Q·Kᵀ  [4][4]")) << r.out;
  EXPECT_TRUE(has_line(r.out, "          cat  milk  it  sweet"));
  EXPECT_TRUE(has_line(r.out, "   cat      8     8   8      8"));
  EXPECT_TRUE(has_line(r.out, "   milk     8    10   8     12"));
  EXPECT_TRUE(has_line(r.out, "   it       8     8   8      8"));
  EXPECT_TRUE(has_line(r.out, "   sweet    8    12   8     16"));
  EXPECT_TRUE(has_line(r.out, "   factor 1/√d_k = 1/√4 = 0.5"));
  EXPECT_TRUE(has_line(r.out, "   each row sums to 1"));
  EXPECT_TRUE(has_line(r.out,
                       "   milk  = 0.0826·v_cat + 0.2245·v_milk + 0.0826·v_it + 0.6103·v_sweet = "
                       "[0.0000, 0.5549, 3.4451, 0.0000]"));
}

TEST(Trace, SweetExplainsWhichNumbersAreWhich) {
  auto r = run_attn({"run", "--example", "sweet", "--trace"});
  EXPECT_NE(r.out.find("Expected output (the input's expected block)"), std::string::npos);
  EXPECT_NE(r.out.find("applied after the softmax (scale_at: output), not to the scores"),
            std::string::npos);
  EXPECT_NE(r.out.find("Output under --scale-at output (reproduces the expected numbers)"),
            std::string::npos);
  auto ok = run_attn({"run", "--example", "sweet", "--trace", "--scale-at", "output"});
  EXPECT_NE(ok.out.find("the output above matches these numbers"), std::string::npos);
}

// sim values of the blog post, from the JSON trace (full precision).
std::map<std::string, double> output_similarity(const std::string& example) {
  auto r = run_attn({"run", "--example", example, "--trace", "--trace-format", "json",
                     "--similarity", "--scale-at", "output"});
  EXPECT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::map<std::string, double> sims;
  for (const auto& s : j["steps"]) {
    if (s["id"] != "similarity_output") continue;
    const auto& labels = s["row_labels"];
    for (size_t a = 0; a < labels.size(); ++a) {
      for (size_t b = 0; b < labels.size(); ++b) {
        sims[labels[a].get<std::string>() + "," + labels[b].get<std::string>()] =
            s["values"][a][b].get<double>();
      }
    }
  }
  return sims;
}

TEST(Trace, SimilarityReproducesTheBlogsSimValues) {
  auto sweet = output_similarity("sweet");
  EXPECT_NEAR(sweet["it,milk"], 2.68, 0.005);
  EXPECT_NEAR(sweet["it,cat"], 2.28, 0.005);
  auto hungry = output_similarity("hungry");
  EXPECT_NEAR(hungry["it,milk"], 1.90, 0.005);
  EXPECT_NEAR(hungry["it,cat"], 2.03, 0.005);
}

TEST(Trace, BlogPrintedOutputsToThreeDigits) {
  auto r = run_attn(
      {"run", "--example", "sweet", "--trace", "--scale-at", "output", "--precision", "3"});
  EXPECT_TRUE(has_line(r.out, "   cat    0.000  0.625  1.375  0.000")) << r.out;
  EXPECT_TRUE(has_line(r.out, "   milk   0.000  0.089  1.911  0.000"));
  EXPECT_TRUE(has_line(r.out, "   sweet  0.000  0.010  1.990  0.000"));
  auto h = run_attn(
      {"run", "--example", "hungry", "--trace", "--scale-at", "output", "--precision", "3"});
  EXPECT_TRUE(has_line(h.out, "   cat     0.000  1.125  0.875  0.000")) << h.out;
  EXPECT_TRUE(has_line(h.out, "   milk    0.000  0.609  1.391  0.000"));
  EXPECT_TRUE(has_line(h.out, "   hungry  0.000  1.999  0.001  0.000"));
}

TEST(Trace, JsonHoldsEveryStep) {
  auto r = run_attn({"run", "--example", "sweet", "--trace", "--trace-format", "json"});
  auto j = nlohmann::json::parse(r.out);
  std::set<std::string> ids;
  for (const auto& s : j["steps"]) {
    ids.insert(s["id"].get<std::string>());
    EXPECT_TRUE(s.contains("formula"));
    EXPECT_TRUE(s.contains("shape"));
    EXPECT_TRUE(s.contains("values"));
  }
  for (const char* id : {"input_X", "scores", "scaled", "row_max", "exp", "row_sum", "weights",
                         "weighted_sum", "output"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
  // Each row of the weights sums to 1.
  for (const auto& s : j["steps"]) {
    if (s["id"] != "weights") continue;
    for (const auto& row : s["values"]) {
      double sum = 0;
      for (const auto& v : row) sum += v.get<double>();
      EXPECT_NEAR(sum, 1.0, 1e-15);
    }
  }
}

TEST(Trace, ProjectionsHeadsAndOutputProjection) {
  auto r =
      run_attn({"run", "--example", "cross_shapes", "--trace", "--trace-format", "json", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::set<std::string> ids;
  for (const auto& s : j["steps"]) ids.insert(s["id"].get<std::string>());
  for (const char* id :
       {"input_X", "input_Y", "projection_Q", "projection_K", "projection_V", "head_q", "scores",
        "weights", "head_output", "concat", "output_projection", "output"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
  EXPECT_EQ(j["shapes"], "X [2][10][512], Y [2][20][512] -> output [2][10][512]");
}

TEST(Trace, MaskedCellsShowAsMinusInfOrMasked) {
  auto r = run_attn({"run", test::source_path("data/masks/causal.json"), "--trace"});
  EXPECT_TRUE(has_line(r.out, "   q0   0  -inf  -inf  -inf")) << r.out;
  // With a finite fill the cells are still shown as masked, not as -1e+06
  // (the note says what they were set to).
  auto f = run_attn(
      {"run", test::source_path("data/masks/causal.json"), "--trace", "--mask-fill", "-1e6"});
  EXPECT_TRUE(has_line(f.out, "   q0   0  masked  masked  masked")) << f.out;
  EXPECT_TRUE(has_line(f.out, "   masked cells are set to mask_fill = -1e+06"));
}

TEST(Trace, VariantsTraceTheirOwnFormulas) {
  auto a = run_attn({"run", "--example", "additive", "--trace"});
  EXPECT_NE(a.out.find("S_ij = w_vᵀ·tanh(f_i + g_j)"), std::string::npos);
  EXPECT_NE(a.out.find("F = Q·W_q"), std::string::npos);
  auto b = run_attn({"run", "--example", "biattention", "--trace"});
  EXPECT_NE(b.out.find("S_ij = t_i + u_j + D_ij"), std::string::npos);
  EXPECT_NE(b.out.find("A1 = softmax_j(S)"), std::string::npos);
  EXPECT_NE(b.out.find("a2 = softmax_i(m)"), std::string::npos);
  auto s =
      run_attn({"run", "-", "--trace"},
               R"({"X": [[1, 0], [0, 1]], "variant": "single_layer", "params": {"w": [1, -1]}})");
  EXPECT_NE(s.out.find("D_ij = (q_i − k_j)·w"), std::string::npos) << s.err;
  EXPECT_NE(s.out.find("S_ij = LeakyReLU_0.01(D_ij)"), std::string::npos);
}

TEST(Trace, ShapesOfTheShapesPost) {
  auto r = run_attn({"run", "--example", "shapes", "--trace"});
  EXPECT_NE(r.out.find("shapes: Q [2][3][2], K [2][8][2], V [2][8][10] -> output [2][3][10]"),
            std::string::npos);
}

TEST(Trace, MarkdownHasTables) {
  auto r = run_attn({"run", "--example", "sweet", "--trace", "--trace-format", "markdown"});
  EXPECT_NE(r.out.find("## 3. Scores Q·Kᵀ — [4][4]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| **milk** | 8 | 10 | 8 | 12 |"), std::string::npos);
}

TEST(Trace, TextIsPlainWhenPiped) {
  auto r = run_attn({"run", "--example", "sweet", "--trace"}, "", {"TERM=xterm-256color"});
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos);
}

// Environments open and close in order.
bool balanced(const std::string& tex) {
  std::vector<std::string> stack;
  size_t at = 0;
  int display = 0;
  while ((at = tex.find('\\', at)) != std::string::npos) {
    if (tex.compare(at, 7, "\\begin{") == 0 || tex.compare(at, 5, "\\end{") == 0) {
      const bool begin = tex[at + 1] == 'b';
      const size_t open = tex.find('{', at), close = tex.find('}', open);
      const std::string env = tex.substr(open + 1, close - open - 1);
      if (begin) {
        stack.push_back(env);
      } else {
        if (stack.empty() || stack.back() != env) return false;
        stack.pop_back();
      }
      at = close;
    } else if (tex.compare(at, 2, "\\[") == 0) {
      if (display++ != 0) return false;
      at += 2;
    } else if (tex.compare(at, 2, "\\]") == 0) {
      if (--display != 0) return false;
      at += 2;
    } else {
      at += 2;
    }
  }
  return stack.empty() && display == 0;
}

// LaTeX traces of the blog example with the similarity step, of a model
// with sinks (σ), of RoPE (θ) and of labels in Chinese, with accents and
// tokenizers' markers: what the tests below compile and read.
std::vector<std::string> latex_traces() {
  std::vector<std::vector<std::string>> runs = {
      {"run", "--example", "sweet", "--similarity"},
      {"run", test::source_path("data/examples/gpt_oss.json")},
      {"run", test::source_path("data/examples/llama.json")},
      {"run", "--example", "sweet", "--labels", "\xE5\xAE\x83,caf\xC3\xA9,\xE2\x96\x81the,x_1"}};
  std::vector<std::string> out;
  for (auto& args : runs) {
    args.insert(args.end(), {"--trace", "--trace-format", "latex"});
    auto r = run_attn(args);
    EXPECT_EQ(r.code, 0) << r.err;
    out.push_back(r.out);
  }
  return out;
}

// Every byte is ASCII (pdflatex needs no inputenc), and the step titles
// are text the reader sees, not comments only.
TEST(Trace, LatexIsAsciiWithVisibleTitles) {
  for (const std::string& tex : latex_traces()) {
    for (size_t i = 0; i < tex.size(); ++i) {
      ASSERT_LT(static_cast<unsigned char>(tex[i]), 0x80) << "byte " << i << " of:\n"
                                                          << tex.substr(i > 80 ? i - 80 : 0, 160);
    }
    EXPECT_NE(tex.find("\n\\noindent\\textbf{1. "), std::string::npos) << tex;
  }
  const std::vector<std::string> t = latex_traces();
  EXPECT_NE(t[1].find("\\ensuremath{\\sigma}"), std::string::npos) << t[1];
  EXPECT_NE(t[3].find("\\text{\\texttt{U+5B83}}"), std::string::npos) << t[3];
  EXPECT_NE(t[3].find("\\text{caf\\'{e}}"), std::string::npos) << t[3];
  EXPECT_NE(t[3].find("\\text{x\\_1}"), std::string::npos) << t[3];
}

TEST(Trace, LatexIsBalancedAndCompiles) {
  const std::vector<std::string> traces = latex_traces();
  for (const std::string& tex : traces) EXPECT_TRUE(balanced(tex)) << tex;
  EXPECT_NE(traces[0].find("S = Q \\cdot K^\\top =\n\\begin{array}{r|rrrr}"), std::string::npos)
      << traces[0];
  if (std::system("command -v pdflatex >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "pdflatex is not installed (apt-get install texlive-latex-base); checked that "
                    "environments balance, not that it compiles";
  }
  const std::string dir = test::temp_dir() + "/tex";
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  for (size_t i = 0; i < traces.size(); ++i) {
    // No inputenc, no fontenc: the trace must be ASCII for this to compile.
    test::write_temp("tex/trace.tex",
                     "\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n" +
                         traces[i] + "\\end{document}\n");
    const int rc = std::system(("cd " + dir +
                                " && pdflatex -interaction=nonstopmode -halt-on-error trace.tex "
                                ">pdflatex.log 2>&1")
                                   .c_str());
    EXPECT_EQ(rc, 0) << "trace " << i << ":\n" << test::read_text(dir + "/pdflatex.log");
  }
}

TEST(Check, FailureUnderTheFormulasPlacementIsExplained) {
  auto r = run_attn({"run", "--example", "sweet", "--check"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("why: The expected numbers are softmax(QKᵀ)·V·f with the scale factor "
                       "f = 1/√d_k = 0.5 applied after the softmax (scale_at: output)"),
            std::string::npos)
      << r.out;
  auto ok = run_attn({"run", "--example", "sweet", "--check", "--scale-at", "output"});
  EXPECT_EQ(ok.code, 0);
  EXPECT_NE(ok.out.find("check passed: all 16 values match"), std::string::npos);
  auto h = run_attn({"run", "--example", "hungry", "--check"});
  EXPECT_EQ(h.code, 1);
  EXPECT_NE(h.out.find("why: "), std::string::npos);
}

TEST(Check, QuietListsOnlyTheMismatchesAndNoEmptyTable) {
  auto failed = run_attn({"run", "--example", "sweet", "--check", "-q"});
  EXPECT_EQ(failed.code, 1);
  EXPECT_EQ(failed.out.find("        ok"), std::string::npos) << failed.out;
  EXPECT_NE(failed.out.find("output[0][1] (cat)       0.625"), std::string::npos) << failed.out;
  EXPECT_NE(failed.out.find("check FAILED: 8 of 16 values differ\n"), std::string::npos);
  auto passed = run_attn({"run", "--example", "sweet", "--check", "-q", "--scale-at", "output"});
  EXPECT_EQ(passed.code, 0);
  // The table, then the verdict alone: no header over no rows.
  EXPECT_NE(passed.out.find("0.0000\n\ncheck passed: all 16 values match\n"), std::string::npos)
      << passed.out;
  EXPECT_EQ(passed.out.find("position"), std::string::npos) << passed.out;
}

TEST(Trace, SelfModeSaysWhereQKVComeFromBeforeTheScores) {
  auto r = run_attn({"run", "--example", "sweet", "--trace"});
  const size_t sources = r.out.find("\n2. Queries, keys and values\n   Q = K = V = X\n");
  ASSERT_NE(sources, std::string::npos) << r.out;
  EXPECT_LT(sources, r.out.find("S = Q·Kᵀ"));
  // Cross mode without projections; projections define Q, K, V themselves.
  auto c = run_attn({"run", "-", "--trace"}, R"({"X": [[1, 0]], "Y": [[1, 0], [0, 1]]})");
  EXPECT_NE(c.out.find("\n   Q = X, K = V = Y\n"), std::string::npos) << c.out << c.err;
  auto p = run_attn({"run", "--example", "cross_shapes", "--trace", "-q", "--batch", "0", "--head",
                     "0", "--query", "0"});
  EXPECT_EQ(p.out.find("Queries, keys and values"), std::string::npos);
  auto v = run_attn({"run", "-", "--trace"}, R"({"Q": [[1, 0]], "K": [[1, 0], [0, 1]]})");
  EXPECT_NE(v.out.find("\n   V = K\n"), std::string::npos) << v.out << v.err;
}

TEST(Trace, WeightsAndProjectionsHaveDifferentLetters) {
  auto r = run_attn({"run", "--example", "sweet", "--trace"});
  EXPECT_TRUE(has_line(r.out, "   A_ij = E_ij / z_i")) << r.out;
  EXPECT_TRUE(has_line(r.out, "   O = A·V"));
  EXPECT_EQ(r.out.find("W_ij"), std::string::npos);
  auto d = run_attn({"run", "--example", "sweet", "--trace", "--dropout", "0.5"});
  EXPECT_NE(d.out.find("Ã = A ⊙ keep / (1 − p), p = 0.5"), std::string::npos) << d.out;
  EXPECT_TRUE(has_line(d.out, "   O = Ã·V"));
  auto m = run_attn({"run", "--example", "cross_shapes", "--trace", "-q", "--batch", "0", "--head",
                     "0", "--query", "0"});
  EXPECT_TRUE(has_line(m.out, "   Z = C·W_o + b_o")) << "Y is the context";
}

TEST(Trace, EverySymbolIsDefinedBeforeItIsUsed) {
  // cosine has no factor, so there is no S': the softmax works on S.
  auto r = run_attn({"run", "--example", "sweet", "--trace", "--scale", "cosine"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("S'"), std::string::npos) << r.out;
  EXPECT_TRUE(has_line(r.out, "   m_i = max_j S_ij"));
  EXPECT_TRUE(has_line(r.out, "   E_ij = exp(S_ij − m_i)"));
  EXPECT_TRUE(has_line(r.out, "   each row q_i of Q divided by its length"));
  // A bias without a scale defines S' itself.
  auto b = run_attn(
      {"run", test::source_path("data/masks/attn_bias.json"), "--trace", "--scale", "none"});
  EXPECT_NE(b.out.find("S' = S + attn_bias"), std::string::npos) << b.out << b.err;
}

TEST(Trace, ScaleFactorHasTheTracePrecision) {
  auto r = run_attn({"run", "--example", "d2l_valid_lens", "--trace"});
  EXPECT_TRUE(has_line(r.out, "   S' = S·0.7071")) << r.out;
  EXPECT_TRUE(has_line(r.out, "   factor 1/√d_k = 1/√2 = 0.7071"));
  auto two = run_attn({"run", "--example", "d2l_valid_lens", "--trace", "--precision", "2"});
  EXPECT_TRUE(has_line(two.out, "   S' = S·0.71")) << two.out;
  auto half = run_attn({"run", "--example", "sweet", "--trace"});
  EXPECT_TRUE(has_line(half.out, "   S' = S·0.5"));
  auto j = run_attn({"run", "--example", "d2l_valid_lens", "--trace", "--trace-format", "json"});
  EXPECT_NE(j.out.find("\"S' = S·0.7071067811865475\""), std::string::npos);
}

TEST(Trace, HeadIsNamedOnce) {
  auto r = run_attn({"run", "--example", "sweet", "--heads", "2", "--trace"});
  EXPECT_NE(r.out.find(". Query block (head 0)  [4][2]\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Head 0 queries"), std::string::npos);
}

int count_lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

TEST(Trace, BatchHeadAndQueryNarrowIt) {
  auto all = run_attn({"run", "--example", "multihead", "--trace"});
  auto one = run_attn({"run", "--example", "multihead", "--trace", "--batch", "1", "--head", "2"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_LT(count_lines(one.out) * 4, count_lines(all.out));
  EXPECT_TRUE(has_line(one.out, "showing: batch 1, head 2 (the other steps are left out)"));
  EXPECT_EQ(one.out.find("batch 0"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("head 1)"), std::string::npos);
  EXPECT_NE(one.out.find("(batch 1, head 2)"), std::string::npos);
  // A query by label: its row of every per-query step, under its name.
  auto milk = run_attn({"run", "--example", "sweet", "--trace", "--query", "milk"});
  ASSERT_EQ(milk.code, 0) << milk.err;
  EXPECT_TRUE(has_line(milk.out, "showing: query 1 (milk) (the other steps are left out)"));
  EXPECT_TRUE(has_line(milk.out, "   milk  0.0826  0.2245  0.0826  0.6103")) << milk.out;
  EXPECT_FALSE(has_line(milk.out, "   cat    0.2500  0.2500  0.2500  0.2500"));
  // The input keeps every row: keys and values come from it too.
  EXPECT_TRUE(has_line(milk.out, "   sweet  0  0  4  0"));
  auto idx = run_attn({"run", "--example", "d2l_valid_lens", "--trace", "--batch", "1", "--query",
                       "0", "--trace-format", "json"});
  const auto j = nlohmann::json::parse(idx.out);
  EXPECT_EQ(j["showing"], "batch 1, query 0");
  for (const auto& s : j["steps"]) EXPECT_NE(s["batch"], 0) << s["id"];
}

TEST(Trace, NarrowingFlagsAreChecked) {
  auto q = run_attn({"run", "--example", "sweet", "--trace", "--query", "mlk"});
  EXPECT_EQ(q.code, 2);
  EXPECT_EQ(q.err, "attn: error: --query mlk: no query is called 'mlk'; did you mean 'milk'?\n");
  auto r = run_attn({"run", "--example", "sweet", "--trace", "--query", "4"});
  EXPECT_EQ(r.err, "attn: error: --query 4: out of range; the input has 4 queries (0 to 3)\n");
  auto h = run_attn({"run", "--example", "sweet", "--trace", "--head", "1"});
  EXPECT_EQ(h.err, "attn: error: --head 1: out of range; the input has 1 head (0 to 0)\n");
  auto n = run_attn({"run", "--example", "sweet", "--query", "1"});
  EXPECT_EQ(n.code, 2);
  EXPECT_EQ(n.err, "attn: error: --query needs --trace\n");
  auto b = run_attn({"run", "--example", "multihead", "--batch", "1"});
  EXPECT_EQ(b.err, "attn: error: --batch needs --heatmap FILE or --show (or --trace)\n");
}

TEST(Similarity, WithoutTraceAppendsTables) {
  auto r = run_attn({"run", "--example", "sweet", "--similarity", "--scale-at", "output"});
  EXPECT_NE(r.out.find("Similarity of output rows (sim(i, j) = o_i·o_j)"), std::string::npos)
      << r.out;
}

TEST(Trace, AQueryLabelThatNamesTwoQueriesIsNotGuessed) {
  const std::string x = write_temp("three_rows.json", "[[1, 0], [0, 1], [1, 1]]");
  const std::string tokens = write_temp("the_cat_the.json", "[\"the\", \"cat\", \"the\"]");
  const auto r = run_attn({"run", x, "--tokens", tokens, "--trace", "--query", "the"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --query the: queries 0 (the₀), 2 (the₂) are all called 'the'; give "
            "the index of the one to trace\n");
  EXPECT_EQ(run_attn({"run", x, "--tokens", tokens, "--trace", "--query", "2"}).code, 0);
  // The name the table shows picks one of them.
  EXPECT_EQ(run_attn({"run", x, "--tokens", tokens, "--trace", "--query", "the₂"}).code, 0);
}

TEST(Trace, AQueryIsFoundByHowItsTokenReads) {
  const std::string x = write_temp("four_rows.json", "[[1, 0], [0, 1], [1, 1], [2, 1]]");
  for (const char* list :
       {R"(["The", "Ġcat", "Ġsat", "Ġthe"])", R"(["The", "▁cat", "▁sat", "▁the"])",
        R"(["The", " cat", " sat", " the"])"}) {
    const std::string tokens = write_temp("spaced.json", list);
    const auto r = run_attn({"run", x, "--tokens", tokens, "--trace", "--query", "cat"});
    EXPECT_EQ(r.code, 0) << list << r.err;
    EXPECT_NE(r.out.find("query 1 ("), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace attn
