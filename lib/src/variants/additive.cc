// additive: Bahdanau's score S_ij = w_vᵀ·tanh(q_i·W_q + k_j·W_k), as d2l's
// AdditiveAttention; one head, W_q and W_k its own scoring parameters (no
// projections).
#include <algorithm>
#include <cmath>

#include "attn/error.h"
#include "problem/params_context.h"
#include "problem/problem_internal.h"
#include "problem/variant_unit.h"
#include "trace/formula.h"

namespace attn::detail {

namespace {

using namespace formula;

void resolve_params(ParamsContext& c) {
  Problem& p = c.p;
  if (p.heads != 1) {
    throw_input(c.doc.settings_place,
                "variant additive has one head; got heads " + std::to_string(p.heads));
  }
  if (p.four_d) throw_input(p.source, "variant additive does not take 4D Q/K/V");
  const Input* wq = c.get("W_q");
  const Input* wk = c.get("W_k");
  const Input* wv = c.get("w_v");
  if (!wq || !wk || !wv) {
    throw_input(p.source,
                "variant additive needs params.W_q [dq][h], params.W_k [dk][h] and "
                "params.w_v [h]");
  }
  Params& w = p.params;
  w.additive_W_q = c.weight(*wq, false);
  w.additive_W_k = c.weight(*wk, false);
  w.w_v = c.vec(*wv, false);
  p.d_q = last_dim(p.query_in);
  p.d_k = last_dim(p.key_in);
  p.d_v = last_dim(p.value_in);
  if (w.additive_W_q->rows() != p.d_q) {
    throw_input(wq->place, c.described(*wq) + " does not match the query width " +
                               std::to_string(p.d_q) + " (" +
                               with_shape(p.query_name, p.query_shape) + ")");
  }
  if (w.additive_W_k->rows() != p.d_k) {
    throw_input(wk->place, c.described(*wk) + " does not match the key width " +
                               std::to_string(p.d_k) + " (" + with_shape(p.key_name, p.key_shape) +
                               ")");
  }
  if (w.additive_W_k->cols() != w.additive_W_q->cols()) {
    throw_input(wk->place, c.described(*wk) + " has hidden width " +
                               std::to_string(w.additive_W_k->cols()) + " but params.W_q (" +
                               c.described(*wq) + ") has " +
                               std::to_string(w.additive_W_q->cols()));
  }
  if (w.w_v->size() != w.additive_W_q->cols()) {
    throw_input(wv->place, "length " + std::to_string(w.w_v->size()) +
                               " does not match the hidden width " +
                               std::to_string(w.additive_W_q->cols()) + " of params.W_q");
  }
  p.d_out = p.d_v;
}

template <class T>
HeadScores<T> scores(const Problem& p, const Mat<T>& q, const Mat<T>& k) {
  const Params& w = p.params;
  const Mat<T> Wq = w.additive_W_q->template cast<T>();
  const Mat<T> Wk = w.additive_W_k->template cast<T>();
  const Vec<T> wv = w.w_v->template cast<T>();
  Mat<T> a = q * Wq;  // [Lq][hidden]
  Mat<T> c = k * Wk;  // [Lk][hidden]
  const int64_t Lq = q.rows(), Lk = k.rows(), hid = a.cols();
  HeadScores<T> r;
  r.scores.resize(Lq, Lk);
  for (int64_t i = 0; i < Lq; ++i) {
    for (int64_t j = 0; j < Lk; ++j) {
      T acc = 0;
      for (int64_t t = 0; t < hid; ++t) acc += wv[t] * std::tanh(a(i, t) + c(j, t));
      r.scores(i, j) = acc;
    }
  }
  r.terms.push_back({StepId::kAdditiveQ, std::move(a), false, false});
  r.terms.push_back({StepId::kAdditiveK, std::move(c), true, false});
  return r;
}

// tanh keeps each feature within [-1, 1]; its argument must stay finite.
double score_bound(const Problem& p, double nq, double nk) {
  const Params& w = p.params;
  const auto frobenius = [](const std::optional<MatrixR>& m) { return m ? m->norm() : 0.0; };
  double s = std::max(nq * frobenius(w.additive_W_q) + nk * frobenius(w.additive_W_k),
                      w.w_v ? w.w_v->lpNorm<1>() : 0.0);
  s /= std::min(1.0, p.temperature);
  return s;
}

// The query features Q·W_q and key features K·W_k: the trace shows them,
// and a batch item holds them.
std::vector<TermMatrix> features(const Problem& p) {
  const Params& w = p.params;
  if (!w.additive_W_q || !w.additive_W_k) return {};
  const int64_t hidden = w.additive_W_q->cols();
  return {{"query features", p.len_q, hidden}, {"key features", p.len_k, hidden}};
}

StepWords score_words(const TraceStep&) {
  return each("Additive scores", "S", "ij",
              sub("w", "v") + kTop + kDot + fn("tanh") + "(f_i + g_j)",
              "f_i: row i of F, g_j: row j of G");
}

StepWords query_features(const TraceStep&) {
  return words("Query features", "F = Q" + kDot + "W_q");
}
StepWords key_features(const TraceStep&) { return words("Key features", "G = K" + kDot + "W_k"); }

std::string pytorch_scores(const Problem& p, const PyParams& py) {
  const Params& w = p.params;
  return py.matrix("Wa_q", "W_q", *w.additive_W_q) + py.matrix("Wa_k", "W_k", *w.additive_W_k) +
         py.vector("w_v", "w_v", *w.w_v) +
         "s = torch.tanh((q @ Wa_q)[..., :, None, :] + (k @ Wa_k)[..., None, :, :]) @ w_v"
         "  # Bahdanau / d2l\n";
}

}  // namespace

const VariantUnit& additive_variant() {
  static const VariantUnit u = [] {
    VariantUnit v;
    v.id = Variant::kAdditive;
    v.name = "additive";
    v.default_scale = ScaleKind::kNone;
    v.projects_qk = false;
    v.params = {"W_q", "W_k", "w_v"};
    v.params_note =
        "it takes the scoring parameters W_q, W_k, w_v; projections and biases are not part of "
        "it";
    v.resolve_params = resolve_params;
    v.scores_f64 = scores<double>;
    v.scores_f32 = scores<float>;
    v.score_bound = score_bound;
    v.trace_terms = features;
    v.working_memory = features;
    v.score_words = score_words;
    v.own_steps = {{StepId::kAdditiveQ, query_features}, {StepId::kAdditiveK, key_features}};
    v.pytorch_scores = pytorch_scores;
    return v;
  }();
  return u;
}

}  // namespace attn::detail
