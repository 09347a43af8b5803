// attn's analyses of a model's attention through the program
// (docs/analyses.md): head summaries as numbers, of a stack file and of a
// run, over the sentences of a corpus, rollout and value norms written as
// stacks, predictions and the logit lens, attn diff of two stacks, and the
// messages of bad input. The numbers are held to the float64 references of
// tests/make_analysis_refs.py (tests/analysis/), or, for the corpus, to
// numpy's mean and std of one run per sentence.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn {
namespace {

using nlohmann::json;
using test::model;
using test::run_attn;
using test::temp_dir;

const json& refs() {
  static const json r = json::parse(test::read_text(test::source_path("tests/analysis/refs.json")));
  return r;
}

std::string ref_path(const std::string& name) {
  return test::source_path("tests/analysis/" + name);
}

std::string ids_of(const std::string& name) {
  const auto ids = json::parse(test::read_text(model(name) + "/ids.json"));
  std::string s;
  for (const json& i : ids) s += (s.empty() ? "" : ",") + std::to_string(i.get<int64_t>());
  return s;
}

void expect_grid(const json& got, const json& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t l = 0; l < want.size(); ++l) {
    ASSERT_EQ(got[l].size(), want[l].size()) << what;
    for (size_t h = 0; h < want[l].size(); ++h) {
      EXPECT_NEAR(got[l][h].get<double>(), want[l][h].get<double>(), tol)
          << what << " [" << l << "][" << h << "]";
    }
  }
}

double max_rel(const Tensor<double>& a, const Tensor<double>& b) {
  double top = 1;
  for (int64_t i = 0; i < b.size(); ++i) top = std::max(top, std::abs(b[i]));
  return test::max_diff(a, b) / top;
}

TEST(HeadSummaryNumbers, OfAStackFileAsJsonCsvAndTheTopHeads) {
  const std::string stack = model("tiny-qwen2") + "/attentions.npy";
  for (const std::string stat : {"entropy", "first", "previous", "self", "distance"}) {
    const test::Run r = run_attn({"heatmap", stack, "--summary", stat, "-f", "json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["summary"], stat);
    expect_grid(doc["values"], refs()["summaries"]["tiny-qwen2"][stat], 1e-9, stat);
  }
  const std::string csv = temp_dir() + "/summary.csv";
  test::Run r = run_attn({"heatmap", stack, "--summary", "previous", "-o", csv, "--top", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json& prev = refs()["summaries"]["tiny-qwen2"]["previous"];
  // The two largest, in order, as layer,head,value.
  std::vector<std::tuple<double, int, int>> cells;
  for (int l = 0; l < 3; ++l) {
    for (int h = 0; h < 4; ++h) cells.emplace_back(prev[l][h].get<double>(), l, h);
  }
  std::sort(cells.begin(), cells.end(),
            [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
  const std::string text = test::read_text(csv);
  const size_t first = text.find('\n') + 1, second = text.find('\n', first) + 1;
  EXPECT_EQ(text.substr(0, first), "layer,head,value\n");
  EXPECT_EQ(text.substr(first, text.find(',', text.find(',', first) + 1) - first),
            std::to_string(std::get<1>(cells[0])) + "," + std::to_string(std::get<2>(cells[0])));
  EXPECT_EQ(text.substr(second, text.find(',', text.find(',', second) + 1) - second),
            std::to_string(std::get<1>(cells[1])) + "," + std::to_string(std::get<2>(cells[1])));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  // The figure says what it left out.
  const std::string svg = temp_dir() + "/summary_left_out.svg";
  r = run_attn({"heatmap", stack, "--summary", "first", "-o", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(test::read_text(svg).find("left out: query 0, which sees a single key (causal)"),
            std::string::npos);
  r = run_attn({"heatmap", stack, "--summary", "first", "-f", "json", "--show"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --show draws the figure; --format writes the numbers of --summary; give "
            "one\n");
  r = run_attn({"heatmap", stack, "-f", "json"});
  EXPECT_EQ(r.err,
            "attn: error: --format writes the numbers of --summary STAT; a figure's format is its "
            "file's extension (-o FILE.png, .svg, .html)\n");
}

TEST(HeadSummaryNumbers, OfARunHoldNoStackAndMatchTheReference) {
  for (const std::string stat : {"entropy", "previous", "distance"}) {
    const test::Run r =
        run_attn({"run", "--checkpoint", model("tiny-qwen2"), "--ids", ids_of("tiny-qwen2"),
                  "--layer", "all", "--summary", stat, "-f", "json", "--top", "3"});
    ASSERT_EQ(r.code, 0) << r.err;
    const json doc = json::parse(r.out);
    expect_grid(doc["values"], refs()["summaries"]["tiny-qwen2"][stat], 1e-9, stat);
    EXPECT_EQ(doc["top"].size(), 3u);
    EXPECT_FALSE(doc.contains("weights"));
  }
  const test::Run r =
      run_attn({"run", "--checkpoint", model("tiny-bert-f64"), "--ids", ids_of("tiny-bert-f64"),
                "--layer", "all", "--summary", "previous", "-f", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json doc = json::parse(r.out);
  expect_grid(doc["values"], refs()["summaries"]["tiny-bert-f64"]["previous"], 1e-9, "bert");
  EXPECT_EQ(doc["left_out"], "query 0, which has no previous token");
}

// The corpus's mean and numpy.std (ddof 0) of the head summary, against one
// run per sentence (not batched) averaged here.
TEST(Corpus, MeanAndSdOverTheSentencesOfJsonLinesAndOfLines) {
  const std::vector<std::string> sentences = {"The cat sat", "the cat sat on the mat", "The mat",
                                              "sat on the cat", "cat"};
  const std::string jsonl = temp_dir() + "/corpus.jsonl", lines = temp_dir() + "/corpus.txt";
  {
    std::ofstream j(jsonl), t(lines);
    for (size_t i = 0; i < sentences.size(); ++i) {
      j << (i % 2 ? json({{"text", sentences[i]}, {"id", i}}) : json(sentences[i])).dump() << "\n";
      if (i == 2) j << "\n";  // a blank line is skipped
      t << sentences[i] << "\r\n";
    }
  }
  std::vector<std::vector<double>> per;
  for (const std::string& s : sentences) {
    const test::Run r = run_attn({"run", "--checkpoint", model("tiny-llama"), "--text", s,
                                  "--layer", "all", "--summary", "previous", "-f", "json"});
    ASSERT_EQ(r.code, 0) << r.err;
    std::vector<double> flat;
    const json doc = json::parse(r.out);
    for (const json& row : doc["values"]) {
      for (const json& v : row) flat.push_back(v.is_number() ? v.get<double>() : std::nan(""));
    }
    per.push_back(flat);
  }
  const size_t cells = per[0].size();
  for (const std::vector<std::string>& how :
       {std::vector<std::string>{"--texts", jsonl},
        std::vector<std::string>{"--text-file", lines, "--each-line"}}) {
    std::vector<std::string> args = {"run",      "--checkpoint", model("tiny-llama"),
                                     "--layer",  "all",          "--summary",
                                     "previous", "-f",           "json"};
    args.insert(args.end(), how.begin(), how.end());
    const test::Run r = run_attn(args);
    ASSERT_EQ(r.code, 0) << r.err;
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["sentences"], 5);
    std::vector<double> mean, sd;
    for (const char* key : {"values", "sd"}) {
      for (const json& row : doc[key]) {
        for (const json& v : row) (key[0] == 'v' ? mean : sd).push_back(v.get<double>());
      }
    }
    ASSERT_EQ(mean.size(), cells);
    for (size_t c = 0; c < cells; ++c) {
      double m = 0, n = 0;
      for (const auto& p : per) {
        if (std::isnan(p[c])) continue;
        m += p[c];
        ++n;
      }
      m /= n;
      double v = 0;
      for (const auto& p : per) {
        if (!std::isnan(p[c])) v += (p[c] - m) * (p[c] - m);
      }
      EXPECT_NEAR(mean[c], m, 1e-9) << how[0] << " cell " << c;
      EXPECT_NEAR(sd[c], std::sqrt(v / n), 1e-9) << how[0] << " cell " << c;
    }
    // "cat" alone is two tokens with <s>: every sentence counts.
    EXPECT_FALSE(doc.contains("counts"));
  }
}

TEST(Corpus, BadLinesAndAnEmptyCorpusAreRefused) {
  auto run = [](const std::string& name, const std::string& text) {
    const std::string path = temp_dir() + "/" + name;
    std::ofstream(path) << text;
    return run_attn({"run", "--checkpoint", model("tiny-llama"), "--texts", path, "--layer", "all",
                     "--summary", "first"});
  };
  const std::string d = temp_dir() + "/";
  const std::pair<test::Run, std::string> cases[] = {
      {run("number.jsonl", "\"ok\"\n12\n"),
       "attn: error: " + d +
           "number.jsonl:2: expected a JSON string or an object with a string \"text\", got 12\n"},
      {run("no_text.jsonl", "\"ok\"\n\n{\"txt\": \"x\"}\n"),
       "attn: error: " + d +
           "no_text.jsonl:3: expected a JSON string or an object with a string \"text\", got an "
           "object without \"text\"\n"},
      {run("text_number.jsonl", "{\"text\": 3}\n"),
       "attn: error: " + d +
           "text_number.jsonl:1: expected a JSON string or an object with a string \"text\", got "
           "an object whose \"text\" is 3\n"},
      {run("syntax.jsonl", "\"ok\"\n{\"text\": \"a\",}\n"),
       "attn: error: " + d + "syntax.jsonl:2:13: trailing comma before '}'\n"},
      {run("empty.jsonl", "\n  \n"),
       "attn: error: " + d +
           "empty.jsonl: no sentences, an empty corpus (a JSON string or an object with a string "
           "\"text\" a line)\n"},
  };
  for (const auto& [r, want] : cases) {
    EXPECT_EQ(r.err, want);
    EXPECT_TRUE(r.out.empty());
  }
  EXPECT_EQ(cases[0].first.code, 3);
  EXPECT_EQ(cases[4].first.code, 2);
  const test::Run r = run_attn({"run", "--checkpoint", model("tiny-llama"), "--texts",
                                d + "number.jsonl", "--layer", "all"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --texts gives the mean of a head summary over the sentences: give "
            "--summary STAT\n");
}

TEST(RolloutAndValueNorms, WrittenAsStacksMatchTheReference) {
  const std::string out = temp_dir() + "/rollout.npy";
  for (const std::string fusion : {"mean", "max", "min"}) {
    const test::Run r =
        run_attn({"run", "--checkpoint", model("tiny-qwen2"), "--ids", ids_of("tiny-qwen2"),
                  "--layer", "all", "--of", "rollout", "--rollout-fusion", fusion, "-o", out});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_LT(test::max_diff(test::load_npy(out),
                             test::load_npy(ref_path("rollout_tiny-qwen2_" + fusion + ".npy"))),
              1e-12)
        << fusion;
  }
  const std::string norms = temp_dir() + "/norms.npy", png = temp_dir() + "/norms.png";
  const test::Run r = run_attn({"run", "--checkpoint", model("tiny-gpt2-ninner"), "--ids",
                                ids_of("tiny-gpt2-ninner"), "--layer", "all", "--of", "value-norm",
                                "-o", norms, "--heatmap", png});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LT(
      max_rel(test::load_npy(norms), test::load_npy(ref_path("value_norm_tiny-gpt2-ninner.npy"))),
      1e-9);
  // Drawn and read back as any stack is.
  const test::Run s = run_attn({"heatmap", norms, "--layer", "1", "-o", png});
  EXPECT_EQ(s.code, 0) << s.err;
}

TEST(RolloutAndValueNorms, NeedAStackOfEveryLayer) {
  test::Run r =
      run_attn({"run", "--checkpoint", model("tiny-qwen2"), "--ids", "2,17", "--of", "rollout"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --of rollout is made of every layer's weights, a stack a run of one "
            "layer does not have: give --checkpoint DIR --layer all with --text or --ids\n");
  r = run_attn({"run", "--example", "sweet", "--of", "value-norm"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --of value-norm is made of every layer's weights, a stack a run of one "
            "layer does not have: give --checkpoint DIR --layer all with --text or --ids\n");
  r = run_attn({"run", "--checkpoint", model("tiny-qwen2"), "--ids", "2,17", "--layer", "all",
                "--rollout-fusion", "max", "-f", "json"});
  EXPECT_EQ(r.err, "attn: error: --rollout-fusion goes with --of rollout\n");
}

TEST(Predictions, TopTokensTheLogitsAndTheLens) {
  const json& want = refs()["predictions"];
  const std::string logits = temp_dir() + "/logits.npy";
  test::Run r =
      run_attn({"run", "--checkpoint", model("tiny-llama"), "--ids", "1,17,29,8,33,12,24",
                "--layer", "all", "--predict", "3", "-f", "json", "--logits-out", logits});
  ASSERT_EQ(r.code, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_FALSE(doc.contains("weights"));  // -w adds the stack
  ASSERT_EQ(doc["predictions"].size(), 7u);
  for (size_t i = 0; i < 7; ++i) {
    for (size_t k = 0; k < 3; ++k) {
      const json& got = doc["predictions"][i][k];
      EXPECT_EQ(got["id"], want["top_ids"][i][k]);
      EXPECT_EQ(got["token"], want["top_tokens"][i][k]);
      EXPECT_NEAR(got["p"].get<double>(), want["p"][i][k].get<double>(), 1e-9);
    }
  }
  // float32, [1][q][vocab]
  EXPECT_EQ(test::read_text(logits).substr(0, 6), "\x93NUMPY");
  EXPECT_NE(test::read_text(logits).find("'descr': '<f4'"), std::string::npos);
  EXPECT_LT(max_rel(test::load_npy(logits), test::load_npy(ref_path("logits_tiny-llama.npy"))),
            1e-6);
  // The lens: its last state is the predictions; its figure names the tokens.
  const std::string svg = temp_dir() + "/lens.svg";
  r = run_attn({"run", "--checkpoint", model("tiny-llama"), "--ids", "1,17,29,8,33,12,24",
                "--layer", "all", "--logit-lens", "3", "-f", "json", "-o",
                temp_dir() + "/lens.json", "--heatmap", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  const json lens = json::parse(test::read_text(temp_dir() + "/lens.json"));
  ASSERT_EQ(lens["logit_lens"].size(), 3u);
  EXPECT_EQ(lens["logit_lens_states"].back(), "layer 1");
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(lens["logit_lens"][2][i][0]["id"], want["top_ids"][i][0]);
  }
  const std::string figure = test::read_text(svg);
  EXPECT_NE(figure.find("logit lens: the most likely next token from each hidden state"),
            std::string::npos);
  // Each cell writes its most likely token: "mat" under "the" from the embeddings on.
  std::vector<std::string> cells;
  for (size_t at = figure.find("class=\"value\""); at != std::string::npos;
       at = figure.find("class=\"value\"", at + 1)) {
    const size_t open = figure.find('>', at) + 1;
    cells.push_back(figure.substr(open, figure.find('<', open) - open));
  }
  ASSERT_EQ(cells.size(), 21u);
  EXPECT_EQ(cells[5], "mat");
  EXPECT_EQ(cells[12], "mat");
}

TEST(Predictions, BadRequestsAreRefused) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"run", "--checkpoint", model("tiny-bert"), "--ids", "2,5,7", "--layer", "all", "--predict",
        "2"},
       "attn: error: " + model("tiny-bert") +
           ": bert has no unembedding (no lm_head, and no embedding tied to one), so no "
           "predictions: it is read as BertModel, without a language-model head\n"},
      {{"run", "--checkpoint", model("tiny-llama"), "--ids", "1,17", "--layer", "all", "--predict",
        "41"},
       "attn: error: --predict 41: the vocabulary has 40 tokens; K is 1 to 40\n"},
      {{"run", "--checkpoint", model("tiny-llama"), "--ids", "1,17", "--layer", "all",
        "--logit-lens", "41"},
       "attn: error: --logit-lens 41: the vocabulary has 40 tokens; K is 1 to 40\n"},
      {{"run", "--checkpoint", model("tiny-llama"), "--ids", "1,17", "--predict", "2"},
       "attn: error: --predict runs the whole model: give --layer all (with --checkpoint DIR and "
       "--text or --ids)\n"},
      {{"run", "--checkpoint", model("tiny-llama"), "--ids", "1,17", "--layer", "all", "--predict",
        "2", "-o", temp_dir() + "/p.npy"},
       "attn: error: --predict adds to the JSON (-f json) or the table, not to " + temp_dir() +
           "/p.npy; --logits-out FILE.npy writes the logits\n"},
  };
  for (const auto& [args, want] : cases) {
    const test::Run r = run_attn(args);
    EXPECT_EQ(r.code, 2) << want;
    EXPECT_EQ(r.err, want);
  }
}

TEST(DiffStacks, PerHeadOnTheTokensBothSentencesHave) {
  const std::string a = ref_path("diff_a.json"), b = ref_path("diff_b.json");
  const std::string png = temp_dir() + "/js.png";
  test::Run r = run_attn({"diff", a, b, "-f", "json", "--heatmap", png});
  ASSERT_EQ(r.code, 0) << r.err;
  const json doc = json::parse(r.out);
  expect_grid(doc["per_head"]["max_abs"], refs()["diff"]["max_abs"], 1e-9, "max_abs");
  expect_grid(doc["per_head"]["js"], refs()["diff"]["js"], 1e-9, "js");
  EXPECT_EQ(doc["tokens_compared"], refs()["diff"]["pairs"].size());
  EXPECT_EQ(doc["left_out"]["a"].dump(), R"([{"index":4,"token":"t33"}])");
  EXPECT_EQ(doc["left_out"]["b"].size(), 3u);
  EXPECT_EQ(test::read_text(png).substr(1, 3), "PNG");
  r = run_attn({"diff", a, b, "--tolerance", "0.5"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("left out of A: t33 (4)\n"), std::string::npos) << r.out;
  r = run_attn({"diff", a, b, "--head", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "attn: error: --head 1: attn diff of two stacks compares every head; --layer N --head "
            "H compares one\n");
  // A stack of another length without tokens cannot be aligned.
  r = run_attn({"diff", model("tiny-qwen2") + "/attentions.npy", b});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "attn: error: A (" + model("tiny-qwen2") + "/attentions.npy) and B (" + b +
                       "): stacks of [3][1][4][7][7] and [3][1][4][9][9] are compared on the "
                       "tokens they share, which needs the tokens of both: write each with attn "
                       "run --layer all -f json (its labels)\n");
}

}  // namespace
}  // namespace attn
