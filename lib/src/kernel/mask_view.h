// The masks and bias of one (batch, head) pair as pointers into the
// broadcast tensors of a Problem. Both kernels (materialized and streaming)
// ask it the same questions, so they mask the same cells.
#pragma once

#include <algorithm>
#include <cstdint>

#include "attn/problem.h"

namespace attn::detail {

class MaskView {
 public:
  MaskView(const Problem& p, int64_t b, int64_t h) : len_k_(p.len_k) {
    const Masks& m = p.masks;
    const int64_t qk = p.len_q * p.len_k;
    if (!m.mask.empty()) {
      const int64_t mb = m.mask.dim(0) == 1 ? 0 : b;
      const int64_t mh = m.mask.dim(1) == 1 ? 0 : h;
      mask_ = m.mask.data() + (mb * m.mask.dim(1) + mh) * qk;
    }
    if (!m.bias.empty()) {
      const int64_t bb = m.bias.dim(0) == 1 ? 0 : b;
      const int64_t bh = m.bias.dim(1) == 1 ? 0 : h;
      bias_ = m.bias.data() + (bb * m.bias.dim(1) + bh) * qk;
    }
    if (!m.key_padding.empty()) {
      const int64_t kb = m.key_padding.dim(0) == 1 ? 0 : b;
      key_padding_ = m.key_padding.data() + kb * p.len_k;
    }
    if (!m.valid_lens.empty()) valid_lens_ = m.valid_lens.data() + b * p.len_q;
    causal_ = m.causal;
    diag_ = m.diagonal;
    if (m.window) {
      left_ = m.window_left;
      right_ = m.window_right;
    }
  }

  // Keys j >= key_limit(i) are masked for query i (valid_lens and causal);
  // the kernels use it to cut the key range. Causal and the window compare
  // positions: key j is query i's own position at j = i + diag_.
  int64_t key_limit(int64_t i) const {
    int64_t lim = len_k_;
    if (valid_lens_) lim = std::min(lim, valid_lens_[i]);
    if (causal_) lim = std::min(lim, i + diag_ + 1);
    if (right_ >= 0) lim = std::min(lim, i + diag_ + right_ + 1);
    return std::max<int64_t>(lim, 0);
  }

  // Keys j < key_start(i) are masked for query i (the window's left edge).
  int64_t key_start(int64_t i) const {
    return left_ >= 0 ? std::min(len_k_, std::max<int64_t>(0, i + diag_ - left_)) : 0;
  }

  // Whether a window's left edge bounds the keys of every row.
  bool windowed() const { return left_ >= 0; }

  // Row pointers into the dense masks (null when absent).
  const uint8_t* mask_row(int64_t i) const { return mask_ ? mask_ + i * len_k_ : nullptr; }
  const uint8_t* key_padding() const { return key_padding_; }
  const double* bias_row(int64_t i) const { return bias_ ? bias_ + i * len_k_ : nullptr; }
  bool has_dense() const { return mask_ || key_padding_; }
  bool has_bias() const { return bias_ != nullptr; }

  bool masked(int64_t i, int64_t j) const {
    if (j >= key_limit(i) || j < key_start(i)) return true;
    if (mask_ && mask_[i * len_k_ + j]) return true;
    if (key_padding_ && key_padding_[j]) return true;
    return false;
  }

 private:
  int64_t len_k_;
  const uint8_t* mask_ = nullptr;
  const double* bias_ = nullptr;
  const uint8_t* key_padding_ = nullptr;
  const int64_t* valid_lens_ = nullptr;
  bool causal_ = false;
  int64_t diag_ = 0;                // q_offset - k_offset
  int64_t left_ = -1, right_ = -1;  // window sides, -1 unbounded
};

}  // namespace attn::detail
