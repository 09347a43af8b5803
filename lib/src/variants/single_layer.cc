// single_layer: S_ij = LeakyReLU_0.01((q_i − k_j)·w), a single-layer
// network on the difference of a query and a key (GAT-style); one head,
// with optional projections W_q, W_k.
#include "attn/error.h"
#include "problem/params_context.h"
#include "problem/variant_unit.h"
#include "trace/formula.h"

namespace attn::detail {

namespace {

using namespace formula;

void resolve_params(ParamsContext& c) {
  Problem& p = c.p;
  c.project_qkv();
  if (p.heads != 1) {
    throw_input(c.doc.settings_place,
                "variant single_layer has one head; got heads " + std::to_string(p.heads));
  }
  const Input* wi = c.get("w");
  if (!wi)
    throw_input(p.source,
                "variant single_layer needs params.w (shape [" + std::to_string(p.d_k) + "])");
  p.params.w = c.vec(*wi, false);
  if (p.params.w->size() != p.d_k) {
    throw_input(wi->place, "length " + std::to_string(p.params.w->size()) +
                               " does not match the key width " + std::to_string(p.d_k));
  }
  p.d_out = p.d_v;
}

template <class T>
HeadScores<T> scores(const Problem& p, const Mat<T>& q, const Mat<T>& k) {
  const int64_t Lq = q.rows(), Lk = k.rows();
  const Vec<T> w = p.params.w->template cast<T>();
  Mat<T> pre(Lq, Lk);
  for (int64_t i = 0; i < Lq; ++i) {
    for (int64_t j = 0; j < Lk; ++j) pre(i, j) = (q.row(i) - k.row(j)).dot(w);
  }
  HeadScores<T> r;
  r.scores = pre.unaryExpr([](T x) { return x >= 0 ? x : T(0.01) * x; });
  r.terms.push_back({StepId::kSingleLayerPre, std::move(pre), false, true});
  return r;
}

// |LeakyReLU(x)| <= |x| and |(q − k)·w| <= (‖q‖ + ‖k‖)·‖w‖.
double score_bound(const Problem& p, double nq, double nk) {
  const double w = p.params.w ? p.params.w->norm() : 0.0;
  return (nq + nk) * w / std::min(1.0, p.temperature);
}

// The pre-activations D [Lq][Lk].
std::vector<TermMatrix> pre_activations(const Problem& p) {
  return {{"pre-activations", p.len_q, p.len_k}};
}

StepWords score_words(const TraceStep&) {
  return each("Single-layer scores", "S", "ij",
              Math("LeakyReLU_0.01", "\\mathrm{LeakyReLU}_{0.01}") + "(" + sub("D", "ij") + ")");
}

StepWords differences(const TraceStep&) {
  return each("Differences projected on w", "D", "ij", "(q_i " + kMinus + " k_j)" + kDot + "w");
}

std::string pytorch_scores(const Problem& p, const PyParams& py) {
  return py.vector("w", "w", *p.params.w) +
         "s = F.leaky_relu((q[..., :, None, :] - k[..., None, :, :]) @ w, 0.01)\n";
}

}  // namespace

const VariantUnit& single_layer_variant() {
  static const VariantUnit u = [] {
    VariantUnit v;
    v.id = Variant::kSingleLayer;
    v.name = "single_layer";
    v.default_scale = ScaleKind::kNone;
    v.params = {"W_q", "W_k", "b_q", "b_k", "w"};
    v.params_note = "it takes w, and optionally the projections W_q, W_k";
    v.resolve_params = resolve_params;
    v.scores_f64 = scores<double>;
    v.scores_f32 = scores<float>;
    v.score_bound = score_bound;
    v.trace_terms = pre_activations;
    v.working_memory = no_term_matrices;  // the scores themselves are counted for every variant
    v.score_words = score_words;
    v.own_steps = {{StepId::kSingleLayerPre, differences}};
    v.pytorch_scores = pytorch_scores;
    return v;
  }();
  return u;
}

}  // namespace attn::detail
