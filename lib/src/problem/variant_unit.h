// Attention variants as units: each scoring function of docs/spec.md §2
// (scaled_dot, dot, additive, single_layer, biattention) is one file in
// lib/src/variants that fills in a VariantUnit — its name and default scale,
// which params it takes and how they are checked, its raw scores, a bound
// on them for the overflow guard, the working memory they need, their
// trace words and their PyTorch lines, and the pipeline after them where
// it is the variant's own (biattention's). registry.cc lists the units;
// every place that depends on the variant asks variant_unit() instead of
// comparing Variant values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "attn/observer.h"
#include "attn/options.h"
#include "attn/problem.h"
#include "attn/trace.h"
#include "base/mat.h"

namespace attn::detail {

class ParamsContext;

// A matrix the variant computes on its way to the scores, which a trace
// shows before them (additive's query features, single_layer's
// pre-activations). Rows are queries or keys; columns keys, or none.
template <class T>
struct ScoreTerm {
  StepId id;
  Mat<T> values;
  bool key_rows = false;
  bool key_cols = false;
};

// The raw scores of one head (or of a batch item, biattention) [Lq][Lk],
// before any scaling, and the terms they were made of, in trace order.
template <class T>
struct HeadScores {
  Mat<T> scores;
  std::vector<ScoreTerm<T>> terms;
};

template <class T>
using ScoreFn = HeadScores<T> (*)(const Problem& p, const Mat<T>& q, const Mat<T>& k);

// What follows the scores. kPerHead: per head, scaling, bias, masks,
// softmax and the weighted sum of V, heads concatenated and projected (the
// engine's own pipeline). kBidaf: per batch item, BiDAF's two attentions
// (document to memory and memory to document) and its [x, o1, x⊙o1, o2⊙o1]
// output; inputs X and Y are the document and the memory (the variant's
// own pipeline, its ItemFn).
enum class Pipeline { kPerHead, kBidaf };

// The engine as a variant's own pipeline sees it: its step reports, kept
// maps and output (engine/engine.h).
template <class T>
class EngineItem;

// A variant's own pipeline: batch item b from the inputs to its output,
// in place of the engine's per-head one.
template <class T>
using ItemFn = void (*)(EngineItem<T>& engine, int64_t b);

// A matrix the scores are computed through ("query features", Lq ×
// hidden), for the memory bounds: the trace's and --max-elements'.
struct TermMatrix {
  std::string what;
  int64_t rows = 0, cols = 0;
};

// Of a variant whose scores need no matrix but themselves.
inline std::vector<TermMatrix> no_term_matrices(const Problem&) { return {}; }

// The trace words of a step only this variant reports.
struct StepWording {
  StepId id;
  StepWords (*words)(const TraceStep& s);
};

// How a variant's PyTorch lines write a parameter: a Python tensor
// named `var` from the param `name`, written out or loaded from the file
// the run read it from.
class PyParams {
 public:
  virtual ~PyParams() = default;
  virtual std::string matrix(const std::string& var, const std::string& name,
                             const MatrixR& m) const = 0;
  virtual std::string vector(const std::string& var, const std::string& name,
                             const Eigen::VectorXd& v) const = 0;
};

struct VariantUnit {
  Variant id = Variant::kScaledDot;
  std::string_view name;  // as documents and --variant write it
  ScaleKind default_scale = ScaleKind::kNone;
  Pipeline pipeline = Pipeline::kPerHead;
  // The SIMD kernels compute it (the product Q·Kᵀ), and with them current
  // models' settings (kv_heads, RoPE, Q/K norm, ALiBi, window, softcap,
  // sinks), which only that path and the reference path share.
  bool fast_kernel = false;
  // W_q and W_k project the inputs into queries and keys (false: they are
  // the variant's own scoring parameters, additive's).
  bool projects_qk = true;
  // nn.MultiheadAttention computes it when the scale is its default:
  // --emit-pytorch may write the program with it.
  bool torch_mha = false;

  // The params it takes; any other the document gives is refused, "not
  // used by variant NAME (params_note)".
  std::vector<std::string> params;
  std::string params_note;
  // Checks the params (only those above are given) and resolves them into
  // p.params; sets d_q, d_k, d_v and d_out.
  void (*resolve_params)(ParamsContext& c) = nullptr;

  // The raw scores of queries q [Lq][dq] against keys k [Lk][dk].
  ScoreFn<double> scores_f64 = nullptr;
  ScoreFn<float> scores_f32 = nullptr;

  // The pipeline of a batch item when it is the variant's own (kBidaf);
  // nullptr for the engine's (kPerHead).
  ItemFn<double> item_f64 = nullptr;
  ItemFn<float> item_f32 = nullptr;

  // An upper bound on |raw score| (scaling and temperature included where
  // they apply) from bounds on the row norms of the queries (nq) and keys
  // (nk), as they reach the scores; inf when not finite.
  double (*score_bound)(const Problem& p, double nq, double nk) = nullptr;

  // The terms (ScoreTerm) a trace shows of one head, or of one batch item
  // (kBidaf), for the trace's memory bound.
  std::vector<TermMatrix> (*trace_terms)(const Problem& p) = nullptr;
  // The working matrices of the scores per batch item, for --max-elements.
  std::vector<TermMatrix> (*working_memory)(const Problem& p) = nullptr;

  // The words of the scores step, and of the steps only this variant
  // reports (worded whatever variant a step's facts name).
  StepWords (*score_words)(const TraceStep& s) = nullptr;
  std::vector<StepWording> own_steps;

  // PyTorch lines that set s, the raw scores, from q and k [B][H][L][d]
  // (X and Y [B][L][d] for kBidaf), and the variant's params.
  std::string (*pytorch_scores)(const Problem& p, const PyParams& params) = nullptr;
};

// ---- the registry (variants/registry.cc) ----------------------------------------

// Every variant, in documentation order.
const std::vector<const VariantUnit*>& variant_units();

// The unit of a Variant value.
const VariantUnit& variant_unit(Variant v);

// The BiDAF pipeline follows the variant's scores (biattention): no
// scaling, heads or masks but the memory's padding, and its own output.
inline bool bidaf_pipeline(Variant v) { return variant_unit(v).pipeline == Pipeline::kBidaf; }

// The raw scores of one head in T: the unit's function for that scalar.
template <class T>
HeadScores<T> variant_scores(const VariantUnit& u, const Problem& p, const Mat<T>& q,
                             const Mat<T>& k) {
  if constexpr (std::is_same_v<T, float>) {
    return u.scores_f32(p, q, k);
  } else {
    return u.scores_f64(p, q, k);
  }
}

// The variant's own pipeline in T, or nullptr when it has the engine's.
template <class T>
ItemFn<T> variant_item(const VariantUnit& u) {
  if constexpr (std::is_same_v<T, float>) {
    return u.item_f32;
  } else {
    return u.item_f64;
  }
}

}  // namespace attn::detail
