// biattention: BiDAF's similarity S_ij = x_i·w_in + y_j·w_mem +
// (x_i ⊙ dot_scale)·y_j between a document X and a memory Y (AllenNLP's
// BiAttention), and the BiDAF pipeline that follows the scores
// (Pipeline::kBidaf), which the engine runs for each batch item.
#include "attn/error.h"
#include "engine/engine.h"
#include "kernel/dropout.h"
#include "problem/params_context.h"
#include "problem/problem_internal.h"
#include "problem/variant_unit.h"
#include "trace/formula.h"

namespace attn::detail {

namespace {

using namespace formula;

void resolve_params(ParamsContext& c) {
  Problem& p = c.p;
  if (p.mode == Mode::kQkv) {
    throw_input(c.doc.settings_place,
                "variant biattention reads X (document) and Y (memory), not Q/K/V");
  }
  const int64_t d = last_dim(p.query_in);
  if (last_dim(p.key_in) != d) {
    throw_input(p.source, "biattention needs X and Y of the same width; " +
                              with_shape("X", p.query_shape) + " and " +
                              with_shape("Y", p.key_shape));
  }
  Params& w = p.params;
  for (const char* n : {"w_in", "w_mem", "dot_scale"}) {
    const Input* in = c.get(n);
    if (!in) {
      throw_input(p.source,
                  "variant biattention needs params.w_in, params.w_mem and "
                  "params.dot_scale, each of shape [" +
                      std::to_string(d) + "]");
    }
    Eigen::VectorXd v = c.vec(*in, false);
    if (v.size() != d) {
      throw_input(in->place, "length " + std::to_string(v.size()) +
                                 " does not match the input width " + std::to_string(d));
    }
    if (std::string(n) == "w_in") w.w_in = v;
    if (std::string(n) == "w_mem") w.w_mem = v;
    if (std::string(n) == "dot_scale") w.dot_scale = v;
  }
  p.d_q = p.d_k = p.d_v = d;
  p.d_out = 4 * d;
}

// x: the document [Lx][d], y: the memory [Ly][d].
template <class T>
HeadScores<T> scores(const Problem& p, const Mat<T>& x, const Mat<T>& y) {
  const Params& w = p.params;
  const Vec<T> w_in = w.w_in->template cast<T>();
  const Vec<T> w_mem = w.w_mem->template cast<T>();
  const Vec<T> dot_scale = w.dot_scale->template cast<T>();
  const int64_t Lx = x.rows(), Ly = y.rows();
  const Vec<T> input_dot = x * w_in;
  const Vec<T> memory_dot = y * w_mem;
  Mat<T> xs = x;
  for (int64_t i = 0; i < Lx; ++i) xs.row(i) = xs.row(i).cwiseProduct(dot_scale.transpose());
  Mat<T> cross = xs * y.transpose();
  HeadScores<T> r;
  r.scores.resize(Lx, Ly);
  for (int64_t i = 0; i < Lx; ++i) {
    for (int64_t j = 0; j < Ly; ++j) r.scores(i, j) = input_dot[i] + memory_dot[j] + cross(i, j);
  }
  r.terms.push_back({StepId::kBiInputDot, input_dot, false, false});
  r.terms.push_back({StepId::kBiMemoryDot, memory_dot, true, false});
  r.terms.push_back({StepId::kBiCrossDot, std::move(cross), false, true});
  return r;
}

// The BiDAF pipeline of batch item b: the scores, the memory's padding
// masked, the document-to-memory attention o1 and the memory-to-document
// attention o2, and the output [x, o1, x⊙o1, o2⊙o1].
template <class T>
void item(EngineItem<T>& e, int64_t b) {
  const Problem& p = e.problem();
  const std::vector<std::string>& qlabels = p.query_labels;
  const std::vector<std::string>& klabels = p.key_labels;
  const Tensor<double>& xi = p.query_in;
  const Tensor<double>& yi = p.key_in;
  const Mat<T> x = slice<T>(xi, b, xi.dim(1), xi.dim(2));
  const Mat<T> y = slice<T>(yi, b, yi.dim(1), yi.dim(2));
  const int64_t Lx = x.rows(), Ly = y.rows(), d = x.cols();
  if (e.observing()) {
    e.emit(StepId::kInputX, e.symbols("X"), b, -1, x, qlabels);
    e.emit(StepId::kInputY, e.symbols("Y"), b, -1, y, klabels);
  }
  Mat<T> s = e.scored(b, -1, x, y);
  std::vector<uint8_t> flags(static_cast<size_t>(Lx * Ly), 0);
  e.keep_scores(b, 0, s);
  const MaskView mv(p, b, 0);
  if (mv.key_padding()) {
    const T fill = static_cast<T>(p.mask_fill);
    for (int64_t i = 0; i < Lx; ++i) {
      for (int64_t j = 0; j < Ly; ++j) {
        if (mv.key_padding()[j]) {
          s(i, j) = fill;
          flags[static_cast<size_t>(i * Ly + j)] = 1;
        }
      }
    }
    if (e.observing()) {
      e.emit(StepId::kMasked, e.mask_facts("S"), b, -1, s, qlabels, klabels, &flags);
    }
  }
  e.keep_flags(b, 0, flags);
  // max over memory positions for the document-side attention, taken
  // before the softmax overwrites s.
  Vec<T> row_max(Lx);
  for (int64_t i = 0; i < Lx; ++i) row_max[i] = s.row(i).maxCoeff();
  Mat<T> w1 = s;
  for (int64_t i = 0; i < Lx; ++i) {
    auto st = softmax_row(w1.data() + i * Ly, Ly);
    if (st.fully_masked) e.fully_masked(b, 0, i, w1.data() + i * Ly, Ly);
  }
  e.keep_weights(b, 0, w1);
  if (e.observing()) e.emit(StepId::kWeights, {}, b, -1, w1, qlabels, klabels, &flags);
  if (p.dropout > 0) {
    const T keep_scale = static_cast<T>(1.0 / (1.0 - p.dropout));
    const uint64_t base = static_cast<uint64_t>(b * Lx) * static_cast<uint64_t>(Ly);
    for (int64_t i = 0; i < Lx; ++i) {
      for (int64_t j = 0; j < Ly; ++j) {
        const uint64_t counter = base + static_cast<uint64_t>(i * Ly + j);
        w1(i, j) = dropout_keep(p.seed, counter, p.dropout) ? w1(i, j) * keep_scale : T(0);
      }
    }
  }
  const Mat<T> o1 = w1 * y;
  Vec<T> w2 = row_max;
  softmax_row(w2.data(), Lx);
  const Eigen::Matrix<T, 1, Eigen::Dynamic> o2 = w2.transpose() * x;
  if (e.observing()) {
    e.emit(StepId::kBiO1, {}, b, -1, o1, qlabels);
    e.emit(StepId::kBiRowMax, {}, b, -1, row_max, qlabels);
    e.emit(StepId::kBiW2, {}, b, -1, w2, qlabels);
    e.emit(StepId::kBiO2, {}, b, -1, o2, {});
  }
  Mat<T> out(Lx, 4 * d);
  for (int64_t i = 0; i < Lx; ++i) {
    out.row(i).segment(0, d) = x.row(i);
    out.row(i).segment(d, d) = o1.row(i);
    out.row(i).segment(2 * d, d) = x.row(i).cwiseProduct(o1.row(i));
    out.row(i).segment(3 * d, d) = o2.cwiseProduct(o1.row(i));
  }
  if (e.observing()) e.emit(StepId::kOutput, {}, b, -1, out, qlabels);
  e.store_output(b, -1, out);
  e.report_progress(b, 0, 1);
}

double score_bound(const Problem& p, double nq, double nk) {
  const Params& w = p.params;
  const auto norm2 = [](const std::optional<Eigen::VectorXd>& v) { return v ? v->norm() : 0.0; };
  return nq * norm2(w.w_in) + nk * norm2(w.w_mem) +
         nq * nk * (w.dot_scale ? w.dot_scale->lpNorm<Eigen::Infinity>() : 0.0);
}

// The document term t [Lx], the memory term u [Ly], the cross term D.
std::vector<TermMatrix> terms(const Problem& p) {
  return {
      {"document term", p.len_q, 1}, {"memory term", p.len_k, 1}, {"cross term", p.len_q, p.len_k}};
}

StepWords score_words(const TraceStep&) {
  return each("BiAttention scores", "S", "ij", "t_i + u_j + " + sub("D", "ij"));
}

std::string pytorch_scores(const Problem& p, const PyParams& py) {
  const Params& w = p.params;
  return py.vector("w_in", "w_in", *w.w_in) + py.vector("w_mem", "w_mem", *w.w_mem) +
         py.vector("dot_scale", "dot_scale", *w.dot_scale) +
         "# BiDAF-style attention: S_ij = x_i·w_in + y_j·w_mem + (x_i ⊙ dot_scale)·y_j\n"
         "s = (X @ w_in)[:, :, None] + (Y @ w_mem)[:, None, :] + (X * dot_scale) @ Y.transpose(1, "
         "2)\n";
}

}  // namespace

const VariantUnit& biattention_variant() {
  static const VariantUnit u = [] {
    VariantUnit v;
    v.id = Variant::kBiattention;
    v.name = "biattention";
    v.default_scale = ScaleKind::kNone;
    v.pipeline = Pipeline::kBidaf;
    v.params = {"w_in", "w_mem", "dot_scale"};
    v.params_note = "it takes w_in, w_mem, dot_scale";
    v.resolve_params = resolve_params;
    v.scores_f64 = scores<double>;
    v.scores_f32 = scores<float>;
    v.item_f64 = item<double>;
    v.item_f32 = item<float>;
    v.score_bound = score_bound;
    v.trace_terms = terms;
    v.working_memory = no_term_matrices;
    v.score_words = score_words;
    v.own_steps = {{StepId::kBiInputDot,
                    [](const TraceStep&) {
                      return each("Document term", "t", "i", "x_i" + kDot + sub("w", "in"));
                    }},
                   {StepId::kBiMemoryDot,
                    [](const TraceStep&) {
                      return each("Memory term", "u", "j", "y_j" + kDot + sub("w", "mem"));
                    }},
                   {StepId::kBiCrossDot, [](const TraceStep&) {
                      return each("Cross term", "D", "ij",
                                  "(x_i " + kOdot + " " + sub("dot", "scale") + ")" + kDot + "y_j");
                    }}};
    v.pytorch_scores = pytorch_scores;
    return v;
  }();
  return u;
}

}  // namespace attn::detail
