// The materializing engine: per batch item, projections; per head, the full
// score matrix, scaling, bias, masks, softmax, dropout and the weighted sum;
// then head concatenation and the output projection. Every step is reported
// to the observer when there is one.
#include "attn/attention.h"

#include <cmath>

#include "attn/error.h"
#include "base/big_buffer.h"
#include "engine/engine.h"
#include "engine/score_range.h"
#include "kernel/dropout.h"
#include "problem/variant_unit.h"

namespace attn {

Shape weights_shape(const Problem& p, bool average_heads) {
  Shape s = {p.len_q, p.len_k};
  if (p.four_d) {
    if (!average_heads) s.insert(s.begin(), p.heads);
    s.insert(s.begin(), p.batch);
    return s;
  }
  if (p.heads > 1 && !average_heads) s.insert(s.begin(), p.heads);
  if (p.batched) s.insert(s.begin(), p.batch);
  return s;
}

namespace detail {

void finish_maps(const Problem& p, const ComputeRequest& req, Values<double>* weights,
                 Values<double>* scores, Values<uint8_t>& masked, Result& r) {
  const Shape shape = weights_shape(p, req.average_heads);
  const bool average = req.average_heads && p.heads > 1;
  const int64_t H = p.heads, qk = p.len_q * p.len_k;
  auto reduce = [&](Values<double>& full) {
    if (!average) return Tensor<double>(shape, std::move(full));
    Values<double> mean(static_cast<size_t>(p.batch * qk), 0.0);
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t c = 0; c < qk; ++c) {
          mean[static_cast<size_t>(b * qk + c)] += full[static_cast<size_t>((b * H + h) * qk + c)];
        }
      }
      for (int64_t c = 0; c < qk; ++c)
        mean[static_cast<size_t>(b * qk + c)] /= static_cast<double>(H);
    }
    return Tensor<double>(shape, std::move(mean));
  };
  if (weights) r.weights = reduce(*weights);
  if (scores) r.scores = reduce(*scores);
  if (!average) {
    r.masked = Tensor<uint8_t>(shape, std::move(masked));
  } else {
    // A cell is shown masked in the average when it is masked in every head.
    Values<uint8_t> all(static_cast<size_t>(p.batch * qk), 1);
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t c = 0; c < qk; ++c) {
          all[static_cast<size_t>(b * qk + c)] &= masked[static_cast<size_t>((b * H + h) * qk + c)];
        }
      }
    }
    r.masked = Tensor<uint8_t>(shape, std::move(all));
  }
}

void raise_fully_masked(const Problem& p, int64_t b, int64_t h, int64_t i) {
  std::string where = "query " + std::to_string(i);
  if (!p.query_labels.empty()) where += " (\"" + p.query_labels[static_cast<size_t>(i)] + "\")";
  if (p.batched) where += " of batch " + std::to_string(b);
  if (p.heads > 1) where += " in head " + std::to_string(h);
  throw_input(p.source, where + " has every key masked (fully_masked: error)");
}

}  // namespace detail

namespace {

using detail::MaskView;
using detail::Mat;
using detail::Vec;

using detail::cast;

// The reference engine. A variant with a pipeline of its own computes each
// batch item through it, as an EngineItem.
template <class T>
class Engine final : public detail::EngineItem<T> {
  using Base = detail::EngineItem<T>;
  using Base::emit;
  using Base::reading;
  using Base::symbols;

 public:
  Engine(const Problem& p, const ComputeRequest& req, Observer* obs)
      : p_(p), unit_(detail::variant_unit(p.variant)), req_(req), obs_(obs), proj_(p.params) {
    const Params& w = p.params;
    Wo_ = cast<T>(w.W_o);
    bo_ = cast<T>(w.b_o);
    keep_maps_ = req.weights || req.scores;
    if (keep_maps_) {
      const size_t cells = static_cast<size_t>(p.batch * p.heads * p.len_q * p.len_k);
      // Zeros first: the reference path is for clarity, not speed.
      if (req.weights) assign_big(weights_, cells, 0.0);
      if (req.scores) assign_big(scores_, cells, 0.0);
      assign_big(masked_, cells, uint8_t{0});
    }
  }

  Result run() {
    Result r;
    r.dtype = req_.dtype;
    Shape out_shape;
    if (p_.four_d) {
      out_shape = {p_.batch, p_.heads, p_.len_q, p_.d_out};
    } else {
      out_shape = {p_.batch, p_.len_q, p_.d_out};
    }
    output_ = Tensor<double>(out_shape);
    const detail::ItemFn<T> own_pipeline = detail::variant_item<T>(unit_);
    for (int64_t b = 0; b < p_.batch; ++b) {
      if (own_pipeline) {
        own_pipeline(*this, b);
      } else if (p_.four_d) {
        four_d_item(b);
      } else {
        batch_item(b);
      }
    }
    if (!p_.batched) {
      Shape s = out_shape;
      s.erase(s.begin());
      output_.reshape(s);
    }
    r.output = std::move(output_);
    if (keep_maps_) finish_maps(r);
    r.fully_masked_rows = std::move(fully_masked_rows_);
    return r;
  }

 private:
  // ---- observer helpers -------------------------------------------------
  const Problem& problem() const override { return p_; }
  bool observing() const override { return obs_ != nullptr; }

  const std::vector<std::string>& qlabels() const { return p_.query_labels; }
  const std::vector<std::string>& klabels() const { return p_.key_labels; }

  // A step as data: its id, what it computed (facts; the run's mode and
  // variant are filled in), where (batch b, head h) and the numbers. The
  // trace renderers word it.
  TraceStep step(StepId id, StepFacts facts, int64_t b, int64_t h) const {
    TraceStep s;
    s.id = id;
    s.facts = std::move(facts);
    s.facts.mode = p_.mode;
    s.facts.variant = p_.variant;
    s.batch = p_.batched ? b : -1;
    s.head = p_.heads > 1 ? h : -1;
    return s;
  }

  void emit_step(StepId id, StepFacts facts, int64_t b, int64_t h, MatrixR values,
                 const std::vector<std::string>& rows, const std::vector<std::string>& cols,
                 const std::vector<uint8_t>* masked) override {
    TraceStep s = step(id, std::move(facts), b, h);
    s.values = std::move(values);
    s.row_labels = rows;
    s.col_labels = cols;
    if (masked) s.masked = *masked;
    obs_->step(s);
  }

  // Of a key or value block: the key/value head query head h reads, when
  // the heads are grouped.
  StepFacts kv_block(std::string symbol, int64_t h) const {
    StepFacts f = symbols(std::move(symbol));
    if (p_.grouped()) {
      f.kv_head = p_.kv_head(h);
      f.kv_heads = p_.kv();
    }
    return f;
  }

  // The Q/K norm of one head's queries and keys (before RoPE).
  void qk_normalize(int64_t b, int64_t h, Mat<T>& q, Mat<T>& k) {
    detail::apply_qk_norm(q, p_.qk_norm, p_.params.q_norm);
    detail::apply_qk_norm(k, p_.qk_norm, p_.params.k_norm);
    if (!observing()) return;
    StepFacts f;
    f.qk_norm = p_.qk_norm;
    f.symbol = "Q";
    f.bias = p_.params.q_norm.has_value();  // weighted
    emit(StepId::kQkNormQ, f, b, h, q, qlabels());
    f.symbol = "K";
    f.bias = p_.params.k_norm.has_value();
    emit(StepId::kQkNormK, f, b, h, k, klabels());
  }

  // RoPE on one head's queries and keys (before any scoring).
  void rotate(int64_t b, int64_t h, Mat<T>& q, Mat<T>& k) {
    const Rope& r = *p_.rope;
    detail::apply_rope(q, r, r.q_offset);
    detail::apply_rope(k, r, r.k_offset);
    if (!observing()) return;
    const int64_t half = r.dims / 2;
    const int64_t n = std::max(q.rows() + r.q_offset, k.rows() + r.k_offset);
    const int64_t first = std::min(r.q_offset, r.k_offset);
    Mat<T> angles(n - first, half), cosines(n - first, half), sines(n - first, half);
    std::vector<std::string> rows, cols;
    for (int64_t t = first; t < n; ++t) rows.push_back("t=" + std::to_string(t));
    for (int64_t p = 0; p < half; ++p) {
      const int64_t a = r.layout == RopeLayout::kHalf ? p : 2 * p;
      const int64_t c = r.layout == RopeLayout::kHalf ? p + half : 2 * p + 1;
      cols.push_back("(" + std::to_string(a) + "," + std::to_string(c) + ")");
    }
    for (int64_t t = first; t < n; ++t) {
      for (int64_t p = 0; p < half; ++p) {
        const double a = static_cast<double>(t) * r.inv_freq[static_cast<size_t>(p)];
        angles(t - first, p) = static_cast<T>(a);
        cosines(t - first, p) = static_cast<T>(std::cos(a) * r.attention);
        sines(t - first, p) = static_cast<T>(std::sin(a) * r.attention);
      }
    }
    StepFacts f;
    f.rope = r;
    f.rope_width = q.cols();
    emit(StepId::kRopeAngles, f, b, h, angles, rows, cols);
    emit(StepId::kRopeCos, {}, b, h, cosines, rows, cols);
    emit(StepId::kRopeSin, {}, b, h, sines, rows, cols);
    emit(StepId::kRopeQ, {}, b, h, q, qlabels());
    emit(StepId::kRopeK, {}, b, h, k, klabels());
  }

  // ---- projections -------------------------------------------------------
  // The projection step of out_name (Q, K or V) from src_name, when W is
  // given.
  void emit_projection(StepId id, const char* out_name, const std::string& src_name, bool has_bias,
                       int64_t b, const Mat<T>& y, const std::vector<std::string>& labels) {
    StepFacts f = symbols(out_name, src_name);
    f.bias = has_bias;
    emit(id, f, b, -1, y, labels);
  }

  void batch_item(int64_t b) {
    const bool project_qk = unit_.projects_qk;
    const detail::ItemInputs<T> x = detail::item_inputs(p_, b, proj_, project_qk);
    const bool q_projected = project_qk && proj_.W_q, k_projected = project_qk && proj_.W_k;
    const bool v_projected = proj_.W_v.has_value();
    if (observing()) {
      emit_inputs(b, x.xq, x.xk, x.xv);
      if (q_projected)
        emit_projection(StepId::kProjectionQ, "Q", p_.query_name, proj_.b_q.has_value(), b, x.q,
                        qlabels());
      if (k_projected)
        emit_projection(StepId::kProjectionK, "K", p_.key_name, proj_.b_k.has_value(), b, x.k,
                        klabels());
      if (v_projected)
        emit_projection(StepId::kProjectionV, "V", p_.value_name, proj_.b_v.has_value(), b, x.v,
                        klabels());
      if (b == 0) emit_sources(q_projected, k_projected, v_projected);
    }
    const Mat<T>& q = x.q;
    const Mat<T>& k = x.k;
    const Mat<T>& v = x.v;

    const int64_t H = p_.heads;
    // Keys and values have kv_heads column blocks; query head h reads
    // block kv_head(h) (the same block as h without grouping).
    const int64_t KV = p_.kv();
    const int64_t dq = q.cols() / H, dk = k.cols() / KV, dv = v.cols() / KV;
    Mat<T> concat(p_.len_q, H * dv);
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = p_.kv_head(h);
      Mat<T> qh = detail::head_block(q, h, H);
      Mat<T> kh = detail::head_block(k, g, KV);
      Mat<T> vh = detail::head_block(v, g, KV);
      if (observing() && H > 1) {
        emit(StepId::kHeadQ, block("Q", h, h, dq), b, h, qh, qlabels());
        emit(StepId::kHeadK, block("K", h, g, dk), b, h, kh, klabels());
        emit(StepId::kHeadV, block("V", h, g, dv), b, h, vh, klabels());
      }
      Mat<T> oh = attend(b, h, qh, kh, vh);
      concat.middleCols(h * dv, dv) = oh;
      report_progress(b, h, H);
    }
    Mat<T> out = concat;
    if (observing() && H > 1) {
      StepFacts f;
      f.heads = H;
      emit(StepId::kConcat, f, b, -1, concat, qlabels());
    }
    if (Wo_) out = concat * *Wo_;
    if (bo_) out.rowwise() += bo_->transpose();
    if (observing() && (Wo_ || bo_)) {
      StepFacts f = reading(H > 1 ? "C" : "O");
      f.weight = Wo_.has_value();
      f.bias = bo_.has_value();
      emit(StepId::kOutputProjection, f, b, -1, out, qlabels());
    }
    if (observing()) emit(StepId::kOutput, {}, b, -1, out, qlabels());
    store_output(b, -1, out);
  }

  // Head h's block of Q, K or V: the columns of head g (h, or the
  // key/value head h reads) of width w.
  StepFacts block(const char* symbol, int64_t h, int64_t g, int64_t w) const {
    StepFacts f = symbol[0] == 'Q' ? symbols(symbol) : kv_block(symbol, h);
    f.first_col = g * w;
    f.end_col = (g + 1) * w;
    return f;
  }

  void four_d_item(int64_t b) {
    for (int64_t h = 0; h < p_.heads; ++h) {
      const int64_t g = p_.kv_head(h);  // K/V have kv_heads on axis 1
      Mat<T> qh = detail::four_d_head<T>(p_.query_in, b, h);
      Mat<T> kh = detail::four_d_head<T>(p_.key_in, b, g);
      Mat<T> vh = detail::four_d_head<T>(p_.value_in, b, g);
      if (observing()) {
        emit(StepId::kInputQ, symbols("Q"), b, h, qh, qlabels());
        emit(StepId::kInputK, kv_block("K", h), b, h, kh, klabels());
        emit(StepId::kInputV, kv_block("V", h), b, h, vh, klabels());
      }
      const Mat<T> out = attend(b, h, qh, kh, vh);
      if (observing()) emit(StepId::kOutput, {}, b, h, out, qlabels());
      store_output(b, h, out);
      report_progress(b, h, p_.heads);
    }
  }

  void emit_inputs(int64_t b, const Mat<T>& xq, const Mat<T>& xk, const Mat<T>& xv) {
    switch (p_.mode) {
      case Mode::kSelf:
        emit(StepId::kInputX, symbols("X"), b, -1, xq, qlabels());
        break;
      case Mode::kCross:
        emit(StepId::kInputX, symbols("X"), b, -1, xq, qlabels());
        emit(StepId::kInputY, symbols("Y"), b, -1, xk, klabels());
        break;
      case Mode::kQkv:
        emit(StepId::kInputQ, symbols("Q"), b, -1, xq, qlabels());
        emit(StepId::kInputK, symbols("K"), b, -1, xk, klabels());
        if (p_.value_name == "V") emit(StepId::kInputV, symbols("V"), b, -1, xv, klabels());
        break;
    }
  }

  // Where the unprojected Q, K and V come from ("Q = K = V = X" in self
  // mode), so that the scores' formula names nothing undefined. Said once,
  // for every batch entry.
  void emit_sources(bool q_projected, bool k_projected, bool v_projected) {
    StepFacts f;
    auto add = [&](const char* name, const std::string& src) {
      if (src != name) f.aliases.emplace_back(name, src);  // qkv mode: Q is the given Q
    };
    if (!q_projected) add("Q", p_.query_name);
    if (!k_projected) add("K", p_.key_name);
    if (!v_projected) add("V", p_.value_name);
    if (f.aliases.empty()) return;
    TraceStep s = step(StepId::kSources, std::move(f), 0, -1);
    s.batch = -1;  // said once, for every batch entry
    obs_->step(s);
  }

  void store_output(int64_t b, int64_t h, const Mat<T>& out) override {
    const int64_t n = out.rows() * out.cols();
    const int64_t base = (h < 0 ? b : b * p_.heads + h) * n;
    Eigen::Map<MatrixR>(output_.data() + base, out.rows(), out.cols()) =
        out.template cast<double>();
  }

  // ---- one head ----------------------------------------------------------
  // Raw scores of the variant (before any scaling).
  Mat<T> raw_scores(int64_t b, int64_t h, Mat<T>& q, Mat<T>& k) {
    // cosine: every variant forms its scores from L2-normalised rows.
    if (p_.scale.kind == ScaleKind::kCosine) {
      detail::normalize_rows(q);
      detail::normalize_rows(k);
      if (observing()) {
        emit(StepId::kCosineQ, {}, b, h, q, qlabels());
        emit(StepId::kCosineK, {}, b, h, k, klabels());
      }
    }
    return scored(b, h, q, k);
  }

  // The variant's scores of queries q against keys k, and its terms and
  // the scores reported as steps.
  Mat<T> scored(int64_t b, int64_t h, const Mat<T>& q, const Mat<T>& k) override {
    detail::HeadScores<T> r = detail::variant_scores(unit_, p_, q, k);
    if (observing()) {
      for (const detail::ScoreTerm<T>& t : r.terms) {
        emit(t.id, {}, b, h, t.values, t.key_rows ? klabels() : qlabels(),
             t.key_cols ? klabels() : std::vector<std::string>{});
      }
      StepFacts f;
      f.cosine = p_.scale.kind == ScaleKind::kCosine;
      emit(StepId::kScores, f, b, h, r.scores, qlabels(), klabels());
    }
    return std::move(r.scores);
  }

  // The factor the scores are multiplied by (before the temperature).
  double head_factor(const Mat<T>& s) const {
    if (p_.scale.kind == ScaleKind::kNorm) {
      const double fro =
          static_cast<double>(Eigen::Map<const Vec<T>>(s.data(), s.size()).stableNorm());
      return 1.0 / std::max(fro, 1e-12);
    }
    return scale_factor(p_);
  }

  // The scale factor of a head and what it is computed from.
  StepFacts scaling(double factor) const {
    StepFacts f;
    f.scale = p_.scale.kind;
    f.factor = factor;
    f.temperature = p_.temperature;
    f.d_k = p_.head_dim_q();
    f.len_k = p_.len_k;
    return f;
  }

  // Attention of one head; returns the head output [Lq][dv].
  Mat<T> attend(int64_t b, int64_t h, Mat<T>& q, Mat<T>& k, const Mat<T>& v) {
    if (p_.qk_norm > 0) qk_normalize(b, h, q, k);
    if (p_.rope) rotate(b, h, q, k);
    Mat<T> s = raw_scores(b, h, q, k);
    const double factor = head_factor(s);
    const double mult = factor / p_.temperature;
    // The name of the scores so far: S, or S' once scaled or biased, so
    // that every formula names a matrix an earlier step defined.
    std::string sn = "S";
    scale_scores(b, h, s, factor, sn);
    if (p_.softcap > 0) softcap_scores(b, h, s);
    const MaskView mv(p_, b, h);
    add_biases(b, h, s, mv, sn);
    const std::vector<uint8_t> flags = mask_scores(b, h, s, mv, sn);
    softmax_rows(b, h, s, flags, sn);
    keep_weights(b, h, s);
    if (p_.dropout > 0) drop_weights(b, h, s);

    Mat<T> o = s * v;
    const bool at_output = p_.scale_at == ScaleAt::kOutput && mult != 1.0;
    if (observing()) {
      StepFacts f;
      f.dropout = p_.dropout;  // of the weights after dropout, Ã
      TraceStep st = step(StepId::kWeightedSum, std::move(f), b, h);
      st.values = o.template cast<double>();
      st.weights = s.template cast<double>();
      st.value_rows = v.template cast<double>();
      st.row_labels = qlabels();
      st.value_labels = klabels();
      obs_->step(st);
    }
    if (at_output) {
      o *= static_cast<T>(factor);
      if (p_.temperature != 1.0) o /= static_cast<T>(p_.temperature);
      if (observing()) emit(StepId::kOutputScaled, scaling(factor), b, h, o, qlabels());
    }
    if (observing() && p_.heads > 1) emit(StepId::kHeadOutput, {}, b, h, o, qlabels());
    return o;
  }

  // Scale (and temperature) on the scores, unless the scale applies to
  // the output.
  void scale_scores(int64_t b, int64_t h, Mat<T>& s, double factor, std::string& sn) {
    const double mult = factor / p_.temperature;
    const bool at_scores = p_.scale_at == ScaleAt::kScores;
    if (at_scores && mult != 1.0) {
      if (p_.temperature == 1.0) {
        s *= static_cast<T>(factor);
      } else {
        s *= static_cast<T>(factor);
        s /= static_cast<T>(p_.temperature);
      }
    }
    if (observing() && at_scores && mult != 1.0) {
      emit(StepId::kScaled, scaling(factor), b, h, s, qlabels(), klabels());
      sn = "S'";
    }
  }

  // Soft-capping: c·tanh(s/c).
  void softcap_scores(int64_t b, int64_t h, Mat<T>& s) {
    if (observing()) emit(StepId::kSoftcapRaw, {}, b, h, s, qlabels(), klabels());
    const T cap = static_cast<T>(p_.softcap);
    s = s.unaryExpr([cap](T x) { return detail::softcap_score(x, cap); });
    if (observing()) {
      StepFacts f;
      f.softcap = p_.softcap;
      emit(StepId::kSoftcap, f, b, h, s, qlabels(), klabels());
    }
  }

  // The additive bias matrix (attn_bias) and ALiBi's distances.
  void add_biases(int64_t b, int64_t h, Mat<T>& s, const MaskView& mv, std::string& sn) {
    const int64_t Lq = s.rows(), Lk = s.cols();
    if (mv.has_bias()) {
      for (int64_t i = 0; i < Lq; ++i) {
        const double* br = mv.bias_row(i);
        for (int64_t j = 0; j < Lk; ++j) s(i, j) += static_cast<T>(br[j]);
      }
      if (observing()) {
        emit(StepId::kBiased, reading(sn), b, h, s, qlabels(), klabels());
        sn = "S'";
      }
    }
    if (!p_.alibi.empty()) {
      const double m = p_.alibi[static_cast<size_t>(h)];
      Mat<T> bias(Lq, Lk);
      for (int64_t i = 0; i < Lq; ++i) {
        for (int64_t j = 0; j < Lk; ++j) {
          // The distance of the positions q_offset + i and k_offset + j.
          bias(i, j) =
              static_cast<T>(-m * static_cast<double>(std::llabs(i + p_.masks.diagonal - j)));
        }
      }
      s += bias;
      if (observing()) {
        StepFacts f;
        f.slope = m;
        emit(StepId::kAlibiBias, f, b, h, bias, qlabels(), klabels());
        emit(StepId::kAlibi, {}, b, h, s, qlabels(), klabels());
      }
    }
  }

  // Masks: masked scores become mask_fill. Returns the cells' flags (kept
  // maps and traces only: the heatmap and the trace show masked cells as
  // masked, not as a huge negative number).
  std::vector<uint8_t> mask_scores(int64_t b, int64_t h, Mat<T>& s, const MaskView& mv,
                                   const std::string& sn) {
    const int64_t Lq = s.rows(), Lk = s.cols();
    const bool any_mask = p_.masks.any() && (mv.has_dense() || p_.masks.causal ||
                                             !p_.masks.valid_lens.empty() || p_.masks.window);
    std::vector<uint8_t> flags;
    const bool want_flags = keep_maps_ || observing();
    if (want_flags) flags.assign(static_cast<size_t>(Lq * Lk), 0);
    keep_scores(b, h, s);
    if (any_mask) {
      const T fill = static_cast<T>(p_.mask_fill);
      for (int64_t i = 0; i < Lq; ++i) {
        for (int64_t j = 0; j < Lk; ++j) {
          if (mv.masked(i, j)) {
            s(i, j) = fill;
            if (want_flags) flags[static_cast<size_t>(i * Lk + j)] = 1;
          }
        }
      }
      if (observing()) emit(StepId::kMasked, mask_facts(sn), b, h, s, qlabels(), klabels(), &flags);
    }
    // Cells with a score of -inf (from the bias) count as masked for display.
    if (want_flags) {
      for (int64_t c = 0; c < Lq * Lk; ++c) {
        if (s.data()[c] == -std::numeric_limits<T>::infinity()) flags[static_cast<size_t>(c)] = 1;
      }
    }
    keep_flags(b, h, flags);
    return flags;
  }

  // Softmax over keys, row by row (with the sink in the denominator).
  void softmax_rows(int64_t b, int64_t h, Mat<T>& s, const std::vector<uint8_t>& flags,
                    const std::string& sn) {
    const int64_t Lq = s.rows(), Lk = s.cols();
    Mat<T> exps;
    Vec<T> row_max, row_sum;
    if (observing()) {
      exps = Mat<T>::Zero(Lq, Lk);
      row_max.resize(Lq);
      row_sum.resize(Lq);
    }
    int64_t dead_rows = 0;
    const bool sinks = !p_.sinks.empty();
    Vec<T> sink_share;
    if (sinks) sink_share.resize(Lq);
    const T sink = sinks ? static_cast<T>(p_.sinks[static_cast<size_t>(h)]) : T(0);
    for (int64_t i = 0; i < Lq; ++i) {
      T* row = s.data() + i * Lk;
      T* erow = observing() ? exps.data() + i * Lk : nullptr;
      auto st = sinks ? detail::softmax_row_sink(row, Lk, sink, erow, &sink_share[i])
                      : detail::softmax_row(row, Lk, erow);
      if (observing()) {
        row_max[i] = st.max;
        row_sum[i] = st.sum;
      }
      if (st.fully_masked && sinks) {
        // The sink takes the whole row: zero weights, no warning.
        std::fill(row, row + Lk, T(0));
      } else if (st.fully_masked) {
        fully_masked(b, h, i, row, Lk);
        ++dead_rows;
      }
    }
    if (observing()) {
      // The softmax of the scores sn: the same facts for each of its steps.
      StepFacts f = reading(sn);
      if (sinks) f.sink = static_cast<double>(sink);
      f.fully_masked_rows = dead_rows > 0;
      f.fully_masked = p_.fully_masked;
      emit(StepId::kRowMax, f, b, h, row_max, qlabels());
      emit(StepId::kExp, f, b, h, exps, qlabels(), klabels(), display_flags(flags));
      emit(StepId::kRowSum, f, b, h, row_sum, qlabels());
      if (sinks) emit(StepId::kSinkShare, f, b, h, sink_share, qlabels());
      emit(StepId::kWeights, f, b, h, s, qlabels(), klabels(), display_flags(flags));
    }
  }

  // Inverted dropout on the weights (the reported weights are before it).
  void drop_weights(int64_t b, int64_t h, Mat<T>& s) {
    const int64_t Lq = s.rows(), Lk = s.cols();
    const T keep_scale = static_cast<T>(1.0 / (1.0 - p_.dropout));
    const uint64_t base =
        static_cast<uint64_t>((b * p_.heads + h) * Lq) * static_cast<uint64_t>(Lk);
    for (int64_t i = 0; i < Lq; ++i) {
      for (int64_t j = 0; j < Lk; ++j) {
        const uint64_t counter = base + static_cast<uint64_t>(i * Lk + j);
        s(i, j) = dropout_keep(p_.seed, counter, p_.dropout) ? s(i, j) * keep_scale : T(0);
      }
    }
    if (observing()) {
      StepFacts f;
      f.dropout = p_.dropout;
      f.seed = p_.seed;
      emit(StepId::kDropout, f, b, h, s, qlabels(), klabels());
    }
  }

  // Masked cells are shown as masked in the exponentials and weights only
  // under an infinite fill; with a finite one they carry real weight.
  const std::vector<uint8_t>* display_flags(const std::vector<uint8_t>& flags) const {
    return std::isinf(p_.mask_fill) ? &flags : nullptr;
  }

  // The masked scores sn: what masked cells become, and the window.
  StepFacts mask_facts(const std::string& sn) const override {
    StepFacts f = reading(sn);
    f.mask_fill = p_.mask_fill;
    f.window = p_.masks.window;
    f.window_left = p_.masks.window_left;
    f.window_right = p_.masks.window_right;
    f.diagonal = p_.masks.diagonal;
    return f;
  }

  void fully_masked(int64_t b, int64_t h, int64_t i, T* row, int64_t n) override {
    if (p_.fully_masked == FullyMasked::kError) detail::raise_fully_masked(p_, b, h, i);
    detail::fill_fully_masked(row, n, p_.fully_masked);
    fully_masked_rows_.push_back(FullyMaskedRow{b, h, i});
  }

  // ---- kept maps -----------------------------------------------------------
  size_t map_offset(int64_t b, int64_t h) const {
    return static_cast<size_t>((b * p_.heads + h) * p_.len_q * p_.len_k);
  }

  void copy_map(Values<double>& dst, int64_t b, int64_t h, const Mat<T>& m) {
    Eigen::Map<MatrixR>(dst.data() + map_offset(b, h), m.rows(), m.cols()) =
        m.template cast<double>();
  }

  void keep_scores(int64_t b, int64_t h, const Mat<T>& s) override {
    if (keep_maps_ && req_.scores) copy_map(scores_, b, h, s);
  }

  void keep_weights(int64_t b, int64_t h, const Mat<T>& w) override {
    if (keep_maps_ && req_.weights) copy_map(weights_, b, h, w);
  }

  void keep_flags(int64_t b, int64_t h, const std::vector<uint8_t>& flags) override {
    if (!keep_maps_) return;
    std::copy(flags.begin(), flags.end(),
              masked_.begin() + static_cast<std::ptrdiff_t>(map_offset(b, h)));
  }

  void finish_maps(Result& r) {
    detail::finish_maps(p_, req_, req_.weights ? &weights_ : nullptr,
                        req_.scores ? &scores_ : nullptr, masked_, r);
  }

  // Progress: units are (batch, head) pairs, done in order.
  void report_progress(int64_t b, int64_t h, int64_t heads) const override {
    if (req_.progress) req_.progress(b * heads + h + 1, p_.batch * heads);
  }

  const Problem& p_;
  const detail::VariantUnit& unit_;
  ComputeRequest req_;
  Observer* obs_;
  detail::Projections<T> proj_;  // W_q, W_k, W_v and their biases
  std::optional<Mat<T>> Wo_;
  std::optional<Vec<T>> bo_;
  bool keep_maps_ = false;
  Values<double> weights_, scores_;
  Values<uint8_t> masked_;
  Tensor<double> output_;
  std::vector<FullyMaskedRow> fully_masked_rows_;
};

}  // namespace

namespace {

// `norms`: the head norms the range check found, or unknown. Sets
// `output_finite` when the output is known to be all finite.
Result compute_unchecked(const Problem& p, const ComputeRequest& request, Observer* observer,
                         const detail::HeadNorms& norms, bool& output_finite) {
  output_finite = false;
  if (plan_compute(p, request, observer != nullptr) != ComputePath::kReference) {
    std::optional<Result> r = request.dtype == DType::kF32
                                  ? detail::compute_fast<float>(p, request, norms, &output_finite)
                                  : detail::compute_fast<double>(p, request, norms, &output_finite);
    if (r) return std::move(*r);
    // A score could overflow the dtype: the reference path, which gives
    // infinite scores their limit, computes instead.
  }
  if (request.dtype == DType::kF32) {
    Engine<float> e(p, request, observer);
    return e.run();
  }
  Engine<double> e(p, request, observer);
  return e.run();
}

}  // namespace

ComputePath plan_compute(const Problem& p, const ComputeRequest& request, bool observed) {
  if (observed || request.reference || !detail::fast_path_applies(p, request.dtype)) {
    return ComputePath::kReference;
  }
  return request.weights || request.scores ? ComputePath::kWeightsKept : ComputePath::kStreaming;
}

Result compute(const Problem& p, const ComputeRequest& request, Observer* observer) {
  const detail::HeadNorms norms =
      request.check_range ? detail::check_score_range(p, request) : detail::HeadNorms{};
  bool output_finite = false;
  Result r = compute_unchecked(p, request, observer, norms, output_finite);
  if (request.check_range && !output_finite) detail::check_output_range(p, r);
  return r;
}

}  // namespace attn
