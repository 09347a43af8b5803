// The fast scaled dot-product attention kernel, per (batch, head):
// FlashAttention-style online softmax over blocks of queries x blocks of
// keys (running max and sum, rescaled accumulators). Output only, it never
// allocates len_q x len_k and skips key ranges that masks rule out; asked
// for the weights (and optionally the scores and mask flags) it writes them
// as it goes in the same pass, and the output's digits do not change.
// It is built once per instruction set (attention_kernel_<isa>.cc, from
// attention_kernel_impl.h); these entry points run the build kernel_isa()
// chose for this CPU (kernel/instruction_set.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "attn/options.h"
#include "attn/progress.h"
#include "engine/mask_view.h"

namespace attn::kernel {

// What happens to a raw score q·k before the softmax, and to the output.
struct ScoreRules {
  double mult = 1.0;      // scale factor / temperature (1 with scale_at output)
  bool norm = false;      // divide by ‖S‖_F of the head first (scale "norm")
  double out_mult = 1.0;  // multiplier of the head output (scale_at output)
  double mask_fill = -INFINITY;
  FullyMasked fully_masked = FullyMasked::kZero;
  double dropout = 0.0;
  uint64_t seed = 0;
  double softcap = 0.0;  // > 0: scores become c·tanh(s/c) after the multiplier
};

template <class T>
struct HeadTask {
  const T* q = nullptr;  // [len_q][d], row-major
  const T* k = nullptr;  // [len_k][d]
  const T* v = nullptr;  // [len_k][dv]
  T* out = nullptr;      // [len_q][dv]
  // Kept maps, [len_q][len_k] each, or null: the weights (before dropout),
  // the scores entering the softmax (scaled and biased, before masking),
  // and the masked cells. The maps are doubles, as results hold them,
  // whatever T: the kernel writes each row once, when it is done.
  double* weights = nullptr;
  double* scores = nullptr;
  uint8_t* masked = nullptr;
  int64_t len_q = 0, len_k = 0, d = 0, dv = 0;
  const detail::MaskView* masks = nullptr;  // null: nothing masked
  int64_t batch = 0, head = 0, heads = 1;   // for dropout counters and reports
  // ALiBi: -alibi·|i - j| joins the bias (0: none).
  double alibi = 0.0;
  // Attention sink: a logit in every row's softmax denominator, no value.
  bool has_sink = false;
  double sink = 0.0;
};

struct FullyMaskedRow {
  int64_t batch, head, query;
};

// Elements of one head's keys as the kernels pack them: len_k rounded up to
// whole panels of 8 to 48 keys (the SIMD width decides), times d. A head of
// a few very wide keys is packed at several times its size.
template <class T>
int64_t packed_key_elements(int64_t len_k, int64_t d);

// Runs every task. Tasks with the same k and v pointers (query heads of one
// grouped-query group) share one packed copy of them. Rows with every key masked are
// appended to `fully_masked` in (task, query) order and filled as rules.fully_masked says (kError
// is reported the same way; the caller raises it). `progress`, when set, is called from one thread
// with (blocks done, blocks).
template <class T>
void run_heads(std::vector<HeadTask<T>>& tasks, const ScoreRules& rules, int threads,
               std::vector<FullyMaskedRow>* fully_masked, const ProgressFn& progress = {});

}  // namespace attn::kernel
