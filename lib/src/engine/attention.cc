// The materializing engine: per batch item, projections; per head, the full
// score matrix, scaling, bias, masks, softmax, dropout and the weighted sum;
// then head concatenation and the output projection. Every step is reported
// to the observer when there is one.
#include "attn/attention.h"

#include <cmath>

#include "attn/dropout.h"
#include "attn/error.h"
#include "attn/number_text.h"
#include "engine/engine.h"
#include "engine/score_range.h"

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

void finish_maps(const Problem& p, const ComputeRequest& req, std::vector<double>* weights,
                 std::vector<double>* scores, std::vector<uint8_t>& masked, Result& r) {
  const Shape shape = weights_shape(p, req.average_heads);
  const bool average = req.average_heads && p.heads > 1;
  const int64_t H = p.heads, qk = p.len_q * p.len_k;
  auto reduce = [&](std::vector<double>& full) {
    if (!average) return Tensor<double>(shape, std::move(full));
    std::vector<double> mean(static_cast<size_t>(p.batch * qk), 0.0);
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
    std::vector<uint8_t> all(static_cast<size_t>(p.batch * qk), 1);
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
using detail::slice;
using detail::Vec;

template <class T>
std::optional<Mat<T>> cast(const std::optional<MatrixR>& m) {
  if (!m) return std::nullopt;
  return m->template cast<T>();
}

template <class T>
std::optional<Vec<T>> cast(const std::optional<Eigen::VectorXd>& v) {
  if (!v) return std::nullopt;
  return v->template cast<T>();
}

template <class T>
class Engine {
 public:
  Engine(const Problem& p, const ComputeRequest& req, Observer* obs) : p_(p), req_(req), obs_(obs) {
    const Params& w = p.params;
    Wq_ = cast<T>(w.W_q);
    Wk_ = cast<T>(w.W_k);
    Wv_ = cast<T>(w.W_v);
    Wo_ = cast<T>(w.W_o);
    bq_ = cast<T>(w.b_q);
    bk_ = cast<T>(w.b_k);
    bv_ = cast<T>(w.b_v);
    bo_ = cast<T>(w.b_o);
    aWq_ = cast<T>(w.additive_W_q);
    aWk_ = cast<T>(w.additive_W_k);
    wv_ = cast<T>(w.w_v);
    w_ = cast<T>(w.w);
    w_in_ = cast<T>(w.w_in);
    w_mem_ = cast<T>(w.w_mem);
    dot_scale_ = cast<T>(w.dot_scale);
    keep_maps_ = req.weights || req.scores;
    if (keep_maps_) {
      const size_t cells = static_cast<size_t>(p.batch * p.heads * p.len_q * p.len_k);
      if (req.weights) weights_.assign(cells, 0.0);
      if (req.scores) scores_.assign(cells, 0.0);
      masked_.assign(cells, 0);
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
    for (int64_t b = 0; b < p_.batch; ++b) {
      if (p_.variant == Variant::kBiattention) {
        biattention(b);
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
  bool observing() const { return obs_ != nullptr; }

  const std::vector<std::string>& qlabels() const { return p_.query_labels; }
  const std::vector<std::string>& klabels() const { return p_.key_labels; }

  template <class M>
  void emit(const std::string& id, const std::string& title, const std::string& formula, int64_t b,
            int64_t h, const M& values, const std::vector<std::string>& rows,
            const std::vector<std::string>& cols = {}, const std::string& note = "",
            const std::vector<uint8_t>* masked = nullptr, std::vector<double> numbers = {}) {
    TraceStep s;
    s.id = id;
    s.title = title;
    s.formula = formula;
    s.batch = p_.batched ? b : -1;
    s.head = p_.heads > 1 ? h : -1;
    s.values = values.template cast<double>();
    s.row_labels = rows;
    s.col_labels = cols;
    s.note = note;
    if (masked) s.masked = *masked;
    s.numbers = std::move(numbers);
    obs_->step(s);
  }

  std::string window_note() const {
    const Masks& m = p_.masks;
    auto side = [](int64_t w) { return w < 0 ? std::string("unbounded") : std::to_string(w); };
    return "window: query i sees keys i − " + side(m.window_left) + " … i + " +
           side(m.window_right);
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
        const double w =
            1.0 / std::pow(r.theta, static_cast<double>(2 * p) / static_cast<double>(r.dims));
        const double a = static_cast<double>(t) * w;
        angles(t - first, p) = static_cast<T>(a);
        cosines(t - first, p) = static_cast<T>(std::cos(a));
        sines(t - first, p) = static_cast<T>(std::sin(a));
      }
    }
    const std::string layout = std::string(name(r.layout));
    const std::string note = "theta " + format_shortest(r.theta) + ", " + std::to_string(r.dims) +
                             " of " + std::to_string(q.cols()) + " features rotate, layout " +
                             layout + "; query i is at position " + std::to_string(r.q_offset) +
                             " + i, key j at " + std::to_string(r.k_offset) + " + j";
    emit("rope_angles", "RoPE angles", "θ_tp = t·theta^(−2p/dims)", b, h, angles, rows, cols, note);
    emit("rope_cos", "RoPE cosines", "cos θ_tp", b, h, cosines, rows, cols);
    emit("rope_sin", "RoPE sines", "sin θ_tp", b, h, sines, rows, cols);
    emit("rope_q", "Rotated queries", "(a, b) → (a·cos θ − b·sin θ, b·cos θ + a·sin θ)", b, h, q,
         qlabels());
    emit("rope_k", "Rotated keys", "(a, b) → (a·cos θ − b·sin θ, b·cos θ + a·sin θ)", b, h, k,
         klabels());
  }

  // Head suffix for formulas: "" with one head, "_h" otherwise.
  std::string hs(int64_t h) const { return p_.heads > 1 ? "_" + std::to_string(h) : std::string(); }

  // ---- projections -------------------------------------------------------
  Mat<T> project(const Mat<T>& x, const std::optional<Mat<T>>& W, const std::optional<Vec<T>>& bias,
                 const char* out_name, const std::string& src_name, const char* w_name, int64_t b,
                 const std::vector<std::string>& labels) {
    if (!W) return x;
    Mat<T> y = x * *W;
    if (bias) y.rowwise() += bias->transpose();
    if (observing()) {
      std::string formula = std::string(out_name) + " = " + src_name + "·" + w_name;
      if (bias) formula += std::string(" + b_") + static_cast<char>(std::tolower(out_name[0]));
      emit(std::string("projection_") + out_name, std::string("Projection ") + out_name, formula, b,
           -1, y, labels);
    }
    return y;
  }

  void batch_item(int64_t b) {
    const Tensor<double>& qi = p_.query_in;
    const Tensor<double>& ki = p_.key_in;
    const Tensor<double>& vi = p_.value_in;
    const Mat<T> xq = slice<T>(qi, b, qi.dim(1), qi.dim(2));
    const Mat<T> xk = slice<T>(ki, b, ki.dim(1), ki.dim(2));
    const Mat<T> xv = slice<T>(vi, b, vi.dim(1), vi.dim(2));
    if (observing()) emit_inputs(b, xq, xk, xv);
    const bool dot_family = p_.variant != Variant::kAdditive;
    Mat<T> q = dot_family ? project(xq, Wq_, bq_, "Q", p_.query_name, "W_q", b, qlabels()) : xq;
    Mat<T> k = dot_family ? project(xk, Wk_, bk_, "K", p_.key_name, "W_k", b, klabels()) : xk;
    Mat<T> v = project(xv, Wv_, bv_, "V", p_.value_name, "W_v", b, klabels());
    if (observing() && b == 0) emit_sources(dot_family && Wq_, dot_family && Wk_, Wv_.has_value());

    const int64_t H = p_.heads;
    // Keys and values have kv_heads column blocks; query head h reads
    // block kv_head(h) (the same block as h without grouping).
    const int64_t KV = p_.kv();
    const int64_t dq = q.cols() / H, dk = k.cols() / KV, dv = v.cols() / KV;
    Mat<T> concat(p_.len_q, H * dv);
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = p_.kv_head(h);
      Mat<T> qh = q.middleCols(h * dq, dq);
      Mat<T> kh = k.middleCols(g * dk, dk);
      Mat<T> vh = v.middleCols(g * dv, dv);
      if (observing() && H > 1) {
        std::string note;
        if (p_.grouped()) {
          note = "query head " + std::to_string(h) + " reads key/value head " + std::to_string(g) +
                 " of " + std::to_string(KV) + " (kv_heads)";
        }
        emit("head_q", "Query block",
             "Q" + hs(h) + " = Q[:, " + std::to_string(h * dq) + ":" +
                 std::to_string((h + 1) * dq) + "]",
             b, h, qh, qlabels());
        emit("head_k", "Key block",
             "K" + hs(h) + " = K[:, " + std::to_string(g * dk) + ":" +
                 std::to_string((g + 1) * dk) + "]",
             b, h, kh, klabels(), {}, note);
        emit("head_v", "Value block",
             "V" + hs(h) + " = V[:, " + std::to_string(g * dv) + ":" +
                 std::to_string((g + 1) * dv) + "]",
             b, h, vh, klabels(), {}, note);
      }
      Mat<T> oh = attend(b, h, qh, kh, vh);
      concat.middleCols(h * dv, dv) = oh;
      report_progress(b, h, H);
    }
    Mat<T> out = concat;
    if (observing() && H > 1) {
      std::string blocks = "O_0";
      for (int64_t h = 1; h < std::min<int64_t>(H, 4); ++h) blocks += " | O_" + std::to_string(h);
      if (H > 4) blocks += " | ... | O_" + std::to_string(H - 1);
      emit("concat", "Concatenated heads", "C = [" + blocks + "]", b, -1, concat, qlabels());
    }
    if (Wo_) out = concat * *Wo_;
    if (bo_) out.rowwise() += bo_->transpose();
    if (observing() && (Wo_ || bo_)) {
      std::string src = H > 1 ? "C" : "O";
      // Z, not Y: Y is the context of cross attention.
      std::string formula = "Z = " + src + (Wo_ ? "·W_o" : "") + (bo_ ? " + b_o" : "");
      emit("output_projection", "Output projection", formula, b, -1, out, qlabels());
    }
    if (observing()) emit("output", "Output", "output", b, -1, out, qlabels());
    store_output(b, -1, out);
  }

  void four_d_item(int64_t b) {
    const Tensor<double>& qi = p_.query_in;
    const Tensor<double>& ki = p_.key_in;
    const Tensor<double>& vi = p_.value_in;
    for (int64_t h = 0; h < p_.heads; ++h) {
      const int64_t bh = b * p_.heads + h;
      const int64_t bg = b * p_.kv() + p_.kv_head(h);  // K/V have kv_heads on axis 1
      Mat<T> qh = slice<T>(qi, bh, qi.dim(2), qi.dim(3));
      Mat<T> kh = slice<T>(ki, bg, ki.dim(2), ki.dim(3));
      Mat<T> vh = slice<T>(vi, bg, vi.dim(2), vi.dim(3));
      if (observing()) {
        std::string note;
        if (p_.grouped()) {
          note = "query head " + std::to_string(h) + " reads key/value head " +
                 std::to_string(p_.kv_head(h)) + " of " + std::to_string(p_.kv()) + " (kv_heads)";
        }
        emit("input_Q", "Input Q", "Q" + hs(h), b, h, qh, qlabels());
        emit("input_K", "Input K", "K" + hs(h), b, h, kh, klabels(), {}, note);
        emit("input_V", "Input V", "V" + hs(h), b, h, vh, klabels(), {}, note);
      }
      const Mat<T> out = attend(b, h, qh, kh, vh);
      if (observing()) emit("output", "Output", "output" + hs(h), b, h, out, qlabels());
      store_output(b, h, out);
      report_progress(b, h, p_.heads);
    }
  }

  void emit_inputs(int64_t b, const Mat<T>& xq, const Mat<T>& xk, const Mat<T>& xv) {
    switch (p_.mode) {
      case Mode::kSelf:
        emit("input_X", "Input X", "X", b, -1, xq, qlabels());
        break;
      case Mode::kCross:
        emit("input_X", "Input X (queries)", "X", b, -1, xq, qlabels());
        emit("input_Y", "Input Y (keys and values)", "Y", b, -1, xk, klabels());
        break;
      case Mode::kQkv:
        emit("input_Q", "Input Q", "Q", b, -1, xq, qlabels());
        emit("input_K", "Input K", "K", b, -1, xk, klabels());
        if (p_.value_name == "V") emit("input_V", "Input V", "V", b, -1, xv, klabels());
        break;
    }
  }

  // Where the unprojected Q, K and V come from ("Q = K = V = X" in self
  // mode), so that the scores' formula names nothing undefined. Said once,
  // for every batch entry.
  void emit_sources(bool q_projected, bool k_projected, bool v_projected) {
    std::vector<std::pair<std::string, std::string>> groups;  // source, "Q = K = V"
    auto add = [&](const std::string& name, const std::string& src) {
      if (name == src) return;  // qkv mode: Q is the given Q
      for (auto& g : groups) {
        if (g.first == src) {
          g.second += " = " + name;
          return;
        }
      }
      groups.emplace_back(src, name);
    };
    if (!q_projected) add("Q", p_.query_name);
    if (!k_projected) add("K", p_.key_name);
    if (!v_projected) add("V", p_.value_name);
    if (groups.empty()) return;
    TraceStep s;
    s.id = "sources";
    s.title = "Queries, keys and values";
    for (const auto& [src, names] : groups) {
      s.formula += (s.formula.empty() ? "" : ", ") + names + " = " + src;
    }
    if (p_.mode == Mode::kSelf && groups.size() == 1 && groups[0].second == "Q = K = V") {
      s.note = "self-attention: every row of X is a query, a key and a value";
    }
    obs_->step(s);
  }

  void store_output(int64_t b, int64_t h, const Mat<T>& out) {
    const int64_t n = out.rows() * out.cols();
    const int64_t base = (h < 0 ? b : b * p_.heads + h) * n;
    Eigen::Map<MatrixR>(output_.data() + base, out.rows(), out.cols()) =
        out.template cast<double>();
  }

  // ---- one head ----------------------------------------------------------
  // Raw scores of the variant (before any scaling).
  Mat<T> raw_scores(int64_t b, int64_t h, Mat<T>& q, Mat<T>& k) {
    const int64_t Lq = q.rows(), Lk = k.rows();
    // cosine: every variant forms its scores from L2-normalised rows.
    if (p_.scale.kind == ScaleKind::kCosine) {
      detail::normalize_rows(q);
      detail::normalize_rows(k);
      if (observing()) {
        emit("cosine_q", "Normalized queries", "Q̂ = Q / max(‖q_i‖, 1e-12)", b, h, q, qlabels(), {},
             "each row q_i of Q divided by its length");
        emit("cosine_k", "Normalized keys", "K̂ = K / max(‖k_j‖, 1e-12)", b, h, k, klabels(), {},
             "each row k_j of K divided by its length");
      }
    }
    switch (p_.variant) {
      case Variant::kScaledDot:
      case Variant::kDot: {
        Mat<T> s(Lq, Lk);
        s.noalias() = q * k.transpose();
        if (observing()) {
          const bool cos = p_.scale.kind == ScaleKind::kCosine;
          emit("scores", cos ? "Scores Q̂·K̂ᵀ" : "Scores Q·Kᵀ",
               cos ? "S = Q̂" + hs(h) + "·K̂" + hs(h) + "ᵀ" : "S = Q" + hs(h) + "·K" + hs(h) + "ᵀ", b,
               h, s, qlabels(), klabels());
        }
        return s;
      }
      case Variant::kAdditive: {
        const Mat<T> a = q * *aWq_;  // [Lq][hidden]
        const Mat<T> c = k * *aWk_;  // [Lk][hidden]
        if (observing()) {
          emit("additive_q", "Query features", "F = Q·W_q", b, h, a, qlabels());
          emit("additive_k", "Key features", "G = K·W_k", b, h, c, klabels());
        }
        const int64_t hid = a.cols();
        Mat<T> s(Lq, Lk);
        for (int64_t i = 0; i < Lq; ++i) {
          for (int64_t j = 0; j < Lk; ++j) {
            T acc = 0;
            for (int64_t t = 0; t < hid; ++t) acc += (*wv_)[t] * std::tanh(a(i, t) + c(j, t));
            s(i, j) = acc;
          }
        }
        if (observing()) {
          emit("scores", "Additive scores", "S_ij = w_vᵀ·tanh(f_i + g_j)", b, h, s, qlabels(),
               klabels(), "f_i: row i of F, g_j: row j of G");
        }
        return s;
      }
      case Variant::kSingleLayer: {
        Mat<T> pre(Lq, Lk);
        const Vec<T>& w = *w_;
        for (int64_t i = 0; i < Lq; ++i) {
          for (int64_t j = 0; j < Lk; ++j) pre(i, j) = (q.row(i) - k.row(j)).dot(w);
        }
        Mat<T> s = pre.unaryExpr([](T x) { return x >= 0 ? x : T(0.01) * x; });
        if (observing()) {
          emit("single_layer_pre", "Differences projected on w", "D_ij = (q_i − k_j)·w", b, h, pre,
               qlabels(), klabels());
          emit("scores", "Single-layer scores", "S_ij = LeakyReLU_0.01(D_ij)", b, h, s, qlabels(),
               klabels());
        }
        return s;
      }
      case Variant::kBiattention:
        break;
    }
    throw_internal("raw_scores called for biattention");
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

  std::string factor_note() const {
    const double dk = static_cast<double>(p_.head_dim_q());
    std::string what;
    switch (p_.scale.kind) {
      case ScaleKind::kSqrtDk:
        what = "1/√d_k = 1/√" + format_shortest(dk);
        break;
      case ScaleKind::kDk:
        what = "1/d_k = 1/" + format_shortest(dk);
        break;
      case ScaleKind::kLongSeq:
        what = "1/√(d_k·len_k) = 1/√(" + format_shortest(dk) + "·" + std::to_string(p_.len_k) + ")";
        break;
      case ScaleKind::kNorm:
        what = "1/‖S‖_F";
        break;
      case ScaleKind::kValue:
        what = "scale";
        break;
      case ScaleKind::kNone:
      case ScaleKind::kCosine:
        what = "1";
        break;
    }
    // "{0}" is the factor: the trace writers print it with --precision.
    std::string s = what == "scale" ? "factor {0}" : "factor " + what + " = {0}";
    if (p_.temperature != 1.0) s += ", temperature " + format_shortest(p_.temperature);
    return s;
  }

  // Attention of one head; returns the head output [Lq][dv].
  Mat<T> attend(int64_t b, int64_t h, Mat<T>& q, Mat<T>& k, const Mat<T>& v) {
    const int64_t Lq = q.rows(), Lk = k.rows();
    if (p_.rope) rotate(b, h, q, k);
    Mat<T> s = raw_scores(b, h, q, k);
    const double factor = head_factor(s);
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
    // The name of the scores so far: S, or S' once scaled or biased, so
    // that every formula names a matrix an earlier step defined.
    std::string sn = "S";
    if (observing() && at_scores && mult != 1.0) {
      std::string f = "S' = S";
      if (factor != 1.0) f += "·{0}";
      if (p_.temperature != 1.0) f += " / " + format_shortest(p_.temperature);
      emit("scaled", "Scaled scores", f, b, h, s, qlabels(), klabels(), factor_note(), nullptr,
           {factor});
      sn = "S'";
    }

    if (p_.softcap > 0) {
      if (observing()) {
        emit("softcap_raw", "Scores before capping", "S' (uncapped)", b, h, s, qlabels(),
             klabels());
      }
      const T cap = static_cast<T>(p_.softcap);
      s = s.unaryExpr([cap](T x) { return detail::softcap_score(x, cap); });
      if (observing()) {
        emit("softcap", "Capped scores", "S' = c·tanh(S'/c), c = " + format_shortest(p_.softcap), b,
             h, s, qlabels(), klabels(), "every score is pulled into (−c, c)");
      }
    }

    const MaskView mv(p_, b, h);
    if (mv.has_bias()) {
      for (int64_t i = 0; i < Lq; ++i) {
        const double* br = mv.bias_row(i);
        for (int64_t j = 0; j < Lk; ++j) s(i, j) += static_cast<T>(br[j]);
      }
      if (observing()) {
        emit("biased", "Scores plus bias", "S' = " + sn + " + attn_bias", b, h, s, qlabels(),
             klabels());
        sn = "S'";
      }
    }
    if (!p_.alibi.empty()) {
      const double m = p_.alibi[static_cast<size_t>(h)];
      Mat<T> bias(Lq, Lk);
      for (int64_t i = 0; i < Lq; ++i) {
        for (int64_t j = 0; j < Lk; ++j) {
          bias(i, j) = static_cast<T>(-m * static_cast<double>(std::llabs(i - j)));
        }
      }
      s += bias;
      if (observing()) {
        emit("alibi_bias", "ALiBi bias", "B_ij = −m·|i − j|, m = " + format_shortest(m), b, h, bias,
             qlabels(), klabels(),
             "head " + std::to_string(h) + "'s slope m = " + format_shortest(m));
        emit("alibi", "Scores plus ALiBi", "S' = S' + B", b, h, s, qlabels(), klabels());
      }
    }

    // Masks: replace masked scores by mask_fill. The flags are kept for the
    // heatmap and the trace, which show masked cells as masked, not as a
    // huge negative number.
    const bool any_mask = p_.masks.any() && (mv.has_dense() || p_.masks.causal ||
                                             !p_.masks.valid_lens.empty() || p_.masks.window);
    std::vector<uint8_t> flags;
    const bool want_flags = keep_maps_ || observing();
    if (want_flags) flags.assign(static_cast<size_t>(Lq * Lk), 0);
    if (keep_maps_ && req_.scores) copy_map(scores_, b, h, s);
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
      if (observing()) {
        std::string note = std::isinf(p_.mask_fill) ? "masked cells are set to -inf"
                                                    : "masked cells are set to mask_fill = " +
                                                          format_shortest(p_.mask_fill);
        if (p_.masks.window) note += "; " + window_note();
        emit("masked", "Masked scores", sn + "_ij = mask_fill where masked", b, h, s, qlabels(),
             klabels(), note, &flags);
      }
    }
    // Cells with a score of -inf (from the bias) count as masked for display.
    if (want_flags) {
      for (int64_t c = 0; c < Lq * Lk; ++c) {
        if (s.data()[c] == -std::numeric_limits<T>::infinity()) flags[static_cast<size_t>(c)] = 1;
      }
    }
    if (keep_maps_) store_flags(b, h, flags);

    // Softmax over keys, row by row.
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
      if (sinks) {
        const std::string sv = format_shortest(static_cast<double>(sink));
        emit("row_max", "Row maxima", "m_i = max(max_j " + sn + "_ij, s), s = " + sv, b, h, row_max,
             qlabels(), {}, "the sink logit s takes part in the maximum");
        emit("exp", "Exponentials", "E_ij = exp(" + sn + "_ij − m_i)", b, h, exps, qlabels(),
             klabels(), "", display_flags(flags));
        emit("row_sum", "Row sums with the sink", "z_i = exp(s − m_i) + Σ_j E_ij", b, h, row_sum,
             qlabels());
        emit("sink_share", "Sink's share of each row", "σ_i = exp(s − m_i) / z_i", b, h, sink_share,
             qlabels(), {}, "the weight the sink takes; row i of A sums to 1 − σ_i");
        emit("weights", "Attention weights", "A_ij = E_ij / z_i", b, h, s, qlabels(), klabels(),
             "each row sums to 1 minus the sink's share", display_flags(flags));
      } else {
        // A, not W: W_q, W_k, W_v and W_o are the projections.
        emit("row_max", "Row maxima", "m_i = max_j " + sn + "_ij", b, h, row_max, qlabels(), {},
             "subtracted before exp so that exp never overflows");
        emit("exp", "Exponentials", "E_ij = exp(" + sn + "_ij − m_i)", b, h, exps, qlabels(),
             klabels(), "", display_flags(flags));
        emit("row_sum", "Row sums", "z_i = Σ_j E_ij", b, h, row_sum, qlabels());
        emit("weights", "Attention weights", "A_ij = E_ij / z_i", b, h, s, qlabels(), klabels(),
             weights_note(dead_rows), display_flags(flags));
      }
    }
    if (keep_maps_ && req_.weights) copy_map(weights_, b, h, s);

    // Inverted dropout on the weights (the reported weights are before it).
    if (p_.dropout > 0) {
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
        emit("dropout", "Weights after dropout",
             "Ã = A ⊙ keep / (1 − p), p = " + format_shortest(p_.dropout), b, h, s, qlabels(),
             klabels(),
             "keep: cells kept by the dropout generator (seed " + std::to_string(p_.seed) + ")");
      }
    }

    Mat<T> o = s * v;
    const bool at_output = p_.scale_at == ScaleAt::kOutput && mult != 1.0;
    if (observing()) {
      TraceStep st;
      st.id = "weighted_sum";
      st.title = "Weighted sum of values";
      st.formula = "O" + hs(h) + " = " + (p_.dropout > 0 ? "Ã" : "A") + hs(h) + "·V" + hs(h);
      st.batch = p_.batched ? b : -1;
      st.head = p_.heads > 1 ? h : -1;
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
      if (observing()) {
        std::string f = "O" + hs(h) + "' = O" + hs(h);
        if (factor != 1.0) f += "·{0}";
        if (p_.temperature != 1.0) f += " / " + format_shortest(p_.temperature);
        emit("output_scaled", "Output scaled (scale_at output)", f, b, h, o, qlabels(), {},
             factor_note(), nullptr, {factor});
      }
    }
    if (observing() && p_.heads > 1)
      emit("head_output", "Head output", "O" + hs(h), b, h, o, qlabels());
    return o;
  }

  // Masked cells are shown as masked in the exponentials and weights only
  // under an infinite fill; with a finite one they carry real weight.
  const std::vector<uint8_t>* display_flags(const std::vector<uint8_t>& flags) const {
    return std::isinf(p_.mask_fill) ? &flags : nullptr;
  }

  std::string weights_note(int64_t dead_rows) const {
    if (dead_rows == 0) return "each row sums to 1";
    return "each row sums to 1, except rows with every key masked (fully_masked: " +
           std::string(name(p_.fully_masked)) + ")";
  }

  void fully_masked(int64_t b, int64_t h, int64_t i, T* row, int64_t n) {
    if (p_.fully_masked == FullyMasked::kError) detail::raise_fully_masked(p_, b, h, i);
    detail::fill_fully_masked(row, n, p_.fully_masked);
    fully_masked_rows_.push_back(FullyMaskedRow{b, h, i});
  }

  // ---- kept maps -----------------------------------------------------------
  size_t map_offset(int64_t b, int64_t h) const {
    return static_cast<size_t>((b * p_.heads + h) * p_.len_q * p_.len_k);
  }

  void copy_map(std::vector<double>& dst, int64_t b, int64_t h, const Mat<T>& m) {
    Eigen::Map<MatrixR>(dst.data() + map_offset(b, h), m.rows(), m.cols()) =
        m.template cast<double>();
  }

  void store_flags(int64_t b, int64_t h, const std::vector<uint8_t>& flags) {
    std::copy(flags.begin(), flags.end(),
              masked_.begin() + static_cast<std::ptrdiff_t>(map_offset(b, h)));
  }

  void finish_maps(Result& r) {
    detail::finish_maps(p_, req_, req_.weights ? &weights_ : nullptr,
                        req_.scores ? &scores_ : nullptr, masked_, r);
  }

  // ---- BiAttention (BiDAF) ----------------------------------------------------
  void biattention(int64_t b) {
    const Tensor<double>& xi = p_.query_in;
    const Tensor<double>& yi = p_.key_in;
    const Mat<T> x = slice<T>(xi, b, xi.dim(1), xi.dim(2));
    const Mat<T> y = slice<T>(yi, b, yi.dim(1), yi.dim(2));
    const int64_t Lx = x.rows(), Ly = y.rows(), d = x.cols();
    if (observing()) {
      emit("input_X", "Input X (document)", "X", b, -1, x, qlabels());
      emit("input_Y", "Input Y (memory)", "Y", b, -1, y, klabels());
    }
    const Vec<T> input_dot = x * *w_in_;
    const Vec<T> memory_dot = y * *w_mem_;
    Mat<T> xs = x;
    for (int64_t i = 0; i < Lx; ++i) xs.row(i) = xs.row(i).cwiseProduct(dot_scale_->transpose());
    const Mat<T> cross = xs * y.transpose();
    Mat<T> s(Lx, Ly);
    for (int64_t i = 0; i < Lx; ++i) {
      for (int64_t j = 0; j < Ly; ++j) s(i, j) = input_dot[i] + memory_dot[j] + cross(i, j);
    }
    if (observing()) {
      emit("bi_input_dot", "Document term", "t_i = x_i·w_in", b, -1, input_dot, qlabels());
      emit("bi_memory_dot", "Memory term", "u_j = y_j·w_mem", b, -1, memory_dot, klabels());
      emit("bi_cross_dot", "Cross term", "D_ij = (x_i ⊙ dot_scale)·y_j", b, -1, cross, qlabels(),
           klabels());
      emit("scores", "BiAttention scores", "S_ij = t_i + u_j + D_ij", b, -1, s, qlabels(),
           klabels());
    }
    std::vector<uint8_t> flags(static_cast<size_t>(Lx * Ly), 0);
    if (keep_maps_ && req_.scores) copy_map(scores_, b, 0, s);
    const MaskView mv(p_, b, 0);
    if (mv.key_padding()) {
      const T fill = static_cast<T>(p_.mask_fill);
      for (int64_t i = 0; i < Lx; ++i) {
        for (int64_t j = 0; j < Ly; ++j) {
          if (mv.key_padding()[j]) {
            s(i, j) = fill;
            flags[static_cast<size_t>(i * Ly + j)] = 1;
          }
        }
      }
      if (observing()) {
        emit("masked", "Masked scores", "S_ij = mask_fill where memory j is padding", b, -1, s,
             qlabels(), klabels(), "", &flags);
      }
    }
    if (keep_maps_) store_flags(b, 0, flags);
    // max over memory positions for the document-side attention, taken
    // before the softmax overwrites s.
    Vec<T> row_max(Lx);
    for (int64_t i = 0; i < Lx; ++i) row_max[i] = s.row(i).maxCoeff();
    Mat<T> w1 = s;
    for (int64_t i = 0; i < Lx; ++i) {
      auto st = detail::softmax_row(w1.data() + i * Ly, Ly);
      if (st.fully_masked) fully_masked(b, 0, i, w1.data() + i * Ly, Ly);
    }
    if (keep_maps_ && req_.weights) copy_map(weights_, b, 0, w1);
    if (observing()) {
      emit("weights", "Document-to-memory weights", "A1 = softmax_j(S)", b, -1, w1, qlabels(),
           klabels(), "each row sums to 1", &flags);
    }
    if (p_.dropout > 0) {
      const T keep_scale = static_cast<T>(1.0 / (1.0 - p_.dropout));
      const uint64_t base = static_cast<uint64_t>(b * Lx) * static_cast<uint64_t>(Ly);
      for (int64_t i = 0; i < Lx; ++i) {
        for (int64_t j = 0; j < Ly; ++j) {
          const uint64_t counter = base + static_cast<uint64_t>(i * Ly + j);
          w1(i, j) = dropout_keep(p_.seed, counter, p_.dropout) ? w1(i, j) * keep_scale : T(0);
        }
      }
    }
    const Mat<T> o1 = w1 * y;
    Vec<T> w2 = row_max;
    detail::softmax_row(w2.data(), Lx);
    const Eigen::Matrix<T, 1, Eigen::Dynamic> o2 = w2.transpose() * x;
    if (observing()) {
      emit("bi_o1", "Attended memory", "O1 = A1·Y", b, -1, o1, qlabels());
      emit("bi_row_max", "Best match per document position", "m_i = max_j S_ij", b, -1, row_max,
           qlabels());
      emit("bi_w2", "Memory-to-document weights", "a2 = softmax_i(m)", b, -1, w2, qlabels());
      emit("bi_o2", "Attended document", "o2 = a2ᵀ·X", b, -1, o2, {});
    }
    Mat<T> out(Lx, 4 * d);
    for (int64_t i = 0; i < Lx; ++i) {
      out.row(i).segment(0, d) = x.row(i);
      out.row(i).segment(d, d) = o1.row(i);
      out.row(i).segment(2 * d, d) = x.row(i).cwiseProduct(o1.row(i));
      out.row(i).segment(3 * d, d) = o2.cwiseProduct(o1.row(i));
    }
    if (observing()) {
      emit("output", "Output", "[x_i, O1_i, x_i ⊙ O1_i, o2 ⊙ O1_i]", b, -1, out, qlabels());
    }
    store_output(b, -1, out);
    report_progress(b, 0, 1);
  }

  // Progress: units are (batch, head) pairs, done in order.
  void report_progress(int64_t b, int64_t h, int64_t heads) const {
    if (req_.progress) req_.progress(b * heads + h + 1, p_.batch * heads);
  }

  const Problem& p_;
  ComputeRequest req_;
  Observer* obs_;
  std::optional<Mat<T>> Wq_, Wk_, Wv_, Wo_, aWq_, aWk_;
  std::optional<Vec<T>> bq_, bk_, bv_, bo_, wv_, w_, w_in_, w_mem_, dot_scale_;
  bool keep_maps_ = false;
  std::vector<double> weights_, scores_;
  std::vector<uint8_t> masked_;
  Tensor<double> output_;
  std::vector<FullyMaskedRow> fully_masked_rows_;
};

}  // namespace

namespace {

Result compute_unchecked(const Problem& p, const ComputeRequest& request, Observer* observer) {
  if (plan_compute(p, request, observer != nullptr) != ComputePath::kReference) {
    return request.dtype == DType::kF32 ? detail::compute_fast<float>(p, request)
                                        : detail::compute_fast<double>(p, request);
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
  if (request.check_range) detail::check_score_range(p, request);
  Result r = compute_unchecked(p, request, observer);
  if (request.check_range) detail::check_output_range(p, r);
  return r;
}

}  // namespace attn
