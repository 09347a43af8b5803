#include "attn/limits.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "attn/error.h"

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
  std::string advice;   // "; raise --max-elements or drop --weights"
};

}  // namespace

bool needs_full_scores(const Problem& p, const ComputeRequest& req, bool trace) {
  if (req.weights || req.scores || trace) return true;
  // scaled_dot and dot stream through fixed-size tiles (norm scaling takes a
  // first pass over the same tiles); the other variants are computed one
  // whole score matrix per (batch, head) at a time.
  return p.variant != Variant::kScaledDot && p.variant != Variant::kDot;
}

void check_limits(const Problem& p, const ComputeRequest& req, const LimitOptions& o) {
  const std::string raise = "; raise --max-elements";
  std::vector<Need> needs;
  const int64_t B = p.batch, H = p.heads, Lq = p.len_q, Lk = p.len_k;

  // Scores and weights: every (batch, head) when they are kept or traced,
  // one (batch, head) when the scoring needs them whole, one query block
  // against all keys when the engine streams.
  const bool keep = req.weights || req.scores || o.trace;
  if (keep) {
    const std::string unit = req.weights ? "weights" : "scores";
    const std::string flag = o.trace ? "--trace" : o.maps_flag;
    const std::vector<int64_t> f = {B, H, Lq, Lk};
    needs.push_back({(o.trace ? "--trace" : "keeping the " + unit) + std::string(" needs"), unit,
                     "batch " + std::to_string(B) + " × heads " + std::to_string(H) + " × " +
                         std::to_string(Lq) + " × " + std::to_string(Lk),
                     product(f), flag.empty() ? raise : raise + " or drop " + flag});
  } else if (needs_full_scores(p, req, false)) {
    const std::string who = "variant " + std::string(name(p.variant));
    const std::string per = p.variant == Variant::kBiattention ? "batch item" : "head";
    needs.push_back({who + " needs the whole score matrix of each " + per + ",", "scores",
                     factors_text({Lq, Lk}), mul(Lq, Lk), raise});
  }
  // (scaled_dot and dot without kept maps: the streaming kernel's tiles have
  // a fixed size, whatever len_q and len_k.)

  // Projected inputs and the output: whole tensors.
  auto tensor_need = [&](const std::string& name, int64_t len, int64_t width) {
    const std::vector<int64_t> f = {B, len, width};
    needs.push_back({name + " needs", "elements",
                     "batch " + std::to_string(B) + " × " + std::to_string(len) + " × " +
                         std::to_string(width),
                     product(f), raise});
  };
  const Params& w = p.params;
  tensor_need(w.W_q ? "Q = " + p.query_name + "·params.W_q" : "Q", Lq, p.d_q);
  tensor_need(w.W_k ? "K = " + p.key_name + "·params.W_k" : "K", Lk, p.d_k);
  tensor_need(w.W_v ? "V = " + p.value_name + "·params.W_v" : "V", Lk, p.d_v);
  const int64_t out_width = p.four_d ? mul(H, p.d_out) : p.d_out;
  tensor_need("the output", Lq, out_width);
  if (w.additive_W_q && w.additive_W_k) {
    // Bahdanau features Q·W_q and K·W_k, per batch item.
    const int64_t hidden = w.additive_W_q->cols();
    needs.push_back({"variant additive needs query features", "elements",
                     factors_text({Lq, hidden}), mul(Lq, hidden), raise});
    needs.push_back({"variant additive needs key features", "elements",
                     factors_text({Lk, hidden}), mul(Lk, hidden), raise});
  }
  if (o.raster_side > 0) {
    needs.push_back({"the heatmap needs up to", "pixels",
                     factors_text({o.raster_side, o.raster_side}),
                     mul(o.raster_side, o.raster_side), raise + " or lower --max-size"});
  }

  for (const Need& n : needs) {
    if (n.count <= o.max_elements) continue;
    throw_input(p.source, n.what + " " + std::to_string(n.count) + " " + n.unit + " (" +
                              n.factors + "), more than --max-elements " +
                              std::to_string(o.max_elements) + n.advice);
  }
}

}  // namespace attn
