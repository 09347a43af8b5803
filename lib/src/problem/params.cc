// Parameters of a Problem: conversion to math layout and whole form, and the
// width checks between inputs, projections, heads and the output projection.
#include <map>

#include "attn/error.h"
#include "attn/json_tensor.h"
#include "problem/problem_internal.h"

namespace attn::detail {

namespace {

struct Ctx {
  const InputDocument& doc;
  Problem& p;
  std::map<std::string, const Input*> given;

  const Input* get(const std::string& name) const {
    auto it = given.find(name);
    return it == given.end() ? nullptr : it->second;
  }
  bool torch() const { return p.params_layout == ParamsLayout::kTorch; }
};

std::string described(const Ctx& c, const Input& in) {
  std::string s = "shape " + shape_string(in.tensor.shape());
  if (c.torch() && in.tensor.rank() >= 2) s += " (torch layout, [out][in])";
  return s;
}

// A weight matrix in math layout [in][out]; per-head [heads][in][d_head]
// weights are concatenated in head order so head h owns column block h.
// `heads` is the head count of a per-head form (kv_heads for W_k and W_v).
MatrixR weight(const Ctx& c, const Input& in, bool per_head_ok, int64_t heads = 0,
               const char* heads_name = "heads") {
  if (heads == 0) heads = c.p.heads;
  const Tensor<double>& t = in.tensor;
  for (int64_t d : t.shape()) {
    if (d == 0) throw_input(in.place, "empty weight (" + described(c, in) + ")");
  }
  if (t.rank() == 2) {
    const int64_t a = t.dim(0), b = t.dim(1);
    Eigen::Map<const MatrixR> m(t.data(), a, b);
    if (c.torch()) return m.transpose();
    return m;
  }
  if (t.rank() == 3 && per_head_ok) {
    const int64_t h = t.dim(0), a = t.dim(1), b = t.dim(2);
    if (h != heads) {
      throw_input(in.place, "per-head weight " + described(c, in) + " has " + std::to_string(h) +
                                " heads but " + heads_name + " is " + std::to_string(heads));
    }
    const int64_t in_dim = c.torch() ? b : a;
    const int64_t d_head = c.torch() ? a : b;
    MatrixR whole(in_dim, h * d_head);
    for (int64_t k = 0; k < h; ++k) {
      Eigen::Map<const MatrixR> m(t.data() + k * a * b, a, b);
      if (c.torch()) {
        whole.middleCols(k * d_head, d_head) = m.transpose();
      } else {
        whole.middleCols(k * d_head, d_head) = m;
      }
    }
    return whole;
  }
  std::string forms = c.torch() ? "[out][in]" : "[in][out]";
  if (per_head_ok) forms += c.torch() ? " or [heads][d_head][in]" : " or [heads][in][d_head]";
  throw_input(in.place, "expected a weight matrix " + forms + ", got " + described(c, in));
}

// A vector; biases may be given per head as [heads][d_head].
Eigen::VectorXd vec(const Ctx& c, const Input& in, bool per_head_ok, int64_t heads = 0,
                    const char* heads_name = "heads") {
  if (heads == 0) heads = c.p.heads;
  const Tensor<double>& t = in.tensor;
  if (t.rank() == 1 || (per_head_ok && t.rank() == 2)) {
    if (t.rank() == 2 && t.dim(0) != heads) {
      throw_input(in.place, "per-head bias of shape " + shape_string(t.shape()) + " has " +
                                std::to_string(t.dim(0)) + " heads but " + heads_name + " is " +
                                std::to_string(heads));
    }
    if (t.size() == 0) throw_input(in.place, "empty vector");
    return Eigen::Map<const Eigen::VectorXd>(t.data(), t.size());
  }
  throw_input(in.place, std::string("expected a vector") +
                            (per_head_ok ? " [out] or [heads][d_head]" : "") + ", got shape " +
                            shape_string(t.shape()));
}

int64_t last_dim(const Tensor<double>& t) { return t.dim(t.rank() - 1); }

// Projection of one input: checks W against the source width and b against
// W; returns the projected width.
int64_t projection(Ctx& c, const char* w_name, const char* b_name, const std::string& src_name,
                   const Tensor<double>& src, const Shape& src_shape, std::optional<MatrixR>& W,
                   std::optional<Eigen::VectorXd>& b, bool kv = false) {
  // Keys and values have kv_heads heads (grouped-query attention).
  const int64_t heads = kv ? c.p.kv() : c.p.heads;
  const char* heads_name = kv && c.p.grouped() ? "kv_heads" : "heads";
  const Input* wi = c.get(w_name);
  const Input* bi = c.get(b_name);
  const int64_t width = last_dim(src);
  if (!wi) {
    if (bi) {
      throw_input(bi->place, std::string("params.") + b_name + " needs params." + w_name +
                                 " (a bias belongs to a projection)");
    }
    return width;
  }
  W = weight(c, *wi, true, heads, heads_name);
  if (W->rows() != width) {
    throw_input(wi->place, described(c, *wi) + " does not match " + src_name + " width " +
                               std::to_string(width) + " (" + src_name + " has shape " +
                               shape_string(src_shape) + "; the weight needs " +
                               std::to_string(width) + " input rows)");
  }
  if (bi) {
    b = vec(c, *bi, true, heads, heads_name);
    if (b->size() != W->cols()) {
      throw_input(bi->place, "length " + std::to_string(b->size()) + " (shape " +
                                 shape_string(bi->tensor.shape()) + ") does not match params." +
                                 w_name + " output width " + std::to_string(W->cols()) + " (" +
                                 described(c, *wi) + ")");
    }
  }
  return W->cols();
}

void only(const Ctx& c, const std::vector<std::string>& allowed, const std::string& why) {
  for (const auto& [key, in] : c.given) {
    bool ok = false;
    for (const std::string& a : allowed) ok |= a == key;
    if (!ok) throw_input(in->place, "not used by " + why);
  }
}

void check_heads_divide(const Ctx& c, int64_t width, const std::string& what) {
  if (width % c.p.heads != 0) {
    throw_input(c.doc.settings_place, "heads " + std::to_string(c.p.heads) +
                                          " does not divide the " + what + " width " +
                                          std::to_string(width));
  }
}

// Grouped-query widths: the queries split into heads, the keys and values
// into kv_heads, and a query head as wide as a key head.
void grouped_widths(Ctx& c) {
  Problem& p = c.p;
  const std::string kv = std::to_string(p.kv_heads);
  if (!p.four_d) {
    check_heads_divide(c, p.d_q, "query");
    const std::pair<int64_t, const char*> sides[] = {{p.d_k, "key"}, {p.d_v, "value"}};
    for (const auto& [width, what] : sides) {
      if (width % p.kv_heads != 0) {
        throw_input(place_path(c.doc.settings_place, "kv_heads"),
                    kv + " does not divide the " + what + " width " + std::to_string(width) +
                        " (keys and values carry kv_heads heads)");
      }
    }
  }
  const int64_t dq = p.d_q / p.heads, dk = p.d_k / p.kv_heads;
  if (dq != dk) {
    const Input* wk = c.get("W_k");
    const std::optional<Input>& keys = p.mode == Mode::kQkv     ? c.doc.K
                                       : p.mode == Mode::kCross ? c.doc.Y
                                                                : c.doc.X;
    std::string place = wk ? wk->place : keys ? keys->place : p.source;
    throw_input(place, "key head width " + std::to_string(dk) + " (key width " +
                           std::to_string(p.d_k) + " over kv_heads " + kv +
                           ") does not match the query head width " + std::to_string(dq) +
                           " (query width " + std::to_string(p.d_q) + " over heads " +
                           std::to_string(p.heads) + "); variant " + std::string(name(p.variant)) +
                           " needs equal widths");
  }
}

// The Q/K norm's weights: one per feature of a head, the same for every
// head (transformers' q_norm / k_norm over head_dim).
void qk_norm_weights(Ctx& c) {
  Problem& p = c.p;
  if (p.qk_norm == 0) return;
  const int64_t width = p.d_q / p.heads;
  for (const char* n : {"q_norm", "k_norm"}) {
    const Input* in = c.get(n);
    if (!in) continue;
    Eigen::VectorXd v = vec(c, *in, false);
    if (v.size() != width) {
      throw_input(in->place, "length " + std::to_string(v.size()) +
                                 " does not match the head width " + std::to_string(width) +
                                 " (the Q/K norm weighs each feature of a head)");
    }
    (std::string(n) == "q_norm" ? p.params.q_norm : p.params.k_norm) = std::move(v);
  }
}

void dot_family(Ctx& c) {
  Problem& p = c.p;
  const bool single = p.variant == Variant::kSingleLayer;
  if (single) {
    only(c, {"W_q", "W_k", "b_q", "b_k", "w"},
         "variant single_layer (it takes w, and optionally the projections W_q, W_k)");
  } else {
    only(c, {"W_q", "W_k", "W_v", "b_q", "b_k", "b_v", "W_o", "b_o", "q_norm", "k_norm"},
         "variant " + std::string(name(p.variant)) +
             " (it takes W_q, W_k, W_v, b_q, b_k, b_v, W_o, b_o, q_norm, k_norm)");
  }
  for (const char* n : {"q_norm", "k_norm"}) {
    if (const Input* in = c.get(n); in && p.qk_norm == 0) {
      throw_input(in->place, std::string("params.") + n +
                                 " weighs the Q/K norm, which is off; set qk_norm to its "
                                 "epsilon (e.g. 1e-6) to turn it on");
    }
  }
  const Input* projection_given = nullptr;
  for (const auto& [n, in] : c.given) {
    if (!projection_given && n != "q_norm" && n != "k_norm") projection_given = in;
  }
  if (p.four_d && projection_given) {
    throw_input(projection_given->place,
                "projections cannot be used with 4D Q/K/V [batch][heads][len][dim]; give "
                "projected per-head tensors");
  }
  Params& w = p.params;
  const std::string q_src = p.query_name, k_src = p.key_name, v_src = p.value_name;
  p.d_q = projection(c, "W_q", "b_q", q_src, p.query_in, p.query_shape, w.W_q, w.b_q);
  p.d_k = projection(c, "W_k", "b_k", k_src, p.key_in, p.key_shape, w.W_k, w.b_k, true);
  p.d_v = projection(c, "W_v", "b_v", v_src, p.value_in, p.value_shape, w.W_v, w.b_v, true);
  if (p.four_d) {
    p.d_q *= p.heads;
    p.d_k *= p.kv();
    p.d_v *= p.kv();
  }
  if (p.grouped() && !single) grouped_widths(c);
  if (!p.grouped() && p.d_q != p.d_k) {
    const Input* wk = c.get("W_k");
    const Input* wq = c.get("W_q");
    std::string q_desc =
        wq ? "projected query width " + std::to_string(p.d_q) + " (params.W_q)"
           : "query width " + std::to_string(p.d_q) + " (" + with_shape(q_src, p.query_shape) + ")";
    std::string k_desc =
        wk ? "projected key width " + std::to_string(p.d_k) + " (params.W_k)"
           : "key width " + std::to_string(p.d_k) + " (" + with_shape(k_src, p.key_shape) + ")";
    // Without projections the keys' own place: "t.json: K", "k.csv".
    const std::optional<Input>& keys = p.mode == Mode::kQkv     ? c.doc.K
                                       : p.mode == Mode::kCross ? c.doc.Y
                                                                : c.doc.X;
    std::string place = wk ? wk->place : wq ? wq->place : keys ? keys->place : p.source;
    throw_input(place, k_desc + " does not match the " + q_desc + "; variant " +
                           std::string(name(p.variant)) + " needs equal widths");
  }
  if (single) {
    if (p.heads != 1) {
      throw_input(c.doc.settings_place,
                  "variant single_layer has one head; got heads " + std::to_string(p.heads));
    }
    const Input* wi = c.get("w");
    if (!wi)
      throw_input(p.source,
                  "variant single_layer needs params.w (shape [" + std::to_string(p.d_k) + "])");
    w.w = vec(c, *wi, false);
    if (w.w->size() != p.d_k) {
      throw_input(wi->place, "length " + std::to_string(w.w->size()) +
                                 " does not match the key width " + std::to_string(p.d_k));
    }
    p.d_out = p.d_v;
    return;
  }
  qk_norm_weights(c);
  if (!p.four_d && !p.grouped()) {
    check_heads_divide(c, p.d_q, "query");
    check_heads_divide(c, p.d_v, "value");
  }
  p.d_out = p.four_d ? p.head_dim_v() : p.concat_width();
  if (const Input* wo = c.get("W_o")) {
    w.W_o = weight(c, *wo, false);
    if (w.W_o->rows() != p.concat_width()) {
      throw_input(wo->place, described(c, *wo) +
                                 " does not match the concatenated head output "
                                 "width " +
                                 std::to_string(p.concat_width()) + " (heads " +
                                 std::to_string(p.heads) + " x value width " +
                                 std::to_string(p.head_dim_v()) + ")");
    }
    p.d_out = w.W_o->cols();
  }
  if (const Input* bo = c.get("b_o")) {
    if (p.four_d) throw_input(bo->place, "not used with 4D Q/K/V");
    if (!w.W_o) {
      throw_input(bo->place,
                  "b_o without W_o: the output bias belongs to the output "
                  "projection; give W_o too (an identity matrix for a bias alone)");
    }
    w.b_o = vec(c, *bo, false);
    if (w.b_o->size() != p.d_out) {
      throw_input(bo->place, "length " + std::to_string(w.b_o->size()) +
                                 " does not match the output width " + std::to_string(p.d_out));
    }
  }
}

void additive(Ctx& c) {
  Problem& p = c.p;
  only(c, {"W_q", "W_k", "w_v"},
       "variant additive (it takes the scoring parameters W_q, W_k, w_v; projections and "
       "biases are not part of it)");
  if (p.heads != 1) {
    throw_input(c.doc.settings_place,
                "variant additive has one head; got heads " + std::to_string(p.heads));
  }
  if (p.four_d) throw_input(p.source, "variant additive does not take 4D Q/K/V");
  const Input* wq = c.get("W_q");
  const Input* wk = c.get("W_k");
  const Input* wv = c.get("w_v");
  if (!wq || !wk || !wv) {
    throw_input(p.source,
                "variant additive needs params.W_q [dq][h], params.W_k [dk][h] and "
                "params.w_v [h]");
  }
  Params& w = p.params;
  w.additive_W_q = weight(c, *wq, false);
  w.additive_W_k = weight(c, *wk, false);
  w.w_v = vec(c, *wv, false);
  p.d_q = last_dim(p.query_in);
  p.d_k = last_dim(p.key_in);
  p.d_v = last_dim(p.value_in);
  if (w.additive_W_q->rows() != p.d_q) {
    throw_input(wq->place, described(c, *wq) + " does not match the query width " +
                               std::to_string(p.d_q) + " (" +
                               with_shape(p.query_name, p.query_shape) + ")");
  }
  if (w.additive_W_k->rows() != p.d_k) {
    throw_input(wk->place, described(c, *wk) + " does not match the key width " +
                               std::to_string(p.d_k) + " (" + with_shape(p.key_name, p.key_shape) +
                               ")");
  }
  if (w.additive_W_k->cols() != w.additive_W_q->cols()) {
    throw_input(wk->place, described(c, *wk) + " has hidden width " +
                               std::to_string(w.additive_W_k->cols()) + " but params.W_q (" +
                               described(c, *wq) + ") has " +
                               std::to_string(w.additive_W_q->cols()));
  }
  if (w.w_v->size() != w.additive_W_q->cols()) {
    throw_input(wv->place, "length " + std::to_string(w.w_v->size()) +
                               " does not match the hidden width " +
                               std::to_string(w.additive_W_q->cols()) + " of params.W_q");
  }
  p.d_out = p.d_v;
}

void biattention(Ctx& c) {
  Problem& p = c.p;
  only(c, {"w_in", "w_mem", "dot_scale"}, "variant biattention (it takes w_in, w_mem, dot_scale)");
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
    Eigen::VectorXd v = vec(c, *in, false);
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

}  // namespace

void resolve_params(const InputDocument& doc, Problem& p) {
  Ctx c{doc, p, {}};
  for (const NamedInput& n : doc.params) c.given[n.name] = &n.input;
  switch (p.variant) {
    case Variant::kScaledDot:
    case Variant::kDot:
    case Variant::kSingleLayer:
      dot_family(c);
      break;
    case Variant::kAdditive:
      additive(c);
      break;
    case Variant::kBiattention:
      biattention(c);
      break;
  }
}

}  // namespace attn::detail
