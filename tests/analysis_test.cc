// The analyses of attn/analysis.h against float64 re-implementations of
// their definitions (tests/make_analysis_refs.py, tests/analysis/): head
// summaries of one stack and of many sentences, rollout, value norms, the
// logit lens and predictions, the per-head difference of two stacks and
// difflib's alignment; and a batch of sentences against each run alone.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/analysis.h"
#include "attn/binary_array.h"
#include "attn/checkpoint.h"
#include "attn/compare.h"
#include "attn/error.h"
#include "attn/heatmap.h"
#include "test_util.h"

namespace attn {
namespace {

using nlohmann::json;
using test::max_diff;
using test::model;

const json& refs() {
  static const json r = json::parse(test::read_text(test::source_path("tests/analysis/refs.json")));
  return r;
}

std::string ref_path(const std::string& name) {
  return test::source_path("tests/analysis/" + name);
}

// The largest |a − b| over the largest |b|, at least 1.
double relative(const Tensor<double>& a, const Tensor<double>& b) {
  double top = 1;
  for (int64_t i = 0; i < b.size(); ++i) top = std::max(top, std::abs(b[i]));
  return max_diff(a, b) / top;
}

// Layer l of a stack [layers][1][heads][q][k].
Tensor<double> layer_of(const Tensor<double>& stack, int64_t l) {
  const int64_t n = stack.size() / stack.dim(0);
  Shape s(stack.shape().begin() + 1, stack.shape().end());
  Values<double> v(stack.values().begin() + l * n, stack.values().begin() + (l + 1) * n);
  return Tensor<double>(s, std::move(v));
}

BinaryArray view_of(const Tensor<double>& t) {
  BinaryArray a;
  a.type = ElementType::kF64;
  a.shape = t.shape();
  a.data = reinterpret_cast<const unsigned char*>(t.data());
  return a;
}

void expect_grid(const std::vector<double>& got, const json& want, const std::string& what) {
  std::vector<double> flat;
  for (const json& row : want) {
    for (const json& v : row) flat.push_back(v.get<double>());
  }
  ASSERT_EQ(got.size(), flat.size()) << what;
  for (size_t i = 0; i < flat.size(); ++i) {
    if (std::isnan(flat[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " cell " << i;
    } else {
      EXPECT_NEAR(got[i], flat[i], 1e-9) << what << " cell " << i;
    }
  }
}

TEST(HeadSummaries, MatchTheReferenceForCausalNonCausalAndCachedStacks) {
  const std::pair<const char*, std::string> stacks[] = {
      {"tiny-qwen2", model("tiny-qwen2") + "/attentions.npy"},
      {"tiny-bert-f64", model("tiny-bert-f64") + "/attentions.npy"},
      {"cache", ref_path("cache_stack.npy")}};
  for (const auto& [key, path] : stacks) {
    const Tensor<double> stack = test::load_npy(path);
    for (const std::string& stat : head_stat_names()) {
      const HeadStat s = parse_head_stat(stat);
      // Layer by layer, as attn run --summary reads them.
      std::vector<double> by_layer;
      for (int64_t l = 0; l < stack.dim(0); ++l) {
        const HeadSummaries h = summarise_heads(layer_of(stack, l), s);
        by_layer.insert(by_layer.end(), h.values.begin(), h.values.end());
      }
      expect_grid(by_layer, refs()["summaries"][key][stat], std::string(key) + " " + stat);
      // The whole stack where it lies, as attn heatmap --summary reads it.
      const StackSummaries whole = stack_head_summaries(view_of(stack), StackChoice{}, s, key);
      expect_grid(whole.values, refs()["summaries"][key][stat], std::string(key) + " " + stat);
    }
  }
}

TEST(HeadSummaries, SayWhatTheyLeaveOut) {
  const Tensor<double> qwen = test::load_npy(model("tiny-qwen2") + "/attentions.npy");
  const Tensor<double> bert = test::load_npy(model("tiny-bert-f64") + "/attentions.npy");
  const Tensor<double> cache = test::load_npy(ref_path("cache_stack.npy"));
  EXPECT_EQ(summarise_heads(layer_of(qwen, 0), HeadStat::kFirst).left_out,
            "query 0, which sees a single key (causal)");
  EXPECT_EQ(summarise_heads(layer_of(qwen, 0), HeadStat::kPrevious).left_out,
            "query 0, which sees a single key (causal) and has no previous token");
  EXPECT_EQ(summarise_heads(layer_of(bert, 1), HeadStat::kPrevious).left_out,
            "query 0, which has no previous token");
  EXPECT_EQ(summarise_heads(layer_of(bert, 1), HeadStat::kSelf).left_out, "");
  const HeadSummaries c = summarise_heads(layer_of(cache, 0), HeadStat::kPrevious);
  EXPECT_EQ(c.shift, 3);
  EXPECT_TRUE(c.causal);
  EXPECT_EQ(c.left_out, "");
  EXPECT_EQ(c.rows_counted, 4);
  const HeadSummaries one =
      summarise_heads(Tensor<double>(Shape{1, 2, 1, 1}, 1.0), HeadStat::kSelf);
  EXPECT_TRUE(std::isnan(one.values[0]));
  EXPECT_EQ(one.left_out, "every query, each of which sees a single key");
}

// The mean and numpy.std over sentences of different lengths (one of a
// single token, which no head summary counts), from one batched pass.
TEST(HeadSummaries, OverSentencesMatchNumpysMeanAndStd) {
  for (const char* name : {"tiny-qwen2", "tiny-bert-f64"}) {
    const json& entry = refs()["sentences"][name];
    ForwardRequest fr;
    fr.checkpoint = model(name);
    for (const json& s : entry["ids"]) {
      const auto ids = s.get<std::vector<int64_t>>();
      fr.ids.insert(fr.ids.end(), ids.begin(), ids.end());
      fr.lengths.push_back(static_cast<int64_t>(ids.size()));
    }
    fr.keep_weights = fr.keep_hidden = false;
    for (const std::string& stat : head_stat_names()) {
      std::vector<std::vector<double>> per(fr.lengths.size());
      fr.on_sentence_layer = [&](int64_t, int64_t s, const Tensor<double>& w) {
        const HeadSummaries h = summarise_heads(w, parse_head_stat(stat));
        per[static_cast<size_t>(s)].insert(per[static_cast<size_t>(s)].end(), h.values.begin(),
                                           h.values.end());
      };
      model_attention(fr);
      SummaryMoments m(static_cast<int64_t>(per[0].size()));
      for (const auto& v : per) m.add(v);
      const std::string what = std::string(name) + " " + stat;
      expect_grid(m.mean(), entry[stat]["mean"], what + " mean");
      expect_grid(m.sd(), entry[stat]["sd"], what + " sd");
      std::vector<double> counts(m.counts().begin(), m.counts().end());
      expect_grid(counts, entry[stat]["counts"], what + " counts");
    }
  }
}

// Sentences that share their products with the weights attend within
// themselves only: each one's weights are those of its run alone, which
// are transformers' on the real tokens of a right-padded batch.
TEST(ModelAttention, ABatchOfSentencesEqualsEachSentenceAlone) {
  const std::vector<std::vector<int64_t>> sentences = {
      {3, 17, 29, 8}, {21}, {2, 17, 29, 8, 33, 12, 24}, {5, 9, 39, 11, 2, 6, 30, 31, 37}};
  for (const char* name : {"tiny-qwen2", "tiny-bert-f64", "tiny-gpt2-ninner", "tiny-phi3-long",
                           "tiny-deepseek-v3", "tiny-qwen3-moe"}) {
    for (const DType dtype : {DType::kF64, DType::kF32}) {
      ForwardRequest batch;
      batch.checkpoint = model(name);
      batch.dtype = dtype;
      batch.keep_weights = batch.keep_hidden = false;
      for (const auto& s : sentences) {
        batch.ids.insert(batch.ids.end(), s.begin(), s.end());
        batch.lengths.push_back(static_cast<int64_t>(s.size()));
      }
      std::vector<std::vector<Tensor<double>>> got(sentences.size());
      batch.on_sentence_layer = [&](int64_t, int64_t s, const Tensor<double>& w) {
        got[static_cast<size_t>(s)].push_back(w);
      };
      model_attention(batch);
      for (size_t s = 0; s < sentences.size(); ++s) {
        ForwardRequest one;
        one.checkpoint = model(name);
        one.dtype = dtype;
        one.ids = sentences[s];
        const ModelAttention alone = model_attention(one);
        ASSERT_EQ(static_cast<int64_t>(got[s].size()), alone.weights.dim(0)) << name;
        for (int64_t l = 0; l < alone.weights.dim(0); ++l) {
          EXPECT_LT(max_diff(got[s][static_cast<size_t>(l)], layer_of(alone.weights, l)),
                    dtype == DType::kF64 ? 1e-12 : 1e-5)
              << name << " sentence " << s << " layer " << l;
        }
      }
    }
  }
}

TEST(Rollout, MatchesTheReferenceForEachFusion) {
  for (const char* name : {"tiny-qwen2", "tiny-bert-f64"}) {
    const Tensor<double> stack = test::load_npy(model(name) + "/attentions.npy");
    for (const std::string& fusion : rollout_fusion_names()) {
      Rollout r(parse_rollout_fusion(fusion));
      const Tensor<double> want =
          test::load_npy(ref_path("rollout_" + std::string(name) + "_" + fusion + ".npy"));
      for (int64_t l = 0; l < stack.dim(0); ++l) {
        const Tensor<double> got = r.add_layer(layer_of(stack, l));
        EXPECT_LT(max_diff(got, layer_of(want, l)), 1e-12) << name << " " << fusion << " " << l;
      }
    }
  }
  EXPECT_EQ(test::error_of([] { parse_rollout_fusion("sum"); }),
            "--rollout-fusion: 'sum' is not one of mean, max, min");
  Rollout r(RolloutFusion::kMean);
  EXPECT_EQ(test::error_of([&] {
              r.add_layer(Tensor<double>(Shape{1, 2, 3, 4}, 0.25));
            }),
            "rollout: needs square weights [batch][heads][q][q] of self-attention, not "
            "[1][2][3][4]");
}

// GQA with a value bias (Qwen 2), GPT-2's Conv1D c_attn, DeepSeek-V3's
// latent values per head: the hook of the forward pass and value_norms.
TEST(ValueNorms, MatchTheReferenceThroughTheForwardPassesHook) {
  for (const char* name : {"tiny-qwen2", "tiny-gpt2-ninner", "tiny-deepseek-v3"}) {
    const Tensor<double> want =
        test::load_npy(ref_path("value_norm_" + std::string(name) + ".npy"));
    ForwardRequest fr;
    fr.checkpoint = model(name);
    fr.ids = nlohmann::json::parse(test::read_text(model(name) + "/ids.json"))
                 .get<std::vector<int64_t>>();
    fr.keep_weights = fr.keep_hidden = false;
    LayerValues values;
    int64_t layers = 0;
    fr.on_values = [&](const LayerValues& v) { values = v; };
    fr.on_layer = [&](int64_t n, int64_t, const Tensor<double>& w) {
      ASSERT_EQ(values.layer, n);
      EXPECT_LT(relative(value_norms(w, values), layer_of(want, n)), 1e-9) << name << " " << n;
      ++layers;
    };
    model_attention(fr);
    EXPECT_EQ(layers, want.dim(0)) << name;
  }
}

// Every hidden state through the final norm and the unembedding (Gemma 2's
// soft-cap, Granite's logits scaling, Cohere's logit scale), the last
// state's being the logits; and their most likely tokens.
TEST(LogitLens, MatchesTheReferenceAndEndsInTheLogits) {
  for (const char* name : {"tiny-qwen2", "tiny-gemma2-softcap", "tiny-granite", "tiny-cohere"}) {
    const Tensor<double> want = test::load_npy(ref_path("lens_" + std::string(name) + ".npy"));
    ForwardRequest fr;
    fr.checkpoint = model(name);
    fr.ids = nlohmann::json::parse(test::read_text(model(name) + "/ids.json"))
                 .get<std::vector<int64_t>>();
    fr.keep_weights = fr.keep_hidden = false;
    fr.keep_logits = true;
    std::vector<Tensor<double>> states;
    fr.on_lens = [&](int64_t t, int64_t n, const Tensor<double>& logits) {
      EXPECT_EQ(t, static_cast<int64_t>(states.size()));
      EXPECT_EQ(n, want.dim(0));
      states.push_back(logits);
    };
    const ModelAttention m = model_attention(fr);
    ASSERT_EQ(static_cast<int64_t>(states.size()), want.dim(0)) << name;
    const json& top = refs()["lens"][name];
    for (int64_t t = 0; t < want.dim(0); ++t) {
      EXPECT_LT(relative(states[static_cast<size_t>(t)], layer_of(want, t)), 1e-9)
          << name << " state " << t;
      const auto best = top_tokens(states[static_cast<size_t>(t)], 3, "--logit-lens");
      for (size_t i = 0; i < best.size(); ++i) {
        for (size_t k = 0; k < 3; ++k) {
          EXPECT_EQ(best[i][k].id, top["ids"][t][i][k].get<int64_t>()) << name;
          EXPECT_NEAR(best[i][k].p, top["p"][t][i][k].get<double>(), 1e-9) << name;
        }
      }
    }
    Tensor<double> last = states.back();
    last.reshape(m.logits.shape());
    EXPECT_EQ(max_diff(last, m.logits), 0) << name;
  }
}

TEST(LogitLens, AModelWithoutAnUnembeddingSaysSo) {
  ForwardRequest fr;
  fr.checkpoint = model("tiny-bert");
  fr.ids = {2, 5, 7};
  fr.on_lens = [](int64_t, int64_t, const Tensor<double>&) {};
  EXPECT_EQ(test::error_of([&] { model_attention(fr); }),
            test::model("tiny-bert") +
                ": bert has no unembedding (no lm_head, and no embedding tied to one), so no "
                "predictions: it is read as BertModel, without a language-model head");
}

TEST(Predictions, TopTokensRefuseMoreThanTheVocabulary) {
  const Tensor<double> logits(Shape{1, 2, 5}, 0.0);
  EXPECT_EQ(test::error_of([&] { top_tokens(logits, 6, "--predict"); }),
            "--predict 6: the vocabulary has 5 tokens; K is 1 to 5");
  const auto t = top_tokens(logits, 5, "--predict");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0][0].id, 0);  // equals: the lower id first
  EXPECT_EQ(t[0][4].id, 4);
  EXPECT_DOUBLE_EQ(t[1][2].p, 0.2);
}

Tensor<double> load_json_stack(const std::string& path, std::vector<std::string>* labels) {
  const json doc = json::parse(test::read_text(path));
  *labels = doc["labels"]["queries"].get<std::vector<std::string>>();
  const json& w = doc["weights"];
  Shape shape;
  for (const json* at = &w; at->is_array(); at = &(*at)[0]) shape.push_back(at->size());
  std::vector<double> flat;
  std::function<void(const json&)> walk = [&](const json& j) {
    if (j.is_array()) {
      for (const json& e : j) walk(e);
    } else {
      flat.push_back(j.get<double>());
    }
  };
  walk(w);
  return Tensor<double>(shape, Values<double>(flat.begin(), flat.end()));
}

TEST(HeadDifferences, MatchTheReferenceOnTheTokensDifflibAligns) {
  std::vector<std::string> la, lb;
  const Tensor<double> a = load_json_stack(ref_path("diff_a.json"), &la);
  const Tensor<double> b = load_json_stack(ref_path("diff_b.json"), &lb);
  const auto pairs = matching_tokens(la, lb);
  std::vector<int64_t> ta, tb;
  for (const auto& [i, j] : pairs) {
    ta.push_back(i);
    tb.push_back(j);
  }
  EXPECT_EQ(json(pairs).dump(), refs()["diff"]["pairs"].dump());
  const HeadDifferences d = compare_heads(a, b, ta, tb);
  expect_grid(d.max_abs, refs()["diff"]["max_abs"], "max_abs");
  expect_grid(d.js, refs()["diff"]["js"], "js");
  EXPECT_EQ(d.rows_compared, 3 * 4 * static_cast<int64_t>(pairs.size()));
  const Tensor<double> qwen = test::load_npy(model("tiny-qwen2") + "/attentions.npy");
  expect_grid(compare_heads(qwen, a).max_abs, refs()["diff"]["same_max_abs"], "same");
}

TEST(JsDivergence, IsZeroForEqualRowsAndLn2ForDisjointOnes) {
  const double p[] = {0.5, 0.5, 0, 0}, q[] = {0, 0, 0.25, 0.75}, r[] = {1, 1, 0, 0};
  EXPECT_NEAR(js_divergence(p, q, 4), std::log(2.0), 1e-15);
  EXPECT_EQ(js_divergence(p, r, 4), 0);  // divided by its sum
}

TEST(MatchingTokens, AreDifflibsMatchingBlocks) {
  for (const json& c : refs()["matching"]) {
    const auto a = c["a"].get<std::vector<std::string>>();
    const auto b = c["b"].get<std::vector<std::string>>();
    EXPECT_EQ(json(matching_tokens(a, b)).dump(), c["pairs"].dump()) << a.size() << " tokens";
  }
}

TEST(SummaryMoments, TopCellsTakeTheLargestOrForEntropyTheSmallest) {
  const std::vector<double> v = {0.2, std::nan(""), 0.9, 0.1, 0.9};
  EXPECT_EQ(top_cells(v, HeadStat::kPrevious, 2), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(top_cells(v, HeadStat::kEntropy, 2), (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(top_cells(v, HeadStat::kFirst, 9).size(), 4u);
}

}  // namespace
}  // namespace attn
