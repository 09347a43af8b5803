// The fast scaled dot-product attention kernel, per (batch, head):
// FlashAttention-style online softmax over blocks of queries x blocks of
// keys (running max and sum, rescaled accumulators). Output only, it never
// allocates len_q x len_k and skips key ranges that masks rule out; asked
// for the weights (and optionally the scores and mask flags) it writes them
// as it goes in the same pass, and the output's digits do not change.
// It is built once per instruction set (attention_kernel_<isa>.cc, from
// attention_kernel_impl.h); these entry points run the build kernel_isa()
// chose for this CPU (kernel/instruction_set.h).
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "attn/options.h"
#include "attn/progress.h"
#include "kernel/mask_view.h"

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

// One input matrix of a head, row-major, as the kernels read it: values
// of T, or (float kernels) the caller's doubles, each rounded to T where it
// is read, as a copy in T would hold it. A 4D input is then never copied
// before the kernels pack it.
template <class T>
struct Input {
  const T* same = nullptr;
  const double* wide = nullptr;

  // f(pointer) with whichever is set.
  template <class F>
  decltype(auto) visit(F&& f) const {
    return wide ? f(wide) : f(same);
  }
  // Identifies the matrix: tasks of one GQA group share their K and V.
  const void* id() const { return wide ? static_cast<const void*>(wide) : same; }
};

template <class T>
struct HeadTask {
  Input<T> q;  // [len_q][d], row-major
  Input<T> k;  // [len_k][d]
  Input<T> v;  // [len_k][dv]
  // The output, [len_q][dv]: values of T, or straight into the caller's
  // doubles (each the double of the T result) when out_wide is set.
  T* out = nullptr;
  double* out_wide = nullptr;
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
  // ALiBi: -alibi·|i + alibi_diagonal - j| joins the bias (0: none): the
  // distance of the positions (q_offset + i) and (k_offset + j).
  double alibi = 0.0;
  int64_t alibi_diagonal = 0;
  // Attention sink: a logit in every row's softmax denominator, no value.
  bool has_sink = false;
  double sink = 0.0;
};

struct FullyMaskedRow {
  int64_t batch, head, query;
};

// What a run found besides the outputs.
struct RunReport {
  // Rows with every key masked, in (task, query) order.
  std::vector<FullyMaskedRow> fully_masked;
  // Whether every output value came out finite (checked as each row is
  // written: the caller need not read the outputs again to know).
  bool output_finite = true;
};

// Elements of one head's keys as the kernels pack them: len_k rounded up to
// whole panels of 8 to 48 keys (the SIMD width decides), times d. A head of
// a few very wide keys is packed at several times its size.
template <class T>
int64_t packed_key_elements(int64_t len_k, int64_t d);

// Runs every task. Tasks with the same k and v inputs (query heads of one
// grouped-query group) share one packed copy of them. Rows with every key
// masked are listed in the report and filled as rules.fully_masked says
// (kError is reported the same way; the caller raises it). `progress`,
// when set, is called from one thread with (blocks done, blocks).
template <class T>
RunReport run_heads(std::vector<HeadTask<T>>& tasks, const ScoreRules& rules, int threads,
                    const ProgressFn& progress = {});

}  // namespace attn::kernel
