// The engine's fast path: scaled_dot and dot through the kernels of
// kernel/attention_kernel.h. Projections, the split into heads, head
// concatenation and the output projection are done with Eigen around
// them; the (batch, head, block of queries) tasks run in parallel.
#include <type_traits>

#include "engine/engine.h"
#include "kernel/attention_kernel.h"
#include "kernel/parallel.h"

namespace attn::detail {

namespace {

template <class T>
Mat<T> project(const Mat<T>& x, const std::optional<MatrixR>& W,
               const std::optional<Eigen::VectorXd>& b) {
  if (!W) return x;
  Mat<T> y = x * W->template cast<T>();
  if (b) y.rowwise() += b->template cast<T>().transpose();
  return y;
}

template <class T>
T max_row_norm(const Mat<T>& m) {
  T best = 0;
  for (int64_t i = 0; i < m.rows(); ++i) best = std::max(best, m.row(i).stableNorm());
  return best;
}

}  // namespace

bool fast_path_applies(const Problem& p, DType dtype) {
  if (p.variant != Variant::kScaledDot && p.variant != Variant::kDot) return false;
  // The kernels pack each head's keys in whole panels of keys: a few very
  // wide keys (X of 1 x 3,000,000) would be padded to up to 48 times their
  // size, memory --max-elements never counted. Such problems are cheap for
  // the reference path, which pads nothing. Small problems keep the fast
  // path whatever their padding, so its results do not change.
  constexpr int64_t kSlack = int64_t{1} << 22;  // padding always allowed (32 MiB as f64)
  const int64_t heads = p.batch * p.heads, dh = p.d_k / p.heads;
  const int64_t keys = heads * p.len_k * dh;
  const int64_t packed =
      heads * (dtype == DType::kF32 ? kernel::packed_key_elements<float>(p.len_k, dh)
                                    : kernel::packed_key_elements<double>(p.len_k, dh));
  return packed - keys <= std::max(keys, kSlack);
}

template <class T>
Result compute_fast(const Problem& p, const ComputeRequest& req) {
  const int64_t B = p.batch, H = p.heads, KV = p.kv(), Lq = p.len_q, Lk = p.len_k;
  const int64_t n_heads = B * H;
  // Queries per (batch, head); keys and values per (batch, kv head): with
  // grouped-query attention a group of query heads shares one K/V head.
  std::vector<Mat<T>> qh(static_cast<size_t>(n_heads));
  std::vector<Mat<T>> kh(static_cast<size_t>(B * KV)), vh(kh.size());
  for (int64_t b = 0; b < B; ++b) {
    if (p.four_d) {
      for (int64_t h = 0; h < H; ++h) {
        qh[static_cast<size_t>(b * H + h)] = slice<T>(p.query_in, b * H + h, Lq, p.query_in.dim(3));
      }
      for (int64_t g = 0; g < KV; ++g) {
        const size_t bg = static_cast<size_t>(b * KV + g);
        kh[bg] = slice<T>(p.key_in, b * KV + g, Lk, p.key_in.dim(3));
        vh[bg] = slice<T>(p.value_in, b * KV + g, Lk, p.value_in.dim(3));
      }
      continue;
    }
    const Params& w = p.params;
    const Mat<T> q = project<T>(slice<T>(p.query_in, b, Lq, p.query_in.dim(2)), w.W_q, w.b_q);
    const Mat<T> k = project<T>(slice<T>(p.key_in, b, Lk, p.key_in.dim(2)), w.W_k, w.b_k);
    const Mat<T> v = project<T>(slice<T>(p.value_in, b, Lk, p.value_in.dim(2)), w.W_v, w.b_v);
    const int64_t dq = q.cols() / H, dk = k.cols() / KV, dv = v.cols() / KV;
    for (int64_t h = 0; h < H; ++h) qh[static_cast<size_t>(b * H + h)] = q.middleCols(h * dq, dq);
    for (int64_t g = 0; g < KV; ++g) {
      const size_t bg = static_cast<size_t>(b * KV + g);
      kh[bg] = k.middleCols(g * dk, dk);
      vh[bg] = v.middleCols(g * dv, dv);
    }
  }
  // RoPE while the heads are prepared, once per K/V head, before cosine.
  if (p.rope) {
    std::vector<Mat<T>*> q_rot, k_rot;
    for (Mat<T>& m : qh) q_rot.push_back(&m);
    for (Mat<T>& m : kh) k_rot.push_back(&m);
    if (p.rope->q_offset == p.rope->k_offset) {  // one angle per position for both
      q_rot.insert(q_rot.end(), k_rot.begin(), k_rot.end());
      apply_rope(q_rot, *p.rope, p.rope->q_offset);
    } else {
      apply_rope(q_rot, *p.rope, p.rope->q_offset);
      apply_rope(k_rot, *p.rope, p.rope->k_offset);
    }
  }
  if (p.scale.kind == ScaleKind::kCosine) {
    for (Mat<T>& m : qh) normalize_rows(m);
    for (Mat<T>& m : kh) normalize_rows(m);
  }

  const bool at_scores = p.scale_at == ScaleAt::kScores;
  const double factor = scale_factor(p);
  kernel::ScoreRules rules;
  rules.norm = p.scale.kind == ScaleKind::kNorm;
  rules.mult = at_scores ? factor / p.temperature : 1.0;
  rules.out_mult = at_scores ? 1.0 : factor / p.temperature;
  rules.mask_fill = p.mask_fill;
  rules.fully_masked = p.fully_masked;
  rules.dropout = p.dropout;
  rules.seed = p.seed;
  rules.softcap = p.softcap;

  // |q·k| <= ‖q‖‖k‖: when a score could overflow T, the reference path,
  // which gives infinite scores their limit, computes instead.
  T qmax = 0, kmax = 0;
  for (const Mat<T>& m : qh) qmax = std::max(qmax, max_row_norm(m));
  for (const Mat<T>& m : kh) kmax = std::max(kmax, max_row_norm(m));
  const double limit = static_cast<double>(std::numeric_limits<T>::max()) / 16;
  const double bound = static_cast<double>(qmax) * static_cast<double>(kmax);
  const double scaled = rules.norm ? 1.0 : bound * std::fabs(rules.mult);
  if (!(bound < limit && scaled < limit)) {
    ComputeRequest ref = req;
    ref.reference = true;
    return compute(p, ref);
  }

  std::vector<MaskView> views;
  if (p.masks.any()) {
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < H; ++h) views.emplace_back(p, b, h);
    }
  }
  const int64_t cells = n_heads * Lq * Lk;
  const bool keep = req.weights || req.scores;
  std::vector<double> weights_d, scores_d;
  std::vector<T> weights_t, scores_t;
  std::vector<uint8_t> masked;
  T* wbuf = nullptr;
  T* sbuf = nullptr;
  if (keep) {
    masked.assign(static_cast<size_t>(cells), 0);
    if constexpr (std::is_same_v<T, double>) {
      weights_d.assign(static_cast<size_t>(cells), 0.0);
      wbuf = weights_d.data();
      if (req.scores) {
        scores_d.assign(static_cast<size_t>(cells), 0.0);
        sbuf = scores_d.data();
      }
    } else {
      weights_t.assign(static_cast<size_t>(cells), T(0));
      wbuf = weights_t.data();
      if (req.scores) {
        scores_t.assign(static_cast<size_t>(cells), T(0));
        sbuf = scores_t.data();
      }
    }
  }
  std::vector<Mat<T>> oh(qh.size());
  std::vector<kernel::HeadTask<T>> tasks;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const size_t bh = static_cast<size_t>(b * H + h);
      const size_t bg = static_cast<size_t>(b * KV + p.kv_head(h));
      oh[bh].resize(Lq, vh[bg].cols());
      kernel::HeadTask<T> t;
      t.q = qh[bh].data();
      t.k = kh[bg].data();
      t.v = vh[bg].data();
      t.out = oh[bh].data();
      t.len_q = Lq;
      t.len_k = Lk;
      t.d = qh[bh].cols();
      t.dv = vh[bg].cols();
      if (!p.alibi.empty()) t.alibi = p.alibi[static_cast<size_t>(h)];
      if (!p.sinks.empty()) {
        t.has_sink = true;
        t.sink = p.sinks[static_cast<size_t>(h)];
      }
      const int64_t off = static_cast<int64_t>(bh) * Lq * Lk;
      if (keep) {
        t.weights = wbuf + off;
        t.scores = sbuf ? sbuf + off : nullptr;
        t.masked = masked.data() + off;
      }
      t.masks = views.empty() ? nullptr : &views[bh];
      t.batch = b;
      t.head = h;
      t.heads = H;
      tasks.push_back(t);
    }
  }
  std::vector<kernel::FullyMaskedRow> fully;
  const int threads = req.threads > 0 ? req.threads : kernel::hardware_threads();
  kernel::run_heads(tasks, rules, threads, &fully, req.progress);
  if (p.fully_masked == FullyMasked::kError && !fully.empty()) {
    raise_fully_masked(p, fully[0].batch, fully[0].head, fully[0].query);
  }

  Result r;
  r.dtype = req.dtype;
  for (const auto& f : fully)
    r.fully_masked_rows.push_back(FullyMaskedRow{f.batch, f.head, f.query});
  if (p.four_d) {
    const int64_t dv = oh[0].cols();
    Tensor<double> out({B, H, Lq, dv});
    for (size_t bh = 0; bh < oh.size(); ++bh) {
      Eigen::Map<MatrixR>(out.data() + static_cast<int64_t>(bh) * Lq * dv, Lq, dv) =
          oh[bh].template cast<double>();
    }
    r.output = std::move(out);
  } else {
    Tensor<double> out({B, Lq, p.d_out});
    const std::optional<MatrixR>& Wo = p.params.W_o;
    const std::optional<Eigen::VectorXd>& bo = p.params.b_o;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t dv = oh[static_cast<size_t>(b * H)].cols();
      Mat<T> concat(Lq, H * dv);
      for (int64_t h = 0; h < H; ++h)
        concat.middleCols(h * dv, dv) = oh[static_cast<size_t>(b * H + h)];
      Mat<T> y = Wo ? Mat<T>(concat * Wo->template cast<T>()) : concat;
      if (bo) y.rowwise() += bo->template cast<T>().transpose();
      Eigen::Map<MatrixR>(out.data() + b * Lq * p.d_out, Lq, p.d_out) = y.template cast<double>();
    }
    if (!p.batched) out.reshape({Lq, p.d_out});
    r.output = std::move(out);
  }
  if (keep) {
    if constexpr (!std::is_same_v<T, double>) {
      weights_d.assign(weights_t.begin(), weights_t.end());
      weights_t = {};
      if (req.scores) scores_d.assign(scores_t.begin(), scores_t.end());
    }
    finish_maps(p, req, req.weights ? &weights_d : nullptr, req.scores ? &scores_d : nullptr,
                masked, r);
  }
  return r;
}

template Result compute_fast<float>(const Problem&, const ComputeRequest&);
template Result compute_fast<double>(const Problem&, const ComputeRequest&);

}  // namespace attn::detail
