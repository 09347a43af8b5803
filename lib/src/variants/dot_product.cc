// scaled_dot and dot: S = Q·Kᵀ (docs/spec.md §2), through the projections
// W_q, W_k, W_v with their biases, heads, and the output projection.
#include "variants/dot_product.h"

#include <algorithm>
#include <cmath>

#include "problem/params_context.h"
#include "trace/formula.h"

namespace attn::detail::dot_product {

namespace {

using namespace formula;

void resolve_params(ParamsContext& c) {
  c.project_qkv();
  c.heads_and_output_projection();
}

template <class T>
HeadScores<T> scores(const Problem&, const Mat<T>& q, const Mat<T>& k) {
  HeadScores<T> r;
  r.scores.resize(q.rows(), k.rows());
  r.scores.noalias() = q * k.transpose();
  return r;
}

double score_bound(const Problem& p, double nq, double nk) {
  double s = nq * nk;  // the raw product comes first, whatever the scaling
  if (p.scale_at == ScaleAt::kScores) {
    s *= std::max(1.0, std::abs(scale_factor(p))) / std::min(1.0, p.temperature);
  }
  return s;
}

StepWords score_words(const TraceStep& s) {
  const Math q = s.facts.cosine ? hat("Q") : Math("Q"), k = s.facts.cosine ? hat("K") : Math("K");
  return words("Scores " + (q + kDot + k + kTop).text,
               "S = " + at_head(q, s.head) + kDot + at_head(k, s.head) + kTop);
}

std::string pytorch_scores(const Problem&, const PyParams&) {
  return "s = q @ k.transpose(-2, -1)\n";
}

}  // namespace

VariantUnit unit(Variant id, std::string_view name, ScaleKind default_scale, bool torch_mha) {
  VariantUnit u;
  u.id = id;
  u.name = name;
  u.default_scale = default_scale;
  u.fast_kernel = true;
  u.torch_mha = torch_mha;
  u.params = {"W_q", "W_k", "W_v", "b_q", "b_k", "b_v", "W_o", "b_o", "q_norm", "k_norm"};
  u.params_note = "it takes W_q, W_k, W_v, b_q, b_k, b_v, W_o, b_o, q_norm, k_norm";
  u.resolve_params = resolve_params;
  u.scores_f64 = scores<double>;
  u.scores_f32 = scores<float>;
  u.score_bound = score_bound;
  u.trace_terms = no_term_matrices;
  u.working_memory = no_term_matrices;
  u.score_words = score_words;
  u.pytorch_scores = pytorch_scores;
  return u;
}

}  // namespace attn::detail::dot_product
