// Parameters of a Problem: conversion to math layout and whole form, and the
// width checks between inputs, projections, heads and the output projection
// that the variants (variants/) resolve their params with.
#include "attn/error.h"
#include "attn/json_tensor.h"
#include "problem/params_context.h"
#include "problem/problem_internal.h"
#include "problem/variant_unit.h"

namespace attn::detail {

ParamsContext::ParamsContext(const InputDocument& d, Problem& problem) : doc(d), p(problem) {
  for (const NamedInput& n : doc.params) given_[n.name] = &n.input;
}

const Input* ParamsContext::get(const std::string& name) const {
  auto it = given_.find(name);
  return it == given_.end() ? nullptr : it->second;
}

std::string ParamsContext::described(const Input& in) const {
  std::string s = "shape " + shape_string(in.tensor.shape());
  if (torch() && in.tensor.rank() >= 2) s += " (torch layout, [out][in])";
  return s;
}

MatrixR ParamsContext::weight(const Input& in, bool per_head_ok, int64_t heads,
                              const char* heads_name) const {
  if (heads == 0) heads = p.heads;
  const Tensor<double>& t = in.tensor;
  for (int64_t d : t.shape()) {
    if (d == 0) throw_input(in.place, "empty weight (" + described(in) + ")");
  }
  if (t.rank() == 2) {
    const int64_t a = t.dim(0), b = t.dim(1);
    Eigen::Map<const MatrixR> m(t.data(), a, b);
    if (torch()) return m.transpose();
    return m;
  }
  if (t.rank() == 3 && per_head_ok) {
    const int64_t h = t.dim(0), a = t.dim(1), b = t.dim(2);
    if (h != heads) {
      throw_input(in.place, "per-head weight " + described(in) + " has " + std::to_string(h) +
                                " heads but " + heads_name + " is " + std::to_string(heads));
    }
    const int64_t in_dim = torch() ? b : a;
    const int64_t d_head = torch() ? a : b;
    MatrixR whole(in_dim, h * d_head);
    for (int64_t k = 0; k < h; ++k) {
      Eigen::Map<const MatrixR> m(t.data() + k * a * b, a, b);
      if (torch()) {
        whole.middleCols(k * d_head, d_head) = m.transpose();
      } else {
        whole.middleCols(k * d_head, d_head) = m;
      }
    }
    return whole;
  }
  std::string forms = torch() ? "[out][in]" : "[in][out]";
  if (per_head_ok) forms += torch() ? " or [heads][d_head][in]" : " or [heads][in][d_head]";
  throw_input(in.place, "expected a weight matrix " + forms + ", got " + described(in));
}

Eigen::VectorXd ParamsContext::vec(const Input& in, bool per_head_ok, int64_t heads,
                                   const char* heads_name) const {
  if (heads == 0) heads = p.heads;
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

// Projection of one input: checks W against the source width and b against
// W; returns the projected width.
int64_t ParamsContext::projection(const char* w_name, const char* b_name,
                                  const std::string& src_name, const Tensor<double>& src,
                                  const Shape& src_shape, std::optional<MatrixR>& W,
                                  std::optional<Eigen::VectorXd>& b, bool kv) {
  // Keys and values have kv_heads heads (grouped-query attention).
  const int64_t heads = kv ? p.kv() : p.heads;
  const char* heads_name = kv && p.grouped() ? "kv_heads" : "heads";
  const Input* wi = get(w_name);
  const Input* bi = get(b_name);
  const int64_t width = last_dim(src);
  if (!wi) {
    if (bi) {
      throw_input(bi->place, std::string("params.") + b_name + " needs params." + w_name +
                                 " (a bias belongs to a projection)");
    }
    return width;
  }
  W = weight(*wi, true, heads, heads_name);
  if (W->rows() != width) {
    throw_input(wi->place, described(*wi) + " does not match " + src_name + " width " +
                               std::to_string(width) + " (" + src_name + " has shape " +
                               shape_string(src_shape) + "; the weight needs " +
                               std::to_string(width) + " input rows)");
  }
  if (bi) {
    b = vec(*bi, true, heads, heads_name);
    if (b->size() != W->cols()) {
      throw_input(bi->place, "length " + std::to_string(b->size()) + " (shape " +
                                 shape_string(bi->tensor.shape()) + ") does not match params." +
                                 w_name + " output width " + std::to_string(W->cols()) + " (" +
                                 described(*wi) + ")");
    }
  }
  return W->cols();
}

void ParamsContext::only(const std::vector<std::string>& allowed, const std::string& why) const {
  for (const auto& [key, in] : given_) {
    bool ok = false;
    for (const std::string& a : allowed) ok |= a == key;
    if (!ok) throw_input(in->place, "not used by " + why);
  }
}

void ParamsContext::check_heads_divide(int64_t width, const std::string& what) const {
  if (width % p.heads != 0) {
    throw_input(doc.settings_place, "heads " + std::to_string(p.heads) + " does not divide the " +
                                        what + " width " + std::to_string(width));
  }
}

// Grouped-query widths: the queries split into heads, the keys and values
// into kv_heads, and a query head as wide as a key head.
void ParamsContext::grouped_widths() {
  const std::string kv = std::to_string(p.kv_heads);
  if (!p.four_d) {
    check_heads_divide(p.d_q, "query");
    const std::pair<int64_t, const char*> sides[] = {{p.d_k, "key"}, {p.d_v, "value"}};
    for (const auto& [width, what] : sides) {
      if (width % p.kv_heads != 0) {
        throw_input(place_path(doc.settings_place, "kv_heads"),
                    kv + " does not divide the " + what + " width " + std::to_string(width) +
                        " (keys and values carry kv_heads heads)");
      }
    }
  }
  const int64_t dq = p.d_q / p.heads, dk = p.d_k / p.kv_heads;
  if (dq != dk) {
    const Input* wk = get("W_k");
    const std::optional<Input>& keys = p.mode == Mode::kQkv     ? doc.K
                                       : p.mode == Mode::kCross ? doc.Y
                                                                : doc.X;
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
void ParamsContext::qk_norm_weights() {
  if (p.qk_norm == 0) return;
  const int64_t width = p.d_q / p.heads;
  for (const char* n : {"q_norm", "k_norm"}) {
    const Input* in = get(n);
    if (!in) continue;
    Eigen::VectorXd v = vec(*in, false);
    if (v.size() != width) {
      throw_input(in->place, "length " + std::to_string(v.size()) +
                                 " does not match the head width " + std::to_string(width) +
                                 " (the Q/K norm weighs each feature of a head)");
    }
    (std::string(n) == "q_norm" ? p.params.q_norm : p.params.k_norm) = std::move(v);
  }
}

void ParamsContext::project_qkv() {
  for (const char* n : {"q_norm", "k_norm"}) {
    if (const Input* in = get(n); in && p.qk_norm == 0) {
      throw_input(in->place, std::string("params.") + n +
                                 " weighs the Q/K norm, which is off; set qk_norm to its "
                                 "epsilon (e.g. 1e-6) to turn it on");
    }
  }
  const Input* projection_given = nullptr;
  for (const auto& [n, in] : given_) {
    if (!projection_given && n != "q_norm" && n != "k_norm") projection_given = in;
  }
  if (p.four_d && projection_given) {
    throw_input(projection_given->place,
                "projections cannot be used with 4D Q/K/V [batch][heads][len][dim]; give "
                "projected per-head tensors");
  }
  Params& w = p.params;
  const std::string q_src = p.query_name, k_src = p.key_name, v_src = p.value_name;
  p.d_q = projection("W_q", "b_q", q_src, p.query_in, p.query_shape, w.W_q, w.b_q);
  p.d_k = projection("W_k", "b_k", k_src, p.key_in, p.key_shape, w.W_k, w.b_k, true);
  p.d_v = projection("W_v", "b_v", v_src, p.value_in, p.value_shape, w.W_v, w.b_v, true);
  if (p.four_d) {
    p.d_q *= p.heads;
    p.d_k *= p.kv();
    p.d_v *= p.kv();
  }
  // Only scaled_dot and dot take kv_heads: for the others this is never true.
  if (p.grouped()) grouped_widths();
  if (!p.grouped() && p.d_q != p.d_k) {
    const Input* wk = get("W_k");
    const Input* wq = get("W_q");
    std::string q_desc =
        wq ? "projected query width " + std::to_string(p.d_q) + " (params.W_q)"
           : "query width " + std::to_string(p.d_q) + " (" + with_shape(q_src, p.query_shape) + ")";
    std::string k_desc =
        wk ? "projected key width " + std::to_string(p.d_k) + " (params.W_k)"
           : "key width " + std::to_string(p.d_k) + " (" + with_shape(k_src, p.key_shape) + ")";
    // Without projections the keys' own place: "t.json: K", "k.csv".
    const std::optional<Input>& keys = p.mode == Mode::kQkv     ? doc.K
                                       : p.mode == Mode::kCross ? doc.Y
                                                                : doc.X;
    std::string place = wk ? wk->place : wq ? wq->place : keys ? keys->place : p.source;
    throw_input(place, k_desc + " does not match the " + q_desc + "; variant " +
                           std::string(name(p.variant)) + " needs equal widths");
  }
}

void ParamsContext::heads_and_output_projection() {
  Params& w = p.params;
  qk_norm_weights();
  if (!p.four_d && !p.grouped()) {
    check_heads_divide(p.d_q, "query");
    check_heads_divide(p.d_v, "value");
  }
  p.d_out = p.four_d ? p.head_dim_v() : p.concat_width();
  if (const Input* wo = get("W_o")) {
    w.W_o = weight(*wo, false);
    if (w.W_o->rows() != p.concat_width()) {
      throw_input(wo->place, described(*wo) +
                                 " does not match the concatenated head output "
                                 "width " +
                                 std::to_string(p.concat_width()) + " (heads " +
                                 std::to_string(p.heads) + " x value width " +
                                 std::to_string(p.head_dim_v()) + ")");
    }
    p.d_out = w.W_o->cols();
  }
  if (const Input* bo = get("b_o")) {
    if (p.four_d) throw_input(bo->place, "not used with 4D Q/K/V");
    if (!w.W_o) {
      throw_input(bo->place,
                  "b_o without W_o: the output bias belongs to the output "
                  "projection; give W_o too (an identity matrix for a bias alone)");
    }
    w.b_o = vec(*bo, false);
    if (w.b_o->size() != p.d_out) {
      throw_input(bo->place, "length " + std::to_string(w.b_o->size()) +
                                 " does not match the output width " + std::to_string(p.d_out));
    }
  }
}

void resolve_params(const InputDocument& doc, Problem& p) {
  ParamsContext c(doc, p);
  const VariantUnit& u = variant_unit(p.variant);
  c.only(u.params, "variant " + std::string(u.name) + " (" + u.params_note + ")");
  u.resolve_params(c);
}

}  // namespace attn::detail
