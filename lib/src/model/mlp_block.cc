#include "model/mlp_block.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attn/error.h"
#include "kernel/linear_kernel.h"
#include "model/matmul.h"

namespace attn::model {

namespace {

// The k largest of `v` (torch.topk: the earlier index first among equals).
std::vector<int64_t> top_k(const Vec& v, int64_t k) {
  std::vector<int64_t> order(static_cast<size_t>(v.size()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return v[a] > v[b]; });
  order.resize(static_cast<size_t>(k));
  return order;
}

Vec softmax(const Vec& v) {
  Vec p = (v.array() - v.maxCoeff()).exp();
  return p / p.sum();
}

// down(act(gate x) ⊙ up x) with the model's activation.
Matrix gated_mlp(const Model& m, const Matrix& x, const At& gate, const At& up, const At& down) {
  const ModelConfig& c = m.config();
  const Weights& w = m.weights();
  const bool biases = w.bias_name(gate) || w.bias_name(up) || w.bias_name(down);
  // Under --dtype f32 the SiLU or tanh-GELU MLP stays in float32 from gate
  // to down (kernel::gate_f32), with no float64 copy between.
  if (m.dtype() == DType::kF32 && !biases &&
      (c.act == Activation::kSilu || c.act == Activation::kGeluTanh)) {
    const BinaryArray g = w.view(w.weight_name(gate)), u = w.view(w.weight_name(up)),
                      d = w.view(w.weight_name(down));
    return detail::gated_mlp_f32(
        x, {&g, true, w.place(w.weight_name(gate))}, {&u, true, w.place(w.weight_name(up))},
        {&d, true, w.place(w.weight_name(down))},
        c.act == Activation::kSilu ? kernel::GateKind::kSilu : kernel::GateKind::kGeluTanh,
        m.threads());
  }
  const std::vector<Matrix> gu = m.linears(x, {gate, up});
  return m.linear(gated(c.act, gu[0], gu[1], m.threads()), down);
}

Matrix dense(const Model& m, int64_t n, const Matrix& x) {
  const ModelConfig& c = m.config();
  if (c.mlp == MlpKind::kPlain) {
    return m.linear(activated(c.act, m.linear(x, {Role::kUp, n}), m.threads()), {Role::kDown, n});
  }
  if (c.has(Role::kGateUp)) {
    // Phi-3's gate_up_proj: the gate's outputs first, then up's.
    const Matrix gu = m.linear(x, {Role::kGateUp, n});
    const int64_t I = gu.cols() / 2;
    return m.linear(gated(c.act, gu.leftCols(I), gu.rightCols(I), m.threads()), {Role::kDown, n});
  }
  return gated_mlp(m, x, {Role::kGate, n}, {Role::kUp, n}, {Role::kDown, n});
}

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// gpt-oss's expert: gate and up (one interleaved [hidden][2·I] matrix with
// its bias as transformers holds them, or two matrices as GGUF does), the
// gate capped at 7, up clamped to ±7, (up + 1) · gate · σ(1.702 · gate),
// then down and its bias.
Matrix clamped_swiglu_expert(const Model& m, int64_t n, int64_t e, const Matrix& x) {
  const Weights& w = m.weights();
  const bool fused = m.has(Role::kExpertsGateUp);
  Matrix gate, up;
  if (fused) {
    const std::string& name = w.weight_name({Role::kExpertsGateUp, n});
    // Stored input-major: x · W.
    Matrix gu = detail::multiply(x, slice(w.view(name), e), false, m.dtype(), m.threads(),
                                 w.place(name) + "[" + std::to_string(e) + "]");
    const Tensor<double> b = w.read(w.weight_name({Role::kExpertsGateUpBias, n}));
    gu.rowwise() += Eigen::Map<const Vec>(b.data() + e * gu.cols(), gu.cols());
    const int64_t I = gu.cols() / 2;
    gate = Matrix(x.rows(), I);
    up = Matrix(x.rows(), I);
    for (int64_t j = 0; j < I; ++j) {
      gate.col(j) = gu.col(2 * j);
      up.col(j) = gu.col(2 * j + 1);
    }
  } else {
    std::vector<Matrix> gu = m.linears(x, {{Role::kExpertGate, n, e}, {Role::kExpertUp, n, e}});
    gate = std::move(gu[0]);
    up = std::move(gu[1]);
  }
  constexpr double kLimit = 7.0, kAlpha = 1.702;
  Matrix a(x.rows(), gate.cols());
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    for (Eigen::Index j = 0; j < gate.cols(); ++j) {
      const double g = std::min(gate(r, j), kLimit);
      const double u = std::clamp(up(r, j), -kLimit, kLimit);
      a(r, j) = (u + 1) * (g * sigmoid(kAlpha * g));
    }
  }
  if (!fused) return m.linear(a, {Role::kExpertDown, n, e});
  const std::string& name = w.weight_name({Role::kExpertsDown, n});
  Matrix y = detail::multiply(a, slice(w.view(name), e), false, m.dtype(), m.threads(),
                              w.place(name) + "[" + std::to_string(e) + "]");
  const Tensor<double> db = w.read(w.weight_name({Role::kExpertsDownBias, n}));
  y.rowwise() += Eigen::Map<const Vec>(db.data() + e * y.cols(), y.cols());
  return y;
}

Matrix experts(const Model& m, int64_t n, const Matrix& x) {
  const ModelConfig& c = m.config();
  const Matrix logits = m.linear(x, {Role::kRouter, n});
  std::optional<Vec> score_bias;
  if (c.has(Role::kRouterScoreBias)) score_bias = m.vector({Role::kRouterScoreBias, n});
  const std::vector<std::vector<Route>> routes =
      route(c, logits, score_bias ? &*score_bias : nullptr);
  const Eigen::Index tokens = x.rows();
  Matrix out = Matrix::Zero(tokens, x.cols());
  // Each expert on its tokens, added in expert order as transformers'
  // index_add_ does.
  for (int64_t e = 0; e < c.experts; ++e) {
    std::vector<Eigen::Index> rows;
    std::vector<double> weights;
    for (Eigen::Index t = 0; t < tokens; ++t) {
      for (const Route& r : routes[static_cast<size_t>(t)]) {
        if (r.expert == e) {
          rows.push_back(t);
          weights.push_back(r.weight);
        }
      }
    }
    if (rows.empty()) continue;
    Matrix in(static_cast<Eigen::Index>(rows.size()), x.cols());
    for (size_t i = 0; i < rows.size(); ++i) in.row(static_cast<Eigen::Index>(i)) = x.row(rows[i]);
    const Matrix y = c.clamped_experts
                         ? clamped_swiglu_expert(m, n, e, in)
                         : gated_mlp(m, in, {Role::kExpertGate, n, e}, {Role::kExpertUp, n, e},
                                     {Role::kExpertDown, n, e});
    for (size_t i = 0; i < rows.size(); ++i) {
      out.row(rows[i]) += y.row(static_cast<Eigen::Index>(i)) * weights[i];
    }
  }
  switch (c.shared) {
    case Shared::kNone:
      break;
    case Shared::kPlain:
      out += gated_mlp(m, x, {Role::kSharedGate, n}, {Role::kSharedUp, n}, {Role::kSharedDown, n});
      break;
    case Shared::kSigmoidGated: {
      // Qwen 2 MoE: the shared expert weighted by σ(shared_expert_gate · x).
      const Matrix shared =
          gated_mlp(m, x, {Role::kSharedGate, n}, {Role::kSharedUp, n}, {Role::kSharedDown, n});
      const Matrix g = m.linear(x, {Role::kSharedExpertGate, n});
      for (Eigen::Index t = 0; t < tokens; ++t) out.row(t) += sigmoid(g(t, 0)) * shared.row(t);
      break;
    }
  }
  return out;
}

}  // namespace

std::vector<std::vector<Route>> route(const ModelConfig& c, const Matrix& logits,
                                      const Vec* score_bias) {
  if (logits.cols() != c.experts) {
    throw_internal("route: " + std::to_string(logits.cols()) + " logits for " +
                   std::to_string(c.experts) + " experts");
  }
  std::vector<std::vector<Route>> out(static_cast<size_t>(logits.rows()));
  for (Eigen::Index t = 0; t < logits.rows(); ++t) {
    const Vec l = logits.row(t);
    std::vector<int64_t> chosen;
    Vec weight = Vec::Zero(c.experts);
    switch (c.router) {
      case Router::kNone:
        break;
      case Router::kSoftmaxTopK: {
        // Mixtral, Qwen MoE: softmax over every expert, the top k,
        // renormalised to sum to 1 when norm_topk_prob (always for Mixtral).
        // transformers takes this softmax in float32 whatever the model's
        // dtype; float64 here.
        const Vec p = softmax(l);
        chosen = top_k(p, c.top_k);
        double sum = 0;
        for (int64_t e : chosen) sum += p[e];
        for (int64_t e : chosen) weight[e] = c.norm_topk ? p[e] / sum : p[e];
        break;
      }
      case Router::kTopKSoftmax: {
        // gpt-oss: the top k logits, then a softmax over those k alone.
        chosen = top_k(l, c.top_k);
        Vec picked(c.top_k);
        for (int64_t i = 0; i < c.top_k; ++i) picked[i] = l[chosen[static_cast<size_t>(i)]];
        const Vec p = softmax(picked);
        for (int64_t i = 0; i < c.top_k; ++i) weight[chosen[static_cast<size_t>(i)]] = p[i];
        break;
      }
      case Router::kSigmoidGrouped: {
        // DeepSeek-V3: sigmoid scores; the choice adds the correction bias
        // (for choosing only), keeps the topk_group groups whose two best
        // choices sum highest, sets the others' experts to 0.0 (not −∞, as
        // transformers does), and takes the top k; their scores,
        // renormalised when norm_topk_prob, times routed_scaling_factor.
        Vec s(c.experts);
        for (int64_t e = 0; e < c.experts; ++e) s[e] = sigmoid(l[e]);
        Vec choice = s;
        if (score_bias) choice += *score_bias;
        const int64_t per = c.experts / c.groups;
        Vec group(c.groups);
        for (int64_t g = 0; g < c.groups; ++g) {
          const std::vector<int64_t> best = top_k(choice.segment(g * per, per), 2);
          group[g] = choice[g * per + best[0]] + choice[g * per + best[1]];
        }
        const std::vector<int64_t> kept = top_k(group, c.top_groups);
        Vec masked = Vec::Zero(c.experts);
        for (int64_t g : kept) masked.segment(g * per, per) = choice.segment(g * per, per);
        chosen = top_k(masked, c.top_k);
        double sum = 0;
        for (int64_t e : chosen) sum += s[e];
        for (int64_t e : chosen) {
          weight[e] = (c.norm_topk ? s[e] / (sum + 1e-20) : s[e]) * c.routed_scaling;
        }
        break;
      }
    }
    std::sort(chosen.begin(), chosen.end());
    for (int64_t e : chosen) out[static_cast<size_t>(t)].push_back(Route{e, weight[e]});
  }
  return out;
}

Matrix mlp(const Model& m, int64_t n, const Matrix& x) {
  return m.config().plan[static_cast<size_t>(n)].moe ? experts(m, n, x) : dense(m, n, x);
}

}  // namespace attn::model
