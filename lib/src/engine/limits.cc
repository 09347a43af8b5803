#include "attn/limits.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "attn/attention.h"
#include "attn/error.h"
#include "problem/variant_unit.h"

namespace attn {

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// a·b, saturated: the factors come from untrusted sizes.
int64_t mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kMax / b ? kMax : a * b;
}

int64_t product(const std::vector<int64_t>& f) {
  int64_t n = 1;
  for (int64_t x : f) n = mul(n, x);
  return n;
}

// "65536 × 65536"
std::string factors_text(const std::vector<int64_t>& f) {
  std::string s;
  for (size_t i = 0; i < f.size(); ++i) s += (i ? " × " : "") + std::to_string(f[i]);
  return s;
}

// One tensor the run would materialize.
struct Need {
  std::string what;     // "keeping the weights needs", "the output needs"
  std::string unit;     // "weights", "elements", "pixels"
  std::string factors;  // "batch 1 × heads 1 × 65536 × 65536"
  int64_t count = 0;
  std::string advice;  // "; raise --max-elements or drop --weights"
};

}  // namespace

bool needs_full_scores(const Problem& p, const ComputeRequest& req, bool trace) {
  // Only the streaming kernel works in fixed-size tiles (norm scaling takes
  // a first pass over the same tiles).
  return plan_compute(p, req, trace) != ComputePath::kStreaming;
}

// Mirrors the steps the engine reports (lib/src/engine/attention.cc, and the
// variant's terms, variants/), taking every
// optional step whose condition depends on the data as present.
TraceSize trace_size(const Problem& p) {
  TraceSize t;
  const int64_t B = p.batch, H = p.heads, Lq = p.len_q, Lk = p.len_k;
  const int64_t qk = mul(Lq, Lk);
  const int64_t flags = qk / 8 + 1;  // one byte a cell
  auto add = [&](int64_t steps, int64_t elements) {
    t.steps = std::min(kMax - 1, t.steps + steps);
    t.elements = std::min(kMax - 1, t.elements + elements);
  };
  auto width = [](const Tensor<double>& x) { return x.rank() ? x.dim(x.rank() - 1) : 0; };
  // Every step copies the labels of its rows and columns.
  int64_t labels = 0;
  for (const auto* list : {&p.query_labels, &p.key_labels}) {
    for (const std::string& l : *list)
      labels = std::min(kMax / 2, labels + 4 + static_cast<int64_t>(l.size()) / 8);
  }

  // Per batch item, or per (batch, head) when one is a unit of its own.
  TraceSize item, head;
  auto add_to = [&](TraceSize& ts, int64_t steps, int64_t elements) {
    ts.steps += steps;
    ts.elements = std::min(kMax / 4, ts.elements + elements);
  };
  const detail::VariantUnit& unit = detail::variant_unit(p.variant);
  // The steps of the variant's terms, and their elements.
  auto add_terms = [&](TraceSize& ts) {
    int64_t elements = 0;
    const std::vector<detail::TermMatrix> terms = unit.trace_terms(p);
    for (const detail::TermMatrix& m : terms) elements += mul(m.rows, m.cols);
    if (!terms.empty()) add_to(ts, static_cast<int64_t>(terms.size()), elements);
  };
  if (unit.pipeline == detail::Pipeline::kBidaf) {
    const int64_t d = width(p.query_in);
    add_to(item, 2, mul(Lq, d) + mul(Lk, width(p.key_in)));  // inputs
    add_terms(item);
    add_to(item, 1, qk);                       // scores
    add_to(item, 2, qk + flags + qk + flags);  // masked, weights
    add_to(item, 4, mul(Lq, d) + 2 * Lq + d);  // o1, row_max, w2, o2
    add_to(item, 1, mul(Lq, mul(4, d)));       // output
  } else {
    const int64_t dh = p.d_q / H, dvh = p.d_v / H;
    const Params& w = p.params;
    if (p.four_d) {
      add_to(head, 4, mul(Lq, dh) + mul(Lk, dh) + mul(Lk, dvh) + mul(Lq, dvh));  // inputs, output
    } else {
      add_to(item, 3,
             mul(Lq, width(p.query_in)) + mul(Lk, width(p.key_in)) +
                 mul(Lk, width(p.value_in)));  // inputs (at most three)
      if (w.W_q && unit.projects_qk) add_to(item, 1, mul(Lq, p.d_q));
      if (w.W_k && unit.projects_qk) add_to(item, 1, mul(Lk, p.d_k));
      if (w.W_v) add_to(item, 1, mul(Lk, p.d_v));
      if (H > 1) add_to(item, 1, mul(Lq, p.d_v));  // concatenated heads
      if (w.W_o || w.b_o) add_to(item, 1, mul(Lq, p.d_out));
      add_to(item, 1, mul(Lq, p.d_out));  // output
      if (H > 1) {
        add_to(head, 3, mul(Lq, dh) + mul(Lk, dh) + mul(Lk, dvh));  // head split
        add_to(head, 1, mul(Lq, dvh));                              // head output
      }
    }
    if (p.scale.kind == ScaleKind::kCosine) add_to(head, 2, mul(Lq, dh) + mul(Lk, dh));
    add_terms(head);
    // scores, exponentials (with flags), weights (with flags)
    add_to(head, 3, 3 * qk + 2 * flags);
    const bool scaled = p.scale.kind == ScaleKind::kNorm || scale_factor(p) / p.temperature != 1.0;
    if (scaled) add_to(head, 1, p.scale_at == ScaleAt::kScores ? qk : mul(Lq, dvh));
    if (!p.masks.bias.empty()) add_to(head, 1, qk);
    const Masks& m = p.masks;
    if (!m.mask.empty() || !m.key_padding.empty() || m.causal || !m.valid_lens.empty()) {
      add_to(head, 1, qk + flags);
    }
    if (p.dropout > 0) add_to(head, 1, qk);
    add_to(head, 2, 2 * Lq);                            // row maxima and sums
    add_to(head, 1, mul(Lq, dvh) + qk + mul(Lk, dvh));  // weighted sum
  }
  const int64_t units = mul(B, H);
  add(mul(B, item.steps), mul(B, item.elements));
  add(mul(units, head.steps), mul(units, head.elements));
  add(0, mul(t.steps, labels));
  return t;
}

void check_limits(const Problem& p, const ComputeRequest& req, const LimitOptions& o) {
  const std::string raise = "; raise --max-elements";
  std::vector<Need> needs;
  const int64_t B = p.batch, H = p.heads, Lq = p.len_q, Lk = p.len_k;
  const std::string batch_heads = "batch " + std::to_string(B) + " × heads " + std::to_string(H);

  // Scores and weights: every (batch, head) when they are kept, one (batch,
  // head) when the scoring needs them whole, one query block against all
  // keys when the engine streams.
  const bool keep = req.weights || req.scores;
  if (keep) {
    const std::string unit = req.weights ? "weights" : "scores";
    const std::vector<int64_t> f = {B, H, Lq, Lk};
    needs.push_back({"keeping the " + unit + " needs", unit,
                     batch_heads + " × " + std::to_string(Lq) + " × " + std::to_string(Lk),
                     product(f), o.maps_flag.empty() ? raise : raise + " or drop " + o.maps_flag});
  }
  if (o.trace) {
    // A trace keeps every step of every head, each a matrix with its labels:
    // several whole score matrices per head.
    const TraceSize t = trace_size(p);
    needs.push_back({"--trace needs", "elements",
                     std::to_string(t.steps) + " steps over " + batch_heads,
                     std::min(kMax, t.elements + mul(t.steps, kTraceStepElements)),
                     raise + " or drop --trace"});
  } else if (!keep && needs_full_scores(p, req, false)) {
    const detail::VariantUnit& unit = detail::variant_unit(p.variant);
    const std::string who = "variant " + std::string(unit.name);
    const std::string per = unit.pipeline == detail::Pipeline::kBidaf ? "batch item" : "head";
    needs.push_back({who + " needs the whole score matrix of each " + per + ",", "scores",
                     factors_text({Lq, Lk}), mul(Lq, Lk), raise});
  }
  // (scaled_dot and dot without kept maps: the streaming kernel's tiles have
  // a fixed size, whatever len_q and len_k.)

  // Every (batch, head) costs bookkeeping, even when its numbers are few.
  needs.push_back({batch_heads + " need", "elements",
                   std::to_string(kHeadElements) + " per head of working memory",
                   mul(mul(B, H), kHeadElements), raise + " or use fewer heads"});

  // Projected inputs and the output: whole tensors.
  auto tensor_need = [&](const std::string& name, int64_t len, int64_t width) {
    const std::vector<int64_t> f = {B, len, width};
    needs.push_back(
        {name + " needs", "elements",
         "batch " + std::to_string(B) + " × " + std::to_string(len) + " × " + std::to_string(width),
         product(f), raise});
  };
  const Params& w = p.params;
  tensor_need(w.W_q ? "Q = " + p.query_name + "·params.W_q" : "Q", Lq, p.d_q);
  tensor_need(w.W_k ? "K = " + p.key_name + "·params.W_k" : "K", Lk, p.d_k);
  tensor_need(w.W_v ? "V = " + p.value_name + "·params.W_v" : "V", Lk, p.d_v);
  // The heads' outputs side by side, before W_o narrows them.
  if (w.W_o) tensor_need("the concatenation of the head outputs", Lq, p.d_v);
  const int64_t out_width = p.four_d ? mul(H, p.d_out) : p.d_out;
  tensor_need("the output", Lq, out_width);
  for (const detail::TermMatrix& m : detail::variant_unit(p.variant).working_memory(p)) {
    needs.push_back({"variant " + std::string(name(p.variant)) + " needs " + m.what, "elements",
                     factors_text({m.rows, m.cols}), mul(m.rows, m.cols), raise});
  }
  if (o.similarity) {
    // Two Gram matrices of the query rows (input and output) per batch item,
    // or per (batch, head) with 4D input.
    const int64_t blocks = p.four_d ? mul(B, H) : B;
    needs.push_back(
        {"--similarity needs", "elements",
         "2 × " + std::to_string(blocks) + " × " + std::to_string(Lq) + " × " + std::to_string(Lq),
         mul(mul(2, blocks), mul(Lq, Lq)), raise + " or drop --similarity"});
  }
  if (o.raster_side > 0) {
    needs.push_back({"the heatmap needs up to", "pixels",
                     factors_text({o.raster_side, o.raster_side}),
                     mul(o.raster_side, o.raster_side), raise + " or lower --max-size"});
  }

  for (const Need& n : needs) {
    if (n.count <= o.max_elements) continue;
    throw_input(p.source, n.what + " " + std::to_string(n.count) + " " + n.unit + " (" + n.factors +
                              "), more than --max-elements " + std::to_string(o.max_elements) +
                              n.advice);
  }
}

}  // namespace attn
