#include "model/attention_block.h"

#include <algorithm>

#include "attn/attention.h"
#include "attn/error.h"
#include "attn/file_io.h"
#include "model/matmul.h"

namespace attn::model {

FusedColumns fused_columns(const ModelConfig& c) {
  const int64_t H = c.heads, kv = c.kv_heads, d = c.head_dim, dv = c.v_head_dim;
  FusedColumns f;
  switch (c.qkv) {
    case QkvLayout::kSideBySide:
    case QkvLayout::kConv1D:
      for (int64_t h = 0; h < H; ++h) f.q.push_back(h * d);
      for (int64_t g = 0; g < kv; ++g) f.k.push_back(H * d + g * d);
      for (int64_t g = 0; g < kv; ++g) f.v.push_back(H * d + kv * d + g * dv);
      break;
    case QkvLayout::kPerHead:  // [heads][q, k, v][head_dim]
      for (int64_t h = 0; h < H; ++h) {
        f.q.push_back(h * 3 * d);
        f.k.push_back(h * 3 * d + d);
        f.v.push_back(h * 3 * d + 2 * d);
      }
      break;
    case QkvLayout::kGrouped: {  // [kv groups][q × (H / kv), k, v][head_dim]
      const int64_t per = H / kv;
      for (int64_t g = 0; g < kv; ++g) {
        const int64_t base = g * (per + 2) * d;
        for (int64_t t = 0; t < per; ++t) f.q.push_back(base + t * d);
        f.k.push_back(base + per * d);
        f.v.push_back(base + (per + 1) * d);
      }
      break;
    }
    case QkvLayout::kSeparate:
    case QkvLayout::kLatent:
      break;
  }
  return f;
}

namespace {

// Columns [start, start + width) of m for each start, side by side.
Matrix gather(const Matrix& m, const std::vector<int64_t>& starts, int64_t width) {
  Matrix out(m.rows(), static_cast<Eigen::Index>(starts.size()) * width);
  for (size_t i = 0; i < starts.size(); ++i) {
    out.middleCols(static_cast<Eigen::Index>(i) * width, width) = m.middleCols(starts[i], width);
  }
  return out;
}

// Each head's block of m (head h: columns [h·d, h·d + d)) normed.
void norm_heads(const Model& m, Role role, int64_t n, Matrix& x, int64_t heads) {
  const ModelConfig& c = m.config();
  const int64_t d = c.head_dim;
  const TensorSpec& spec = c.tensor(role);
  const bool own = c.qk_norm == QkNorm::kPerHeadOwn;
  const bool per_tensor = spec.path.find("{H}") != std::string::npos;
  Vec w, b;
  Tensor<double> rows;  // [heads][d]: one weight row per head
  if (!own) {
    w = m.vector({role, n});
    if (auto bias = m.weights().bias_name({role, n})) b = m.weights().vector(*bias);
  } else if (!per_tensor) {
    rows = m.weights().read(m.weights().weight_name({role, n}));
  }
  for (int64_t h = 0; h < heads; ++h) {
    if (own) {
      w = per_tensor ? m.vector({role, n, -1, h})
                     : Vec(Eigen::Map<const Vec>(rows.data() + h * d, d));
    }
    const Matrix block = x.middleCols(h * d, d);
    x.middleCols(h * d, d) =
        norm_rows(c.qk_norm_kind, block, &w, b.size() > 0 ? &b : nullptr, c.qk_eps);
  }
}

// DeepSeek's multi-head latent attention.
Heads latent(const Model& m, int64_t n, const Matrix& x) {
  const ModelConfig& c = m.config();
  const int64_t H = c.heads, dn = c.nope_dim, dr = c.rope_dim, dq = c.head_dim, dv = c.v_head_dim,
                rkv = c.kv_lora_rank;
  // Both latent norms use ε 1e-6 whatever rms_norm_eps says (transformers
  // builds them without the config's epsilon).
  constexpr double kLatentEps = 1e-6;
  Matrix q;
  if (c.q_lora_rank > 0) {
    const Matrix qa = m.linear(x, {Role::kQa, n});
    const Vec w = m.vector({Role::kQaNorm, n});
    q = m.linear(norm_rows(NormKind::kRms, qa, &w, nullptr, kLatentEps), {Role::kQb, n});
  } else {
    q = m.linear(x, {Role::kQ, n});
  }
  const Matrix ckv = m.linear(x, {Role::kKva, n});
  const Vec wkv = m.vector({Role::kKvaNorm, n});
  const Matrix latent = norm_rows(NormKind::kRms, ckv.leftCols(rkv), &wkv, nullptr, kLatentEps);
  // Each head's key (nope) and value features: from kv_b, or from its two
  // halves as GGUF splits it (K's transposed), head by head.
  Matrix kv;
  if (m.has(Role::kKvb)) {
    kv = m.linear(latent, {Role::kKvb, n});
  } else {
    const Weights& w = m.weights();
    const std::string& kb_name = w.weight_name({Role::kKb, n});
    const std::string& vb_name = w.weight_name({Role::kVb, n});
    const BinaryArray kb = w.view(kb_name), vb = w.view(vb_name);
    kv = Matrix(x.rows(), H * (dn + dv));
    for (int64_t h = 0; h < H; ++h) {
      kv.middleCols(h * (dn + dv), dn) =
          detail::multiply(latent, slice(kb, h), false, m.dtype(), m.threads(), w.place(kb_name));
      kv.middleCols(h * (dn + dv) + dn, dv) =
          detail::multiply(latent, slice(vb, h), true, m.dtype(), m.threads(), w.place(vb_name));
    }
  }
  const Eigen::Index L = x.rows();
  Heads out{Matrix(L, H * dq), Matrix(L, H * dq), Matrix(L, H * dv)};
  // The engine rotates the first features of a head: each head's rotary
  // part goes first (the scores are the same for any order both share).
  for (int64_t h = 0; h < H; ++h) {
    out.q.middleCols(h * dq, dr) = q.middleCols(h * dq + dn, dr);
    out.q.middleCols(h * dq + dr, dn) = q.middleCols(h * dq, dn);
    out.k.middleCols(h * dq, dr) = ckv.middleCols(rkv, dr);  // one rotary key for every head
    out.k.middleCols(h * dq + dr, dn) = kv.middleCols(h * (dn + dv), dn);
    out.v.middleCols(h * dv, dv) = kv.middleCols(h * (dn + dv) + dn, dv);
  }
  return out;
}

}  // namespace

Heads project_heads(const Model& m, int64_t n, const Matrix& x) {
  const ModelConfig& c = m.config();
  Heads h;
  switch (c.qkv) {
    case QkvLayout::kSeparate: {
      std::vector<Matrix> r = m.linears(x, {{Role::kQ, n}, {Role::kK, n}, {Role::kV, n}});
      h = Heads{std::move(r[0]), std::move(r[1]), std::move(r[2])};
      break;
    }
    case QkvLayout::kSideBySide:
    case QkvLayout::kPerHead:
    case QkvLayout::kGrouped:
    case QkvLayout::kConv1D: {
      const Matrix f = m.linear(x, {Role::kQkv, n});
      const FusedColumns cols = fused_columns(c);
      h = Heads{gather(f, cols.q, c.head_dim), gather(f, cols.k, c.head_dim),
                gather(f, cols.v, c.v_head_dim)};
      break;
    }
    case QkvLayout::kLatent:
      return latent(m, n, x);
  }
  if (c.clip > 0) {
    // OLMo's clip_qkv: each projection clamped before anything else.
    for (Matrix* p : {&h.q, &h.k, &h.v}) *p = p->cwiseMax(-c.clip).cwiseMin(c.clip);
  }
  switch (c.qk_norm) {
    case QkNorm::kNone:
      break;
    case QkNorm::kWholeWidth: {
      // OLMo 2: one RMSNorm over all of a token's query (key) features.
      const Vec wq = m.vector({Role::kQNorm, n}), wk = m.vector({Role::kKNorm, n});
      h.q = norm_rows(c.qk_norm_kind, h.q, &wq, nullptr, c.qk_eps);
      h.k = norm_rows(c.qk_norm_kind, h.k, &wk, nullptr, c.qk_eps);
      break;
    }
    case QkNorm::kPerHead:
    case QkNorm::kPerHeadOwn:
      norm_heads(m, Role::kQNorm, n, h.q, c.heads);
      norm_heads(m, Role::kKNorm, n, h.k, c.kv_heads);
      break;
  }
  return h;
}

Problem layer_problem(const Model& m, int64_t n, Heads&& heads) {
  const ModelConfig& c = m.config();
  const LayerPlan& plan = c.plan[static_cast<size_t>(n)];
  const int64_t L = heads.q.rows(), H = c.heads, kv = c.kv_heads, dq = c.head_dim,
                dv = c.v_head_dim;
  Problem p;
  p.source = display_name(m.name()) + " layer " + std::to_string(n);
  p.mode = Mode::kQkv;
  p.variant = Variant::kScaledDot;
  p.heads = H;
  p.kv_heads = kv;
  p.scale = Scale{ScaleKind::kValue, plan.scale};
  p.scale_explicit = true;
  p.batch = 1;
  p.batched = true;
  p.four_d = true;
  p.len_q = p.len_k = L;
  // [L][h·d] -> [1][h][L][d]: head g owns column block g.
  auto split = [&](const Matrix& x, int64_t h, int64_t d) {
    Tensor<double> t(Shape{1, h, L, d});
    for (int64_t g = 0; g < h; ++g) {
      Eigen::Map<Matrix>(t.data() + g * L * d, L, d) = x.middleCols(g * d, d);
    }
    return t;
  };
  p.query_in = split(heads.q, H, dq);
  p.key_in = split(heads.k, kv, dq);
  p.value_in = split(heads.v, kv, dv);
  heads = Heads{};
  p.query_name = "Q";
  p.key_name = "K";
  p.value_name = "V";
  p.query_shape = p.query_in.shape();
  p.key_shape = p.key_in.shape();
  p.value_shape = p.value_in.shape();
  p.d_q = H * dq;
  p.d_k = kv * dq;
  p.d_v = kv * dv;
  p.d_out = dv;
  p.masks.causal = c.causal;
  if (plan.sliding) {
    // Hugging Face's window of W keys, the query's own included.
    p.masks.window = true;
    p.masks.window_left = c.window - 1;
    p.masks.window_right = 0;
  }
  if (c.positions == Positions::kRotary && plan.rope) {
    Rope r;
    r.theta = plan.rope_theta;
    r.dims = c.rope_dims;
    r.layout = c.rope_layout;
    r.scaling = plan.scaling;
    const RopeFrequencies f = rope_frequencies(r.theta, r.dims, r.scaling, L);
    r.inv_freq = f.inv_freq;
    r.attention = f.attention;
    p.rope = std::move(r);
  }
  p.softcap = c.softcap;
  if (c.has(Role::kSinks)) {
    const Vec s = m.vector({Role::kSinks, n});
    p.sinks.assign(s.data(), s.data() + s.size());
  }
  return p;
}

namespace {

// W_O^h for every head: the rows of the output projection, as x · W_O
// ([heads · d_v][hidden]), that multiply head h's output, [heads][d_v][hidden].
Tensor<double> output_blocks(const Model& m, int64_t n) {
  const ModelConfig& c = m.config();
  const Tensor<double> w = m.weights().read(m.weights().weight_name({Role::kO, n}));
  const int64_t dv = c.v_head_dim, in = c.heads * dv, out = c.conv1d ? w.dim(1) : w.dim(0);
  Tensor<double> blocks(Shape{c.heads, dv, out});
  // nn.Linear stores W_O transposed ([hidden][heads · d_v]); Conv1D as it multiplies.
  for (int64_t r = 0; r < in; ++r) {
    for (int64_t o = 0; o < out; ++o)
      blocks[r * out + o] = c.conv1d ? w[r * out + o] : w[o * in + r];
  }
  return blocks;
}

// Each query head's value vectors of one sequence, [heads][len][d_v].
Tensor<double> head_values(const ModelConfig& c, const Matrix& v) {
  const int64_t H = c.heads, per = H / c.kv_heads, dv = c.v_head_dim, L = v.rows();
  Tensor<double> t(Shape{H, L, dv});
  for (int64_t h = 0; h < H; ++h) {
    Eigen::Map<Matrix>(t.data() + h * L * dv, L, dv) = v.middleCols((h / per) * dv, dv);
  }
  return t;
}

}  // namespace

Matrix attention(const Model& m, int64_t n, const Matrix& x, const AttentionTaps& taps) {
  const ModelConfig& c = m.config();
  const Eigen::Index L = x.rows();
  const int64_t dv = c.v_head_dim;
  const std::vector<int64_t> one{L};
  const std::vector<int64_t>& lengths =
      taps.lengths && !taps.lengths->empty() ? *taps.lengths : one;
  // The projections are row by row: every sequence's rows in one product.
  Heads all = project_heads(m, n, x);
  Tensor<double> blocks;
  if (taps.values) blocks = output_blocks(m, n);
  Matrix concat(L, c.heads * dv);
  Eigen::Index start = 0;
  for (size_t s = 0; s < lengths.size(); ++s) {
    const Eigen::Index len = lengths[s];
    if (taps.values) {
      LayerValues lv;
      lv.layer = n;
      lv.sentence = static_cast<int64_t>(s);
      lv.values = head_values(c, all.v.middleRows(start, len));
      lv.output_blocks = blocks;
      taps.values(static_cast<int64_t>(s), std::move(lv));
    }
    Heads one_sequence = lengths.size() == 1
                             ? std::move(all)
                             : Heads{all.q.middleRows(start, len), all.k.middleRows(start, len),
                                     all.v.middleRows(start, len)};
    const Problem p = layer_problem(m, n, std::move(one_sequence));
    ComputeRequest creq;
    creq.threads = m.threads();
    creq.weights = static_cast<bool>(taps.weights);
    creq.dtype = m.dtype();
    Result r = compute(p, creq);
    if (taps.weights) taps.weights(static_cast<int64_t>(s), std::move(*r.weights));
    // [1][h][len][dv] -> the sequence's rows of [L][h·dv].
    const Tensor<double>& o = r.output;
    for (int64_t g = 0; g < c.heads; ++g) {
      concat.block(start, g * dv, len, dv) =
          Eigen::Map<const Matrix>(o.data() + g * len * dv, len, dv);
    }
    start += len;
  }
  if (start != L) {
    throw_internal("attention: sequences of " + std::to_string(start) + " rows in x of " +
                   std::to_string(L));
  }
  return m.linear(concat, {Role::kO, n});
}

}  // namespace attn::model
