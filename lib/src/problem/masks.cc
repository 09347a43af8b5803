// Masks of a Problem: every mask kind of docs/spec.md checked against the
// score shape [batch][heads][len_q][len_k] and stored in one broadcastable
// form, so the engine sees the same thing whatever the user wrote.
#include <cmath>

#include "attn/error.h"
#include "problem/problem_internal.h"
#include "problem/variant_unit.h"

namespace attn::detail {

namespace {

std::string dims(std::initializer_list<int64_t> d) { return shape_string(Shape(d)); }

// The accepted shapes of a [q][k]-like mask, written out with the numbers.
std::string score_forms(const Problem& p) {
  const int64_t q = p.len_q, k = p.len_k;
  if (p.batched) {
    return dims({q, k}) + ", " + dims({p.batch, q, k}) + " or " + dims({p.batch, p.heads, q, k});
  }
  return dims({q, k}) + ", " + dims({p.heads, q, k}) + " (per head) or " + dims({1, p.heads, q, k});
}

// Brings a [q][k], [b|h][q][k] or [b][h][q][k] tensor to rank 4 with batch
// and head axes of size 1 (broadcast) or full size.
template <class T>
Tensor<T> to_scores_shape(const Input& in, const Problem& p, const std::string& what) {
  const Tensor<double>& t = in.tensor;
  Shape s = t.shape();
  Shape four;
  if (s.size() == 2) {
    four = {1, 1, s[0], s[1]};
  } else if (s.size() == 3) {
    four = p.batched ? Shape{s[0], 1, s[1], s[2]} : Shape{1, s[0], s[1], s[2]};
  } else if (s.size() == 4) {
    four = s;
  }
  const bool ok = four.size() == 4 && (four[0] == 1 || four[0] == p.batch) &&
                  (four[1] == 1 || four[1] == p.heads) && four[2] == p.len_q && four[3] == p.len_k;
  if (!ok) {
    (void)what;
    throw_input(in.place, "shape " + shape_string(s) + " does not match the attention scores " +
                              dims({p.len_q, p.len_k}) + " (len_q " + std::to_string(p.len_q) +
                              ", len_k " + std::to_string(p.len_k) + "); expected " +
                              score_forms(p));
  }
  Values<T> data(t.values().begin(), t.values().end());
  return Tensor<T>(four, std::move(data));
}

void flip(Tensor<uint8_t>& t) {
  for (auto& x : t.values()) x = static_cast<uint8_t>(1 - x);
}

}  // namespace

void resolve_masks(const InputDocument& doc, Problem& p) {
  Masks& m = p.masks;
  const bool keep =
      doc.settings.mask_convention.value_or(MaskConvention::kBlock) == MaskConvention::kKeep;
  m.flipped = keep;
  if (bidaf_pipeline(p.variant)) {
    for (const auto* in : {&doc.mask, &doc.valid_lens, &doc.attn_bias}) {
      if (*in) throw_input((*in)->place, "biattention accepts key_padding_mask only");
    }
  }
  if (doc.mask) {
    m.mask = to_scores_shape<uint8_t>(*doc.mask, p, "mask");
    if (keep) flip(m.mask);
  }
  if (doc.attn_bias) {
    m.bias = to_scores_shape<double>(*doc.attn_bias, p, "attn_bias");
    // Named by its index in the bias as given, before broadcasting.
    const Tensor<double>& given = doc.attn_bias->tensor;
    for (int64_t i = 0; i < given.size(); ++i) {
      const double x = given[i];
      if (!std::isnan(x) && x != INFINITY) continue;
      std::string index;
      int64_t rest = i;
      for (int d = given.rank() - 1; d >= 0; --d) {
        index = "[" + std::to_string(rest % given.dim(d)) + "]" + index;
        rest /= given.dim(d);
      }
      throw_input(doc.attn_bias->place + index,
                  std::string(std::isnan(x) ? "nan" : "+inf") +
                      " is not allowed; attn_bias holds numbers and \"-inf\"");
    }
  }
  if (doc.key_padding_mask) {
    const Input& in = *doc.key_padding_mask;
    const Shape& s = in.tensor.shape();
    Shape two;
    if (s.size() == 1) two = {1, s[0]};
    if (s.size() == 2) two = s;
    if (two.size() != 2 || two[1] != p.len_k || (two[0] != 1 && two[0] != p.batch)) {
      std::string forms = dims({p.len_k});
      if (p.batched) forms += " or " + dims({p.batch, p.len_k});
      throw_input(in.place, "shape " + shape_string(s) + " does not match the " +
                                std::to_string(p.len_k) + " keys; expected " + forms);
    }
    Values<uint8_t> data(in.tensor.values().begin(), in.tensor.values().end());
    m.key_padding = Tensor<uint8_t>(two, std::move(data));
    if (keep) flip(m.key_padding);
    if (bidaf_pipeline(p.variant)) {
      for (int64_t b = 0; b < two[0]; ++b) {
        bool all = true;
        for (int64_t j = 0; j < p.len_k; ++j) all &= m.key_padding[b * p.len_k + j] != 0;
        if (all) {
          throw_input(in.place, "every memory position" +
                                    (p.batched ? " of batch " + std::to_string(b) : "") +
                                    " is masked; biattention needs at least one");
        }
      }
    }
  }
  if (doc.valid_lens) {
    const Input& in = *doc.valid_lens;
    const Tensor<double>& t = in.tensor;
    const Shape& s = t.shape();
    m.valid_lens.assign(static_cast<size_t>(p.batch * p.len_q), 0);
    bool ok = false;
    if (!p.batched && s.empty()) {
      for (auto& v : m.valid_lens) v = static_cast<int64_t>(t[0]);
      ok = true;
    } else if (!p.batched && s.size() == 1 && s[0] == p.len_q) {
      for (int64_t i = 0; i < p.len_q; ++i) m.valid_lens[i] = static_cast<int64_t>(t[i]);
      ok = true;
    } else if (p.batched && s.size() == 1 && s[0] == p.batch) {
      for (int64_t b = 0; b < p.batch; ++b) {
        for (int64_t i = 0; i < p.len_q; ++i) {
          m.valid_lens[b * p.len_q + i] = static_cast<int64_t>(t[b]);
        }
      }
      ok = true;
    } else if (p.batched && s.size() == 2 && s[0] == p.batch && s[1] == p.len_q) {
      for (int64_t i = 0; i < p.batch * p.len_q; ++i) m.valid_lens[i] = static_cast<int64_t>(t[i]);
      ok = true;
    }
    if (!ok) {
      std::string forms = p.batched ? dims({p.batch}) + " (one length per batch) or " +
                                          dims({p.batch, p.len_q}) + " (per batch and query)"
                                    : "an integer or " + dims({p.len_q}) + " (one per query)";
      throw_input(in.place, "shape " + shape_string(s) + " does not fit " +
                                (p.batched ? std::string("batched") : std::string("unbatched")) +
                                " input; expected " + forms);
    }
  }
}

}  // namespace attn::detail
