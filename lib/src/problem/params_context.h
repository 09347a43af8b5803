// What a variant's parameters are resolved with (variants/*.cc):
// the document's params by name, and the conversions and checks every
// variant shares — weights to math layout and whole form, projections
// checked against their inputs, heads against the widths.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "attn/document.h"
#include "attn/problem.h"

namespace attn::detail {

class ParamsContext {
 public:
  ParamsContext(const InputDocument& doc, Problem& p);

  const InputDocument& doc;
  Problem& p;

  // The param of that name, or null when the document does not give it.
  const Input* get(const std::string& name) const;
  bool torch() const { return p.params_layout == ParamsLayout::kTorch; }

  // "shape [4][8]", with the torch layout named when it applies.
  std::string described(const Input& in) const;

  // Refuses any param outside `allowed`: "not used by " + why.
  void only(const std::vector<std::string>& allowed, const std::string& why) const;

  // A weight matrix in math layout [in][out]; per-head [heads][in][d_head]
  // weights are concatenated in head order so head h owns column block h.
  // `heads` is the head count of a per-head form (0: the problem's).
  MatrixR weight(const Input& in, bool per_head_ok, int64_t heads = 0,
                 const char* heads_name = "heads") const;

  // A vector; biases may be given per head as [heads][d_head].
  Eigen::VectorXd vec(const Input& in, bool per_head_ok, int64_t heads = 0,
                      const char* heads_name = "heads") const;

  // The projections W_q, W_k, W_v and their biases of the dot-product
  // family, checked against their inputs and each other; sets d_q, d_k
  // and d_v (grouped-query widths included).
  void project_qkv();

  // Multi-head attention's tail: the Q/K norm weights, heads dividing the
  // widths, W_o and b_o; sets d_out.
  void heads_and_output_projection();

 private:
  int64_t projection(const char* w_name, const char* b_name, const std::string& src_name,
                     const Tensor<double>& src, const Shape& src_shape, std::optional<MatrixR>& W,
                     std::optional<Eigen::VectorXd>& b, bool kv = false);
  void check_heads_divide(int64_t width, const std::string& what) const;
  void grouped_widths();
  void qk_norm_weights();

  std::map<std::string, const Input*> given_;
};

// The last axis of t: the width of its rows.
inline int64_t last_dim(const Tensor<double>& t) { return t.dim(t.rank() - 1); }

}  // namespace attn::detail
