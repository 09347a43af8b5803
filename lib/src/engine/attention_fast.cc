// The engine's fast path: scaled_dot and dot through the kernels of
// kernel/attention_kernel.h. Projections, the split into heads, head
// concatenation and the output projection are done with Eigen around
// them; the (batch, head, block of queries) tasks run in parallel.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "base/big_buffer.h"
#include "base/parallel.h"
#include "engine/engine.h"
#include "engine/norms.h"
#include "kernel/attention_kernel.h"
#include "problem/variant_unit.h"

namespace attn::detail {

bool fast_path_applies(const Problem& p, DType dtype) {
  if (!variant_unit(p.variant).fast_kernel) return false;
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

namespace {

// Queries per (batch, head); keys and values per (batch, kv head): with
// grouped-query attention a group of query heads shares one K/V head.
// The kernels read them (qi, ki, vi) straight from 4D inputs, or from
// copies in T (q, k, v) projected and split, rotated (RoPE) and normalized
// (cosine) as the kernels take them.
template <class T>
struct Heads {
  std::vector<Mat<T>> q, k, v;
  std::vector<kernel::Input<T>> qi, ki, vi;
  int64_t d = 0, dv = 0;  // a query (key) head's width, a value head's
};

// The kernels' view of the caller's doubles at x: float kernels round each
// value as they read it.
template <class T>
kernel::Input<T> input_at(const double* x) {
  kernel::Input<T> in;
  if constexpr (std::is_same_v<T, double>) {
    in.same = x;
  } else {
    in.wide = x;
  }
  return in;
}

template <class T>
std::vector<kernel::Input<T>> inputs_of(const std::vector<Mat<T>>& m) {
  std::vector<kernel::Input<T>> in(m.size());
  for (size_t u = 0; u < m.size(); ++u) in[u].same = m[u].data();
  return in;
}

// Each head of a 4D input in place: [B][heads][L][d] holds head (b, h) as
// one block of L·d values.
template <class T>
std::vector<kernel::Input<T>> four_d_inputs(const Tensor<double>& t) {
  const int64_t heads = t.dim(0) * t.dim(1), block = t.dim(2) * t.dim(3);
  std::vector<kernel::Input<T>> in(static_cast<size_t>(heads));
  for (int64_t u = 0; u < heads; ++u)
    in[static_cast<size_t>(u)] = input_at<T>(t.data() + u * block);
  return in;
}

template <class T>
Heads<T> prepare_heads(const Problem& p, int threads) {
  const int64_t B = p.batch, H = p.heads, KV = p.kv();
  Heads<T> x;
  const bool cosine = p.scale.kind == ScaleKind::kCosine;
  if (p.four_d && !p.rope && !cosine && p.qk_norm == 0) {
    // Nothing to compute on the heads: no copy of them at all.
    x.qi = four_d_inputs<T>(p.query_in);
    x.ki = four_d_inputs<T>(p.key_in);
    x.vi = four_d_inputs<T>(p.value_in);
    x.d = p.query_in.dim(3);
    x.dv = p.value_in.dim(3);
    return x;
  }
  x.q.resize(static_cast<size_t>(B * H));
  x.k.resize(static_cast<size_t>(B * KV));
  x.v.resize(x.k.size());
  if (p.four_d) {
    // Each head a copy in T of its slice, on every thread: a pass over all
    // the inputs, which on one thread held back the two-thread speed-up.
    const int64_t nq = B * H, nkv = B * KV;
    kernel::parallel_for(nq + 2 * nkv, threads, [&](int64_t u, int) {
      if (u < nq) {
        x.q[static_cast<size_t>(u)] = four_d_head<T>(p.query_in, u / H, u % H);
      } else if (u < nq + nkv) {
        x.k[static_cast<size_t>(u - nq)] = four_d_head<T>(p.key_in, (u - nq) / KV, (u - nq) % KV);
      } else {
        const int64_t g = u - nq - nkv;
        x.v[static_cast<size_t>(g)] = four_d_head<T>(p.value_in, g / KV, g % KV);
      }
    });
  }
  const Projections<T> w(p.params);
  for (int64_t b = 0; b < B && !p.four_d; ++b) {
    const ItemInputs<T> in = item_inputs(p, b, w, true);
    for (int64_t h = 0; h < H; ++h) x.q[static_cast<size_t>(b * H + h)] = head_block(in.q, h, H);
    for (int64_t g = 0; g < KV; ++g) {
      x.k[static_cast<size_t>(b * KV + g)] = head_block(in.k, g, KV);
      x.v[static_cast<size_t>(b * KV + g)] = head_block(in.v, g, KV);
    }
  }
  // The Q/K norm, then RoPE, while the heads are prepared, once per K/V
  // head, before cosine.
  if (p.qk_norm > 0) {
    kernel::parallel_for(
        static_cast<int64_t>(x.q.size() + x.k.size()), threads, [&](int64_t u, int) {
          const auto nq = static_cast<int64_t>(x.q.size());
          if (u < nq) {
            apply_qk_norm(x.q[static_cast<size_t>(u)], p.qk_norm, p.params.q_norm);
          } else {
            apply_qk_norm(x.k[static_cast<size_t>(u - nq)], p.qk_norm, p.params.k_norm);
          }
        });
  }
  if (p.rope) {
    std::vector<Mat<T>*> q_rot, k_rot;
    for (Mat<T>& m : x.q) q_rot.push_back(&m);
    for (Mat<T>& m : x.k) k_rot.push_back(&m);
    if (p.rope->q_offset == p.rope->k_offset) {  // one angle per position for both
      q_rot.insert(q_rot.end(), k_rot.begin(), k_rot.end());
      apply_rope(q_rot, *p.rope, p.rope->q_offset);
    } else {
      apply_rope(q_rot, *p.rope, p.rope->q_offset);
      apply_rope(k_rot, *p.rope, p.rope->k_offset);
    }
  }
  if (cosine) {
    for (Mat<T>& m : x.q) normalize_rows(m);
    for (Mat<T>& m : x.k) normalize_rows(m);
  }
  x.qi = inputs_of(x.q);
  x.ki = inputs_of(x.k);
  x.vi = inputs_of(x.v);
  x.d = x.q[0].cols();
  x.dv = x.v[0].cols();
  return x;
}

kernel::ScoreRules score_rules(const Problem& p) {
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
  return rules;
}

// The largest row norm of a head as the kernels multiply it: its values
// rounded to T (a value past the float range is inf there). Read in place
// from the caller's doubles, a float copy is made for this rare look.
template <class T, class S>
double head_norm(const S* x, int64_t rows, int64_t d) {
  if constexpr (std::is_same_v<S, T>) {
    return max_row_norm(x, rows, d);
  } else {
    const Mat<T> m = Eigen::Map<const Mat<S>>(x, rows, d).template cast<T>();
    return max_row_norm(m.data(), rows, d);
  }
}

// |q·k| <= ‖q‖‖k‖: whether a score could overflow T. The range check's
// `known` norms bound the heads' up to the rounding of the projections
// and RoPE's rotation in T (taken as a factor 2), and cosine scaling makes
// them 1: when those are far from the limit, with the multiplier that goes
// into the queries, the heads need not be read again.
template <class T>
bool scores_may_overflow(const Heads<T>& x, int64_t len_q, int64_t len_k,
                         const kernel::ScoreRules& rules, int threads, const HeadNorms& known,
                         bool cosine) {
  const double limit = static_cast<double>(std::numeric_limits<T>::max()) / 16;
  const double mult = rules.norm ? 1.0 : std::fabs(rules.mult);
  const double q = cosine ? 1.0 : 2 * known.q, k = cosine ? 1.0 : 2 * known.k;
  if (q < limit && k < limit && q * mult < limit && q * k < limit && q * k * mult < limit) {
    return false;
  }
  // Every query head's and key head's norm in one pass over the threads.
  const int64_t nq = static_cast<int64_t>(x.qi.size());
  const std::vector<double> norm =
      parallel_values(nq + static_cast<int64_t>(x.ki.size()), threads, [&](int64_t u) {
        const bool query = u < nq;
        const kernel::Input<T>& in =
            query ? x.qi[static_cast<size_t>(u)] : x.ki[static_cast<size_t>(u - nq)];
        const int64_t rows = query ? len_q : len_k;
        return in.visit([&](const auto* m) { return head_norm<T>(m, rows, x.d); });
      });
  const double qmax = *std::max_element(norm.begin(), norm.begin() + nq);
  const double kmax = *std::max_element(norm.begin() + nq, norm.end());
  const double bound = qmax * kmax;
  return !(bound < limit && bound * mult < limit);
}

// The maps the kernels write when the request keeps them, as the result
// holds them: doubles (f32 runs have the kernel widen each row as it is
// done, so no float copy of the n×n maps is ever allocated), and the mask
// flags. Not zeroed first: the kernel writes every cell of every map.
template <class T>
struct Maps {
  bool keep = false;
  Values<double> weights, scores;
  Values<uint8_t> masked;

  Maps(const ComputeRequest& req, int64_t cells) {
    keep = req.weights || req.scores;
    if (!keep) return;
    const size_t n = static_cast<size_t>(cells);
    assign_big(masked, n);
    assign_big(weights, n);
    if (req.scores) assign_big(scores, n);
  }

  // Task t's part of the maps, from cell `off` on.
  void point(kernel::HeadTask<T>& t, int64_t off) {
    if (!keep) return;
    t.weights = weights.data() + off;
    t.scores = scores.empty() ? nullptr : scores.data() + off;
    t.masked = masked.data() + off;
  }

  // Hands the maps to the result as finish_maps() shapes them.
  void finish(const Problem& p, const ComputeRequest& req, Result& r) {
    finish_maps(p, req, req.weights ? &weights : nullptr, req.scores ? &scores : nullptr, masked,
                r);
  }
};

// Where the heads' outputs go: 4D output straight into the result
// ([batch][heads][len_q][dv], the order of the tasks), otherwise one
// matrix per head, concatenated and projected afterwards.
template <class T>
struct Outputs {
  Tensor<double> four_d;
  std::vector<Mat<T>> heads;

  Outputs(const Problem& p, int64_t dv) {
    const int64_t B = p.batch, H = p.heads, Lq = p.len_q;
    if (p.four_d) {
      four_d = Tensor<double>({B, H, Lq, dv}, Values<double>(static_cast<size_t>(B * H * Lq * dv)));
    } else {
      heads.assign(static_cast<size_t>(B * H), Mat<T>(Lq, dv));
    }
  }

  void point(kernel::HeadTask<T>& t, size_t bh) {
    if (!heads.empty()) {
      t.out = heads[bh].data();
      return;
    }
    double* at = four_d.data() + static_cast<int64_t>(bh) * t.len_q * t.dv;
    if constexpr (std::is_same_v<T, double>) {
      t.out = at;
    } else {
      t.out_wide = at;
    }
  }
};

// One kernel task per (batch, query head), writing head b·H + h of `out`.
template <class T>
std::vector<kernel::HeadTask<T>> head_tasks(const Problem& p, Heads<T>& x,
                                            const std::vector<MaskView>& views, Maps<T>& maps,
                                            Outputs<T>& out) {
  const int64_t H = p.heads, KV = p.kv(), Lq = p.len_q, Lk = p.len_k;
  std::vector<kernel::HeadTask<T>> tasks;
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const size_t bh = static_cast<size_t>(b * H + h);
      const size_t bg = static_cast<size_t>(b * KV + p.kv_head(h));
      kernel::HeadTask<T> t;
      t.q = x.qi[bh];
      t.k = x.ki[bg];
      t.v = x.vi[bg];
      t.len_q = Lq;
      t.len_k = Lk;
      t.d = x.d;
      t.dv = x.dv;
      out.point(t, bh);
      if (!p.alibi.empty()) {
        t.alibi = p.alibi[static_cast<size_t>(h)];
        t.alibi_diagonal = p.masks.diagonal;
      }
      if (!p.sinks.empty()) {
        t.has_sink = true;
        t.sink = p.sinks[static_cast<size_t>(h)];
      }
      maps.point(t, static_cast<int64_t>(bh) * Lq * Lk);
      t.masks = views.empty() ? nullptr : &views[bh];
      t.batch = b;
      t.head = h;
      t.heads = H;
      tasks.push_back(t);
    }
  }
  return tasks;
}

// The result's output from the heads' outputs: the 4D output as the
// kernels wrote it; otherwise the heads concatenated per batch item, then
// the output projection.
template <class T>
Tensor<double> assemble_output(const Problem& p, Outputs<T>& heads) {
  if (p.four_d) return std::move(heads.four_d);
  const std::vector<Mat<T>>& oh = heads.heads;
  const int64_t B = p.batch, H = p.heads, Lq = p.len_q;
  Tensor<double> out({B, Lq, p.d_out}, Values<double>(static_cast<size_t>(B * Lq * p.d_out)));
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
  return out;
}

}  // namespace

template <class T>
std::optional<Result> compute_fast(const Problem& p, const ComputeRequest& req,
                                   const HeadNorms& norms, bool* output_finite) {
  const int threads = req.threads > 0 ? req.threads : kernel::hardware_threads();
  Heads<T> x = prepare_heads<T>(p, threads);
  const kernel::ScoreRules rules = score_rules(p);
  if (scores_may_overflow(x, p.len_q, p.len_k, rules, threads, norms,
                          p.scale.kind == ScaleKind::kCosine)) {
    return std::nullopt;
  }
  std::vector<MaskView> views;
  if (p.masks.any()) {
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t h = 0; h < p.heads; ++h) views.emplace_back(p, b, h);
    }
  }
  Maps<T> maps(req, p.batch * p.heads * p.len_q * p.len_k);
  Outputs<T> out(p, x.dv);
  std::vector<kernel::HeadTask<T>> tasks = head_tasks(p, x, views, maps, out);
  const kernel::RunReport run = kernel::run_heads(tasks, rules, threads, req.progress);
  const std::vector<kernel::FullyMaskedRow>& fully = run.fully_masked;
  if (p.fully_masked == FullyMasked::kError && !fully.empty()) {
    raise_fully_masked(p, fully[0].batch, fully[0].head, fully[0].query);
  }
  // 4D output is the kernels' own: finite there, it needs no second look.
  if (output_finite) *output_finite = p.four_d && run.output_finite;

  Result r;
  r.dtype = req.dtype;
  for (const auto& f : fully)
    r.fully_masked_rows.push_back(FullyMaskedRow{f.batch, f.head, f.query});
  r.output = assemble_output(p, out);
  if (maps.keep) maps.finish(p, req, r);
  return r;
}

template std::optional<Result> compute_fast<float>(const Problem&, const ComputeRequest&,
                                                   const HeadNorms&, bool*);
template std::optional<Result> compute_fast<double>(const Problem&, const ComputeRequest&,
                                                    const HeadNorms&, bool*);

}  // namespace attn::detail
