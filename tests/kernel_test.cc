// The fast kernel against the step-by-step reference path: output only and
// with the weights kept, it must agree with it within floating-point
// reassociation (1e-12 relative in float64) on every golden case and on
// random problems with every mask, scaling and odd size; and results must
// not depend on the thread count.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "attn/attention.h"
#include "attn/document.h"
#include "attn/error.h"
#include "attn/limits.h"
#include "attn/problem.h"
#include "test_util.h"

namespace attn {
namespace {

void expect_close(const Tensor<double>& got, const Tensor<double>& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isnan(w) || std::isnan(g)) {
      EXPECT_TRUE(std::isnan(w) && std::isnan(g)) << what << " at " << i;
      continue;
    }
    EXPECT_LE(std::fabs(g - w), tol * std::max(1.0, std::fabs(w)))
        << what << " at " << i << ": " << g << " vs " << w;
  }
}

Result run(const Problem& p, bool weights, bool reference, DType dtype = DType::kF64,
           int threads = 1) {
  ComputeRequest req;
  req.weights = weights;
  req.reference = reference;
  req.dtype = dtype;
  req.threads = threads;
  return compute(p, req);
}

void compare_paths(const Problem& p, const std::string& what, double tol = 1e-12) {
  const Result ref = run(p, true, true);
  const Result stream = run(p, false, false);
  const Result rows = run(p, true, false);
  expect_close(stream.output, ref.output, tol, what + " streaming output");
  expect_close(rows.output, ref.output, tol, what + " rows output");
  expect_close(*rows.weights, *ref.weights, tol, what + " rows weights");
  EXPECT_EQ(stream.fully_masked_rows.size(), ref.fully_masked_rows.size()) << what;
}

int compare_golden_dir(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  EXPECT_NE(d, nullptr) << dir;
  if (!d) return 0;
  int n = 0;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() < 6 || name.substr(name.size() - 5) != ".json") continue;
    const std::string path = dir + "/" + name;
    const Problem p = build_problem(read_document(test::read_text(path), path));
    if (p.variant != Variant::kScaledDot && p.variant != Variant::kDot) continue;
    compare_paths(p, name);
    ++n;
  }
  closedir(d);
  return n;
}

// GQA, RoPE, ALiBi, window, softcap and sinks through both kernels.
TEST(Kernel, AgreesWithReferenceOnEveryModernGoldenCase) {
  EXPECT_GE(compare_golden_dir(test::source_path("tests/golden/modern")), 30);
}

TEST(Kernel, AgreesWithReferenceOnEveryGoldenCase) {
  EXPECT_GT(compare_golden_dir(test::source_path("tests/golden/cases")), 100);
}

// A random problem as a JSON document.
// `kv_heads` > 0 gives K and V that many heads (grouped-query attention).
std::string random_doc(std::mt19937_64& g, int64_t lq, int64_t lk, int64_t d, int64_t dv,
                       int64_t heads, const std::string& extra, int64_t kv_heads = 0) {
  std::normal_distribution<double> nd(0, 1);
  auto matrix = [&](int64_t r, int64_t c) {
    std::string s = "[";
    for (int64_t i = 0; i < r; ++i) {
      s += i ? ",[" : "[";
      for (int64_t j = 0; j < c; ++j) s += (j ? "," : "") + std::to_string(nd(g));
      s += "]";
    }
    return s + "]";
  };
  const int64_t kv = kv_heads > 0 ? kv_heads : heads;
  return "{\"Q\": " + matrix(lq, d * heads) + ", \"K\": " + matrix(lk, d * kv) +
         ", \"V\": " + matrix(lk, dv * kv) + ", \"heads\": " + std::to_string(heads) +
         (kv_heads > 0 ? ", \"kv_heads\": " + std::to_string(kv_heads) : std::string()) +
         (extra.empty() ? "" : ", " + extra) + "}";
}

std::string bool_matrix(std::mt19937_64& g, int64_t r, int64_t c, double p) {
  std::bernoulli_distribution bd(p);
  std::string s = "[";
  for (int64_t i = 0; i < r; ++i) {
    s += i ? ",[" : "[";
    for (int64_t j = 0; j < c; ++j) s += std::string(j ? "," : "") + (bd(g) ? "1" : "0");
    s += "]";
  }
  return s + "]";
}

TEST(Kernel, AgreesWithReferenceOnOddSizesMasksAndScalings) {
  std::mt19937_64 g(7);
  // Sizes around the block and panel sizes, odd head widths.
  const int64_t lq = 131, lk = 203, d = 19, dv = 13, heads = 2;
  std::vector<std::string> extras = {
      "",
      "\"causal\": true",
      "\"valid_lens\": " + std::to_string(77),
      "\"key_padding_mask\": " + bool_matrix(g, 1, lk, 0.3),
      "\"mask\": " + bool_matrix(g, lq, lk, 0.5),
      "\"mask\": " + bool_matrix(g, lq, lk, 0.97) + ", \"fully_masked\": \"uniform\"",
      "\"mask\": " + bool_matrix(g, lq, lk, 0.97) + ", \"fully_masked\": \"nan\"",
      "\"mask\": " + bool_matrix(g, lq, lk, 0.97) + ", \"mask_fill\": -1e6",
      "\"causal\": true, \"mask_fill\": -5",
      "\"scale\": \"norm\"",
      "\"scale\": \"cosine\"",
      "\"scale\": \"long_seq\", \"temperature\": 0.7",
      "\"scale\": 3.5",
      "\"scale_at\": \"output\", \"temperature\": 2",
      "\"dropout\": 0.3, \"seed\": 11",
      "\"causal\": true, \"dropout\": 0.5, \"seed\": 3",
  };
  // A bias with -inf cells.
  {
    std::uniform_real_distribution<double> u(-3, 3);
    std::string s = "[";
    for (int64_t i = 0; i < lq; ++i) {
      s += i ? ",[" : "[";
      for (int64_t j = 0; j < lk; ++j) {
        s += (j ? "," : "") + ((i + j) % 17 == 0 ? std::string("\"-inf\"") : std::to_string(u(g)));
      }
      s += "]";
    }
    extras.push_back("\"attn_bias\": " + s + "]");
  }
  for (const std::string& extra : extras) {
    const Problem p = test::problem(random_doc(g, lq, lk, d, dv, heads, extra));
    compare_paths(p, extra.substr(0, 40));
  }
}

// Current models' settings at sizes around the block and panel sizes:
// windows that let whole tiles be skipped on both sides, ALiBi and softcap
// inside the tiles, sinks (with fully masked rows), RoPE on odd widths, and
// grouped K/V heads shared by several query heads.
TEST(Kernel, AgreesWithReferenceOnModernSettings) {
  std::mt19937_64 g(17);
  const int64_t lq = 131, lk = 203, d = 19, dv = 13, heads = 4;
  const std::vector<std::pair<int64_t, std::string>> cases = {
      {0, "\"window\": [17, 5]"},
      {0, "\"window\": [40, 0], \"causal\": true"},
      {0, "\"window\": [-1, 3]"},
      {0, "\"window\": 9, \"mask_fill\": -1e6"},
      {0, "\"alibi\": true"},
      {0, "\"alibi\": [0.5, 0.1, 0.01, 0], \"attn_bias\": " + bool_matrix(g, lq, lk, 0.5)},
      {0, "\"softcap\": 1.5"},
      {0, "\"softcap\": 0.7, \"scale\": \"norm\""},
      {0, "\"sinks\": [0.5, -0.3, 2, 0]"},
      {0, "\"sinks\": 1, \"mask\": " + bool_matrix(g, lq, lk, 0.97)},
      {0, "\"sinks\": 3, \"window\": [5, 5], \"dropout\": 0.2, \"seed\": 2"},
      {0, "\"rope\": {\"dims\": 18, \"theta\": 500}"},
      {0,
       "\"rope\": {\"layout\": \"interleaved\", \"dims\": 2, \"q_offset\": 70}, "
       "\"scale\": \"cosine\""},
      {2, ""},
      {1, "\"causal\": true"},
      {2, "\"rope\": {\"dims\": 12}, \"window\": [30, 0], \"causal\": true, \"sinks\": 0.5"},
      {1,
       "\"alibi\": true, \"softcap\": 2, \"window\": [25, 25], \"temperature\": 0.8, "
       "\"scale_at\": \"output\""},
  };
  for (const auto& [kv, extra] : cases) {
    const Problem p = test::problem(random_doc(g, lq, lk, d, dv, heads, extra, kv));
    compare_paths(p, "kv " + std::to_string(kv) + " " + extra.substr(0, 60));
  }
}

// Windows and causal masks over several key tiles (512 keys in float32,
// 256 in float64 with AVX2): each group of rows visits only the keys one of
// its rows may see, and the output keeps its bits whether the weights are
// kept (every key visited) or not.
TEST(Kernel, BandedMasksOverManyTilesKeepTheirBits) {
  std::mt19937_64 g(29);
  const int64_t lq = 700, lk = 1500, d = 8, dv = 8, heads = 2;
  for (const std::string& extra : std::vector<std::string>{
           "\"window\": [300, 0], \"causal\": true", "\"window\": [100, 100]",
           "\"causal\": true, \"alibi\": true", "\"valid_lens\": 1000, \"window\": [200, 50]",
           "\"window\": [700, 0], \"softcap\": 3, \"sinks\": 0.5",
           "\"window\": [150, 20], \"mask\": " + bool_matrix(g, lq, lk, 0.3),
           "\"window\": [90, 0], \"causal\": true, \"attn_bias\": " +
               bool_matrix(g, lq, lk, 0.5)}) {
    const Problem p = test::problem(random_doc(g, lq, lk, d, dv, heads, extra));
    compare_paths(p, extra);
    for (DType dtype : {DType::kF64, DType::kF32}) {
      const Result plain = run(p, false, false, dtype);
      const Result kept = run(p, true, false, dtype, 2);
      EXPECT_EQ(plain.output.values(), kept.output.values())
          << extra << (dtype == DType::kF32 ? " f32" : " f64");
    }
  }
}

TEST(Kernel, GroupedHeadsDoNotDependOnThreads) {
  std::mt19937_64 g(23);
  const Problem p = test::problem(
      random_doc(g, 300, 300, 8, 8, 8, "\"window\": [50, 0], \"causal\": true, \"sinks\": 1", 2));
  const Result one = run(p, false, false, DType::kF64, 1);
  const Result two = run(p, false, false, DType::kF64, 2);
  EXPECT_EQ(one.output.values(), two.output.values());
}

TEST(Kernel, KeyPaddingAndValidLensPerBatch) {
  std::mt19937_64 g(9);
  const std::string doc =
      R"({"X": [[[1, 2, 0], [0, 1, 3], [2, 2, 1], [1, 0, 0]], [[0, 1, 1], [3, 0, 1], [1, 1, 1], [0, 0, 2]]],
          "key_padding_mask": [[0, 0, 1, 1], [1, 0, 0, 0]], "valid_lens": [[1, 2, 3, 4], [4, 3, 2, 1]], "causal": true})";
  compare_paths(test::problem(doc), "batched masks");
}

TEST(Kernel, ThreadCountDoesNotChangeResults) {
  std::mt19937_64 g(5);
  const Problem p = test::problem(random_doc(g, 300, 300, 16, 16, 4, "\"causal\": true"));
  const Result one = run(p, false, false, DType::kF64, 1);
  const Result two = run(p, false, false, DType::kF64, 2);
  const Result four = run(p, false, false, DType::kF64, 4);
  EXPECT_EQ(one.output.values(), two.output.values());
  EXPECT_EQ(one.output.values(), four.output.values());
  const Result w1 = run(p, true, false, DType::kF64, 1);
  const Result w2 = run(p, true, false, DType::kF64, 2);
  EXPECT_EQ(w1.weights->values(), w2.weights->values());
}

// From 4096 keys (and enough queries) the kernels take blocks of 96
// queries instead of 48: the same agreement, still independent of threads.
TEST(Kernel, LongKeyRangesUseLargerBlocksAndStillAgree) {
  std::mt19937_64 g(13);
  const int64_t lq = 1601, lk = 4103, d = 5, dv = 3;
  for (const std::string extra : {"", "\"causal\": true, \"scale\": \"norm\"",
                                  "\"valid_lens\": 3001, \"dropout\": 0.2, \"seed\": 4"}) {
    const Problem p = test::problem(random_doc(g, lq, lk, d, dv, 1, extra));
    compare_paths(p, "long keys " + extra);
    const Result one = run(p, false, false, DType::kF64, 1);
    const Result two = run(p, false, false, DType::kF64, 2);
    EXPECT_EQ(one.output.values(), two.output.values()) << extra;
  }
}

// Without masks, biases, ALiBi or a soft cap, the AVX-512 score tiles keep
// each row's maximum over a key tile of whole panels, and the row takes
// it from there instead of a pass of its own. A valid_lens that masks
// nothing sends the same problem down the row pass: the bits must not
// move (output and weights, float32 and float64; 1600 keys are two whole
// tiles and a part in float32, four and a part in float64).
TEST(Kernel, TileMaximaKeepTheBitsOfTheRowPass) {
  std::mt19937_64 g(31);
  const int64_t lq = 200, lk = 1600, d = 64, dv = 16;
  const std::string doc = random_doc(g, lq, lk, d, dv, 2, "");
  const Problem plain = test::problem(doc);
  const Problem masked = test::problem(doc.substr(0, doc.size() - 1) +
                                       ", \"valid_lens\": " + std::to_string(lk) + "}");
  ASSERT_TRUE(masked.masks.any());
  for (DType dtype : {DType::kF64, DType::kF32}) {
    for (bool weights : {false, true}) {
      const Result a = run(plain, weights, false, dtype, 2);
      const Result b = run(masked, weights, false, dtype, 2);
      const std::string what = std::string(dtype == DType::kF32 ? "f32" : "f64") +
                               (weights ? " with weights" : " output only");
      EXPECT_EQ(std::memcmp(a.output.data(), b.output.data(),
                            static_cast<size_t>(a.output.size()) * sizeof(double)),
                0)
          << what;
      if (weights) {
        EXPECT_EQ(a.weights->values(), b.weights->values()) << what;
      }
    }
  }
  compare_paths(plain, "tile maxima");
}

TEST(Kernel, Float32IsCloseToFloat64) {
  std::mt19937_64 g(3);
  const Problem p = test::problem(random_doc(g, 100, 150, 64, 64, 1, "\"causal\": true"));
  const Result f64 = run(p, false, false);
  const Result f32 = run(p, false, false, DType::kF32);
  expect_close(f32.output, f64.output, 2e-5, "f32 output");
}

TEST(Kernel, FullyMaskedErrorIsRaised) {
  EXPECT_EQ(test::error_of([] {
              run(test::problem(
                      R"({"X": [[1], [2]], "mask": [[1, 1], [0, 0]], "fully_masked": "error"})"),
                  false, false);
            }),
            "t.json: query 0 has every key masked (fully_masked: error)");
}

TEST(Kernel, OverflowingScoresAreAnInputError) {
  // Scores of 1e400 overflow float64 in Q·Kᵀ: an error naming the score, on
  // every path, rather than rows computed from inf.
  const Problem p = test::problem(
      R"({"Q": [[1e200]], "K": [[1e200], [-1e200]], "V": [[1], [2]], "scale": "none"})");
  for (bool weights : {false, true}) {
    EXPECT_EQ(test::error_of([&] { run(p, weights, false); }),
              "t.json: the score of query 0, key 0 is inf: it overflows the float64 range; scale "
              "the inputs down");
  }
}

TEST(Kernel, OverflowingOutputIsAnInputError) {
  // Values near the top of the range: the kernels sum the weighted values
  // before dividing by the softmax's sum, so 1e308 + 1.5e308 overflows
  // there. An error naming the element, never an inf in the output, for 2D
  // inputs and for 4D ones (whose output the kernels write in place and
  // check as they go), on every path and in both dtypes.
  const std::string big = "[[1e308], [1.5e308]]", big32 = "[[3e38], [3.2e38]]";
  for (const bool four_d : {false, true}) {
    for (const DType dtype : {DType::kF64, DType::kF32}) {
      const std::string v = dtype == DType::kF64 ? big : big32;
      const std::string json = four_d
                                   ? R"({"Q": [[[[0]]]], "K": [[[[0], [0]]]], "V": [[)" + v + "]]}"
                                   : R"({"Q": [[0]], "K": [[0], [0]], "V": )" + v + "}";
      const Problem p = test::problem(json);
      for (const bool weights : {false, true}) {
        const std::string err = test::error_of([&] { run(p, weights, false, dtype); });
        EXPECT_EQ(err.rfind("t.json: output element 0 (row-major) is inf: the values", 0), 0u)
            << json << " weights " << weights << ": " << err;
      }
    }
  }
}

TEST(Kernel, GuardSeesFourDHeadsAsFloat32Rounds) {
  // Without the range check, a query past the float32 range is inf in the
  // float kernels: the guard must see it so (the 4D heads are read in
  // place from doubles), and send the problem to the reference path,
  // which gives the two infinite scores equal weights: (1 + 3) / 2.
  const Problem p = test::problem(
      R"({"Q": [[[[1e39]]]], "K": [[[[1e-30], [2e-30]]]], "V": [[[[1], [3]]]], "scale": "none"})");
  for (const bool weights : {false, true}) {
    ComputeRequest req;
    req.dtype = DType::kF32;
    req.check_range = false;
    req.weights = weights;
    EXPECT_EQ(compute(p, req).output[0], 2.0) << "weights " << weights;
  }
}

TEST(Kernel, LargeFiniteScoresAreComputed) {
  // 1e300 is finite: the max-subtracted softmax gives the exact limit.
  const Problem p = test::problem(
      R"({"Q": [[1e150]], "K": [[1e150], [-1e150]], "V": [[1], [2]], "scale": "none"})");
  EXPECT_EQ(run(p, false, false).output[0], 1.0);
  EXPECT_EQ(run(p, true, false).output[0], 1.0);
}

TEST(Kernel, CosineScoresPastTheRangeTakeTheReferencePath) {
  // Small inputs bound the raw scores far inside float32, but cosine
  // scaling makes the heads' norms 1 and the temperature takes the
  // scores to 1e39: the fast path must see that and leave the problem to
  // the reference path, not multiply its queries by inf.
  const Problem p = test::problem(
      R"({"Q": [[0.1, 0]], "K": [[0.1, 0], [0, 0.1]], "V": [[1], [2]], "scale": "cosine",
          "temperature": 1e-39})");
  const Result fast = run(p, false, false, DType::kF32);
  const Result ref = run(p, false, true, DType::kF32);
  EXPECT_EQ(fast.output.values(), ref.output.values());
  EXPECT_EQ(fast.output[0], 1.0);
}

TEST(Kernel, SoftCapKeepsTheSignOfZero) {
  // A zero query row scores +0 against every key; cap·tanh(+0/cap) is +0,
  // as the reference's std::tanh gives, in the kept scores of both dtypes.
  const Problem p = test::problem(
      R"({"Q": [[0, 0], [1, 2]], "K": [[1, 0], [0, 1]], "V": [[1], [2]], "softcap": 3})");
  for (DType dtype : {DType::kF64, DType::kF32}) {
    ComputeRequest req;
    req.scores = true;
    req.dtype = dtype;
    const Result r = compute(p, req);
    ASSERT_TRUE(r.scores.has_value());
    EXPECT_FALSE(std::signbit((*r.scores)[0]));
    EXPECT_FALSE(std::signbit((*r.scores)[1]));
  }
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

TEST(Plan, OneDecisionChoosesThePath) {
  auto problem = [](const std::string& doc) { return build_problem(read_document(doc, "p.json")); };
  const Problem dot = problem(R"({"mode": "self", "X": [[1, 0], [0, 1], [1, 1]]})");
  ComputeRequest req;
  EXPECT_EQ(plan_compute(dot, req, false), ComputePath::kStreaming);
  EXPECT_EQ(plan_compute(dot, req, true), ComputePath::kReference);  // a trace watches
  req.weights = true;
  EXPECT_EQ(plan_compute(dot, req, false), ComputePath::kWeightsKept);
  req.reference = true;
  EXPECT_EQ(plan_compute(dot, req, false), ComputePath::kReference);
  const Problem additive =
      problem(R"({"mode": "self", "variant": "additive", "X": [[1, 0], [0, 1]],)"
              R"( "params": {"W_q": [[1], [0]], "W_k": [[0], [1]], "w_v": [1]}})");
  EXPECT_EQ(plan_compute(additive, ComputeRequest{}, false), ComputePath::kReference);
  // The limits count a whole score matrix exactly when the plan keeps one.
  EXPECT_FALSE(needs_full_scores(dot, ComputeRequest{}, false));
  EXPECT_TRUE(needs_full_scores(additive, ComputeRequest{}, false));
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// The output's bits do not depend on what else is asked: the weights, the
// scores (a heatmap of them), the thread count. Every golden case the
// fast kernels take, in float64 and float32.
int expect_same_output_bits(const std::string& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    const std::string path = e.path().string();
    const Problem p = build_problem(read_document(test::read_text(path), path));
    for (DType dtype : {DType::kF64, DType::kF32}) {
      ComputeRequest plain;
      plain.dtype = dtype;
      plain.threads = 1;
      if (plan_compute(p, plain, false) != ComputePath::kStreaming) continue;
      Result base;
      try {
        base = compute(p, plain);
      } catch (const Error&) {
        continue;  // refused in this dtype (outside float32's range)
      }
      for (int variant = 0; variant < 4; ++variant) {
        ComputeRequest req = plain;
        req.weights = variant == 0 || variant == 3;
        req.scores = variant == 1;
        req.threads = variant == 2 ? 2 : variant == 3 ? 3 : 1;
        const Result r = compute(p, req);
        if (r.output.shape() != base.output.shape()) {
          ADD_FAILURE() << e.path().filename() << ": the output's shape changed";
          continue;
        }
        EXPECT_EQ(std::memcmp(r.output.data(), base.output.data(),
                              static_cast<size_t>(base.output.size()) * sizeof(double)),
                  0)
            << e.path().filename() << (dtype == DType::kF32 ? " f32" : " f64") << " request "
            << variant;
      }
      ++n;
    }
  }
  return n;
}

TEST(Kernel, OutputBitsDoNotDependOnWhatElseIsAsked) {
  EXPECT_GT(expect_same_output_bits(test::source_path("tests/golden/cases")), 100);
  EXPECT_GT(expect_same_output_bits(test::source_path("tests/golden/modern")), 30);
}

}  // namespace
}  // namespace attn
