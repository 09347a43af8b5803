// Problem building: every validation message, exactly (docs/spec.md: one
// line naming the place, both shapes for shape errors).
#include "attn/problem.h"

#include <gtest/gtest.h>

#include <utility>

#include "test_util.h"

namespace attn {
namespace {

using test::problem_error;

struct Case {
  const char* doc;
  const char* message;
};

class ProblemErrors : public ::testing::TestWithParam<Case> {};

TEST_P(ProblemErrors, ExactMessage) {
  EXPECT_EQ(problem_error(GetParam().doc), GetParam().message) << GetParam().doc;
}

const Case kCases[] = {
    {R"({"X": [[1,2],[3,4]], "mask": [[0,1,0]]})",
     R"(t.json: mask: shape [1][3] does not match the attention scores [2][2] (len_q 2, len_k 2); expected [2][2], [1][2][2] (per head) or [1][1][2][2])"},
    {R"({"X": [[1,2],[3,4]], "key_padding_mask": [0,1,0]})",
     R"(t.json: key_padding_mask: shape [3] does not match the 2 keys; expected [2])"},
    {R"({"X": [[[1,2],[3,4]]], "valid_lens": [1,2,3]})",
     R"(t.json: valid_lens: shape [3] does not fit batched input; expected [1] (one length per batch) or [1][2] (per batch and query))"},
    {R"({"X": [[1,2],[3,4]], "valid_lens": [-1, 2]})",
     R"(t.json: valid_lens[0]: expected a non-negative integer, got -1)"},
    {R"({"X": [[1,2],[3,4]], "valid_lens": [1.5, 2]})",
     R"(t.json: valid_lens[0]: expected a non-negative integer, got 1.5)"},
    {R"({"X": [[1,2,3],[3,4,5]], "heads": 2})",
     R"(t.json: heads 2 does not divide the query width 3)"},
    {R"({"X": [[1,2],[3,4]], "heads": 0})",
     R"(t.json: heads: must be a positive integer up to 1000000, got 0)"},
    {R"({"X": [[1,2],[3,4]], "heads": "2"})", R"(t.json: heads: expected a number, got "2")"},
    {R"({"X": [[1,2],[3,4]], "scale": -1})",
     R"(t.json: scale: must be a name or a finite number > 0, got -1)"},
    {R"({"X": [[1,2],[3,4]], "scale": "sqrt"})",
     R"(t.json: scale: 'sqrt' is not one of sqrt_dk, none, dk, cosine, norm, long_seq; did you mean 'sqrt_dk'? (or a number))"},
    {R"({"X": [[1,2],[3,4]], "temperature": 0})",
     R"(t.json: temperature: must be a finite number > 0, got 0)"},
    {R"({"X": [[1,2],[3,4]], "dropout": 1})", R"(t.json: dropout: must be in [0, 1), got 1)"},
    {R"({"X": [[1,2],[3,4]], "mask_fill": "inf"})",
     R"(t.json: mask_fill: must be a number or "-inf", got inf)"},
    {R"({"X": [[1,2],[3,4]], "attn_bias": [[0,"inf"],[0,0]]})",
     R"(t.json: attn_bias[0][1]: +inf is not allowed; attn_bias holds numbers and "-inf")"},
    {R"({"X": [[1,2],[3,"nan"]]})",
     R"(t.json: X[1][1]: non-finite value "nan" is not allowed here)"},
    {R"({"X": [[1,2],[3,"abc"]]})", R"(t.json: X[1][1]: expected a number, got "abc")"},
    {R"({"X": [[1,2],[3]]})",
     R"(t.json: X[1]: has 1 element where X[0] has 2 (ragged array; expected shape [2][2]))"},
    {R"({"X": [[[[[1]]]]]})",
     R"(t.json: X: array of rank 5 (shape [1][1][1][1][1]); at most rank 4 is accepted here)"},
    {R"({"X": []})",
     R"(t.json: X: empty (shape [0]); X needs at least one position and one feature)"},
    {R"({"X": [[]]})",
     R"(t.json: X: empty (shape [1][0]); X needs at least one position and one feature)"},
    {R"({"X": 5})", R"(t.json: X: expected [len][dim] or [batch][len][dim], got a single number)"},
    {R"({"Q": [[1,2]], "K": [[1,2,3]]})",
     R"(t.json: K: key width 3 (K has shape [1][3]) does not match the query width 2 (Q has shape [1][2]); variant scaled_dot needs equal widths)"},
    {R"({"Q": [[1,2]], "K": [[1,2]], "V": [[1],[2]]})",
     R"(t.json: V: has 2 positions (shape [2][1]) but K has 1 (shape [1][2]); keys and values come in pairs)"},
    {R"({"X": [[1,2]], "Y": [[[1,2]]]})",
     R"(t.json: Y: has rank 3 (shape [1][1][2]) but X has rank 2 (shape [1][2]))"},
    {R"({"X": [[1,2]], "Q": [[1,2]]})",
     R"(t.json: mode qkv needs Q and K (V defaults to K); X is the input of modes self and cross)"},
    {R"({})",
     R"(t.json: no input: give X (self attention), X and Y (cross attention), or Q, K and V)"},
    {R"([])", R"(t.json: X: empty (shape [0]); X needs at least one position and one feature)"},
    {R"({"X": [[1,2]], "params": {"Wq": [[1]]}})",
     R"(t.json: params: unknown key "Wq"; did you mean "W_q"?)"},
    {R"({"X": [[1,2]], "params": {"W_q": [[1,0],[0,1]], "b_q": [1,2,3]}})",
     R"(t.json: params.b_q: length 3 (shape [3]) does not match params.W_q output width 2 (shape [2][2]))"},
    {R"({"X": [[1,2]], "params": {"b_q": [1,2]}})",
     R"(t.json: params.b_q: params.b_q needs params.W_q (a bias belongs to a projection))"},
    {R"({"X": [[1,2]], "params": {"W_o": [[1,0,0],[0,1,0],[0,0,1]]}})",
     R"(t.json: params.W_o: shape [3][3] does not match the concatenated head output width 2 (heads 1 x value width 2))"},
    {R"({"X": [[1,2]], "labels": ["a","b"]})", R"(t.json: labels: 2 labels for 1 query)"},
    {R"({"X": [[1,2]], "Y": [[1,2],[3,4]], "labels": ["a"]})",
     R"(t.json: labels: one list labels both queries and keys, but there are 1 query and 2 keys; write {"queries": [...], "keys": [...]})"},
    {R"({"X": [[1,2]], "causal": 1})",
     R"(t.json: causal: expected true, false, "top_left" or "bottom_right", got 1)"},
    {R"({"X": [[1,2]], "mask": [[2]]})",
     R"(t.json: mask[0][0]: mask cells must be true/false or 0/1, got 2)"},
    {R"({"X": [[1,2]], "mask": [["yes"]]})",
     R"(t.json: mask[0][0]: mask cells must be true/false or 0/1, got "yes")"},
    {R"({"X": [[1,2]], "mode": "cross"})", R"(t.json: mode cross needs Y (the context sequence))"},
    {R"({"X": [[1,2]], "mode": "qkv"})",
     R"(t.json: mode qkv needs Q and K (V defaults to K); X is the input of modes self and cross)"},
    {R"({"X": [[1,2]], "scale": "cosine", "scale_at": "output"})",
     R"(t.json: scale_at "output" needs a scalar scale factor; scale "cosine" depends on the data)"},
    {R"({"X": [[1,2]], "foo": 1})",
     R"(t.json: unknown key "foo" (closest accepted key: "X"); accepted keys: X, Y, Q, K, V, params, mask, key_padding_mask, valid_lens, attn_bias, mode, variant, heads, scale, temperature, scale_at, causal, q_offset, k_offset, mask_convention, mask_fill, fully_masked, dropout, seed, params_layout, kv_heads, rope, alibi, window, softcap, qk_norm, sinks, labels, title, description, source, expected)"},
    {R"({"X": [[1,2]], "expected": {"output": [[1,2]], "tol": 1}})",
     R"(t.json: expected: unknown key "tol"; did you mean "tolerance"?)"},
};

INSTANTIATE_TEST_SUITE_P(All, ProblemErrors, ::testing::ValuesIn(kCases));

TEST(Problem, DefaultsFollowTheVariant) {
  Problem p = test::problem(R"({"X": [[1, 2]]})");
  EXPECT_EQ(p.mode, Mode::kSelf);
  EXPECT_EQ(p.scale.kind, ScaleKind::kSqrtDk);
  EXPECT_EQ(test::problem(R"({"X": [[1, 2]], "variant": "dot"})").scale.kind, ScaleKind::kNone);
  EXPECT_EQ(test::problem(R"({"X": [[1, 2]], "Y": [[1, 2]]})").mode, Mode::kCross);
  EXPECT_EQ(test::problem(R"({"Q": [[1, 2]], "K": [[1, 2]]})").mode, Mode::kQkv);
}

TEST(Problem, AGivenUpDocumentBuildsTheSameProblem) {
  // build_problem(std::move(doc)) takes X, Y, Q, K and V without copying
  // them; the problem is the one a kept document builds, in every mode,
  // with V defaulting to K and X serving as keys and values.
  for (const char* text :
       {R"({"X": [[1, 2], [3, 4], [5, 6]]})", R"({"X": [[1, 2], [3, 4]], "Y": [[5, 6], [7, 8]]})",
        R"({"Q": [[1, 2]], "K": [[3, 4], [5, 6]]})",
        R"({"Q": [[[[1, 2]]]], "K": [[[[3, 4], [5, 6]]]], "V": [[[[7], [8]]]]})",
        R"({"X": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "causal": true})"}) {
    const InputDocument kept = read_document(text, "t.json");
    InputDocument given = kept;
    const Problem a = build_problem(kept);
    const Problem b = build_problem(std::move(given));
    for (const auto& [x, y] : {std::pair{&a.query_in, &b.query_in},
                               {&a.key_in, &b.key_in},
                               {&a.value_in, &b.value_in}}) {
      EXPECT_EQ(x->shape(), y->shape()) << text;
      EXPECT_EQ(x->values(), y->values()) << text;
      EXPECT_EQ(x->size(), shape_size(x->shape())) << text;
    }
    EXPECT_EQ(a.query_shape, b.query_shape) << text;
    EXPECT_EQ(a.value_shape, b.value_shape) << text;
    EXPECT_EQ(a.len_k, b.len_k) << text;
  }
  // The given-up document's errors name the same places and shapes.
  InputDocument bad = read_document(R"({"Q": [[1, 2]], "K": [[3, 4]], "V": [[5], [6]]})", "t.json");
  EXPECT_EQ(test::error_of([&] { build_problem(std::move(bad)); }),
            "t.json: V: has 2 positions (shape [2][1]) but K has 1 (shape [1][2]); keys and "
            "values come in pairs");
}

TEST(Problem, PerHeadWeightsAreConcatenatedInHeadOrder) {
  Problem p = test::problem(R"({"X": [[1, 2]], "heads": 2,
    "params": {"W_q": [[[1], [2]], [[3], [4]]], "b_q": [[5], [6]]}})");
  ASSERT_TRUE(p.params.W_q.has_value());
  EXPECT_EQ(p.params.W_q->rows(), 2);
  EXPECT_EQ(p.params.W_q->cols(), 2);
  EXPECT_EQ((*p.params.W_q)(0, 0), 1);
  EXPECT_EQ((*p.params.W_q)(1, 0), 2);
  EXPECT_EQ((*p.params.W_q)(0, 1), 3);
  EXPECT_EQ((*p.params.W_q)(1, 1), 4);
  EXPECT_EQ((*p.params.b_q)(1), 6);
}

TEST(Problem, KeepConventionIsAppliedOnce) {
  Problem p =
      test::problem(R"({"X": [[1], [2]], "mask": [[1, 0], [1, 1]], "mask_convention": "keep"})");
  EXPECT_EQ(p.masks.mask.values(), (Values<uint8_t>{0, 1, 0, 0}));
}

TEST(Problem, ValidLensAreSpreadToEveryQuery) {
  Problem p = test::problem(R"({"X": [[[1], [2]], [[3], [4]]], "valid_lens": [1, 2]})");
  EXPECT_EQ(p.masks.valid_lens, (std::vector<int64_t>{1, 1, 2, 2}));
}

}  // namespace
}  // namespace attn
