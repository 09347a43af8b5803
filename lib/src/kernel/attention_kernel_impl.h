// The attention kernels. Work is split into tasks of one (batch, head) and
// one block of queries; each task packs its queries, computes score tiles
// with a register-blocked micro-kernel against keys packed transposed, and
// accumulates weights·values with a second micro-kernel, so both products
// run from registers at close to the FMA rate while the exponentials, the
// masks and the running maxima are done in between on a tile that stays in
// the L1/L2 caches.
//
// Not a normal header: attention_kernel_<isa>.cc includes it inside its own
// namespace, after kernel/simd.h, once per instruction set. Everything here
// but the table kKernels at the end has internal linkage, so no function
// compiled for one instruction set can stand in for another's.
#ifndef ATTN_KERNEL_ISA_REGION
#error "kernel/attention_kernel_impl.h is included by kernel/attention_kernel_<isa>.cc only"
#endif

// all_finite, which the kernels check their output rows with, and the
// overflow guard's passes over the inputs of the table below.
#include "kernel/reductions_impl.h"

namespace {

// Register tiles: S += Q·Kᵀ on kSRows queries x kSCols vectors of keys,
// O += P·V on kPRows queries x up to kPCols vectors of value columns. With
// AVX-512 there are 32 vector registers, otherwise 16.
// A key tile is kTilePanels panels of kSCols vectors. With AVX2, 32 (512
// keys in f32, 256 in f64; a score tile of 96 rows is 192 KiB, in L2) ran
// 4.5% faster than 8 in f32 and 3% in f64 (n = 8192, one thread), 16 in
// between, 64 no better: the online softmax's per-tile work (rescaling
// the accumulators, the row sums) is paid once per tile. With AVX-512
// (a Zen 4), 16 panels (768 keys in f32, 384 in f64; 288 KiB of scores
// for 96 rows) and 32 kept the weights 3% faster than 8 at n = 2048 (f32
// and f64, one thread) and matched it elsewhere within the noise (1–2%);
// register tiles of 12x2 and 6x4 vectors for the scores, and 6 rows for
// the values, measured the same as these.
// kTileMaxima: whether the score tiles also keep each row's maximum (see
// stream()). With AVX2 that measured 1.8–3.6% slower (on a Zen 4 with
// ATTN_KERNEL=avx2, n = 8192, f32, one thread, medians of 5 and 7
// alternating runs), so only AVX-512 does it.
#if defined(ATTN_SIMD_AVX512)
constexpr int kSRows = 8, kSCols = 3;
constexpr int kPRows = 4, kPCols = 4;
constexpr int kTilePanels = 16;
constexpr bool kTileMaxima = true;
#else
constexpr int kSRows = 6, kSCols = 2;
constexpr int kPRows = 6, kPCols = 2;
constexpr int kTilePanels = 32;
constexpr bool kTileMaxima = false;
#endif
// Queries per task: multiples of kSRows and kPRows. Long key ranges take
// the larger blocks: each block streams all of K and V once, so doubling
// the block halves that traffic (f64, n = 8192, one thread: +8%). Short
// ones keep the smaller blocks, which balance better across threads.
constexpr int64_t kBlockQ = 48;
constexpr int64_t kBlockQLong = 96;
constexpr int64_t kLongKeys = 4096;  // len_k from which kBlockQLong is used

template <class T>
constexpr int kW = Simd<T>::W;
template <class T>
constexpr int kPanel = kSCols* kW<T>;  // keys per packed panel
template <class T>
constexpr int64_t kBlockK = kTilePanels* kPanel<T>;  // keys per tile

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

// Rows of a block's scratch: the block's queries rounded up to whole
// register tiles of both products, never the block size itself. A block
// holds the queries' full width, so a short, wide input (X of 1 x 3,000,000)
// would otherwise reserve kBlockQ rows of it: 48 x 3,000,000 values for one
// query.
constexpr int64_t kRowPad = std::lcm(kSRows, kPRows);
static_assert(kBlockQ % kRowPad == 0 && kBlockQLong % kRowPad == 0,
              "blocks are whole register tiles");

// S[r][0..kPanel) = q_r · k_j for the kSRows rows of q (ld d) and one panel
// of keys packed as [d][kPanel].
// The tile loops are unrolled so the accumulators live in registers.
#define ATTN_UNROLL _Pragma("GCC unroll 16")

// C < kSCols: the first or last vectors of a panel, where a row group's
// keys start or end inside it (the same sums, so the same bits).
// With `mx`, each row's scores also raise its lanes of running maxima
// mx[r·W..r·W + W) while they are still in registers.
template <class T, int C = kSCols>
[[gnu::always_inline]] inline void s_tile(const T* q, int64_t d, const T* kp, T* s, int64_t lds,
                                          T* mx = nullptr) {
  Vec<T> acc[kSRows][C];
  ATTN_UNROLL for (int r = 0; r < kSRows; ++r) {
    ATTN_UNROLL for (int c = 0; c < C; ++c) acc[r][c] = splat<T>(0);
  }
  for (int64_t k = 0; k < d; ++k) {
    Vec<T> kv[C];
    ATTN_UNROLL for (int c = 0; c < C; ++c) {
      kv[c] = in_register(load(kp + k * kPanel<T> + c * kW<T>));
    }
    ATTN_UNROLL for (int r = 0; r < kSRows; ++r) {
      const Vec<T> b = splat(q[r * d + k]);
      ATTN_UNROLL for (int c = 0; c < C; ++c) acc[r][c] = fma(b, kv[c], acc[r][c]);
    }
  }
  ATTN_UNROLL for (int r = 0; r < kSRows; ++r) {
    ATTN_UNROLL for (int c = 0; c < C; ++c) store(s + r * lds + c * kW<T>, acc[r][c]);
  }
  if (mx) {
    ATTN_UNROLL for (int r = 0; r < kSRows; ++r) {
      Vec<T> m = load(mx + r * kW<T>);
      ATTN_UNROLL for (int c = 0; c < C; ++c) m = vmax(m, acc[r][c]);
      store(mx + r * kW<T>, m);
    }
  }
}

// O[r][0..CV·W) += Σ_j P[r][j] · V[j][0..CV·W) for kPRows rows.
template <class T, int CV>
[[gnu::always_inline]] inline void pv_tile(const T* p, int64_t ldp, int64_t nk, const T* v,
                                           int64_t ldv, T* o, int64_t ldo) {
  Vec<T> acc[kPRows][CV];
  ATTN_UNROLL for (int r = 0; r < kPRows; ++r) {
    ATTN_UNROLL for (int c = 0; c < CV; ++c) acc[r][c] = splat<T>(0);
  }
  for (int64_t j = 0; j < nk; ++j) {
    Vec<T> vv[CV];
    ATTN_UNROLL for (int c = 0; c < CV; ++c) vv[c] = in_register(load(v + j * ldv + c * kW<T>));
    ATTN_UNROLL for (int r = 0; r < kPRows; ++r) {
      const Vec<T> b = splat(p[r * ldp + j]);
      ATTN_UNROLL for (int c = 0; c < CV; ++c) acc[r][c] = fma(b, vv[c], acc[r][c]);
    }
  }
  ATTN_UNROLL for (int r = 0; r < kPRows; ++r) {
    ATTN_UNROLL for (int c = 0; c < CV; ++c) {
      T* dst = o + r * ldo + c * kW<T>;
      store(dst, load(dst) + acc[r][c]);
    }
  }
}

// Values per packed panel: the width of the value product's register tile.
template <class T>
constexpr int kVPanel = kPCols* kW<T>;
static_assert(kPCols <= 4, "pv_block's cases cover remainders of up to 3 vectors");

// A head's keys packed as panels [d][kPanel] (zero beyond len_k), and its
// values as panels [len_k][kVPanel] of kVPanel columns each (zero beyond
// dv): the value product's tile reads one panel from start to end, not a
// slice of every row of V.
template <class T>
struct Packed {
  Values<T> k;                 // [panels][d][kPanel]
  Values<T> v;                 // [dvp / kVPanel, rounded up][len_k][kVPanel]
  int64_t dvp = 0;             // dv rounded up to whole vectors
  std::vector<double> v_mean;  // mean of the value rows (fully_masked uniform)
};

// dst[0..n) = src[0..n) rounded to T: a copy when the input is of T.
template <class T, class S>
void convert(const S* src, int64_t n, T* dst) {
  if constexpr (std::is_same_v<S, T>) {
    std::memcpy(dst, src, sizeof(T) * static_cast<size_t>(n));
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(src[i]);
  }
}

// Every element is written once: the keys and values, and zeros only in
// the padding (filling the whole of both first was 1% of a run). Keys and
// values are packed separately, so one head's two halves can go to two
// threads.
template <class T>
void pack_keys(const HeadTask<T>& t, Packed<T>& pk) {
  const int64_t panels = round_up(t.len_k, kPanel<T>) / kPanel<T>;
  pk.k.resize(static_cast<size_t>(panels * t.d * kPanel<T>));
  t.k.visit([&](const auto* k) {
    for (int64_t j = 0; j < panels * kPanel<T>; ++j) {
      T* dst = pk.k.data() + (j / kPanel<T>)*t.d * kPanel<T> + j % kPanel<T>;
      if (j >= t.len_k) {
        for (int64_t c = 0; c < t.d; ++c) dst[c * kPanel<T>] = T(0);
        continue;
      }
      const auto* src = k + j * t.d;
      for (int64_t c = 0; c < t.d; ++c) dst[c * kPanel<T>] = static_cast<T>(src[c]);
    }
  });
}

template <class T>
void pack_values(const HeadTask<T>& t, const ScoreRules& rules, Packed<T>& pk) {
  pk.dvp = round_up(t.dv, kW<T>);
  const int64_t vpanels = round_up(t.dv, kVPanel<T>) / kVPanel<T>;
  pk.v.resize(static_cast<size_t>(vpanels * t.len_k * kVPanel<T>));
  t.v.visit([&](const auto* v) {
    for (int64_t c0 = 0, vp = 0; c0 < t.dv; c0 += kVPanel<T>, ++vp) {
      const int64_t w = std::min<int64_t>(kVPanel<T>, t.dv - c0);
      T* panel = pk.v.data() + vp * t.len_k * kVPanel<T>;
      for (int64_t j = 0; j < t.len_k; ++j) {
        T* row = panel + j * kVPanel<T>;
        convert(v + j * t.dv + c0, w, row);
        std::fill(row + w, row + kVPanel<T>, T(0));
      }
    }
    if (rules.fully_masked != FullyMasked::kUniform) return;
    pk.v_mean.assign(static_cast<size_t>(t.dv), 0.0);
    for (int64_t j = 0; j < t.len_k; ++j) {
      for (int64_t c = 0; c < t.dv; ++c) {
        pk.v_mean[static_cast<size_t>(c)] += static_cast<T>(v[j * t.dv + c]);
      }
    }
    for (double& x : pk.v_mean) x /= static_cast<double>(t.len_k);
  });
}

// The keys [lo, hi) of a tile one register group of query rows visits
// (kSRows rows for the scores, kPRows for the values), relative to the
// tile's first key. Outside, every row of the group has its keys masked
// with an infinite fill: their weights are exact zeros, which the online
// softmax and the value product may skip without changing a bit.
struct KeyRange {
  int64_t lo, hi;
};

// O[rows][0..dvp) += P[rows][0..nk) · V[jb..jb + nk)[0..dvp), rows a
// multiple of kPRows, V from the packed panels; each row group only over
// its keys range[r / kSRows] (which holds whole groups of kPRows). Panels
// outer, rows inner: a panel's slice (32 KB in f32) stays in L1/L2 while
// every row group reads it, and the P tile, which outgrows L1 with the
// large blocks, is what comes from L2 (+1–2% over the other order, f32 and
// f64).
template <class T>
void pv_block(const T* p, int64_t ldp, int64_t rows, const KeyRange* range, const Packed<T>& pk,
              int64_t len_k, int64_t jb, T* o, int64_t ldo) {
  static_assert(kSRows % kPRows == 0, "a score row group holds whole value row groups");
  const int64_t dvp = pk.dvp;
  for (int64_t c0 = 0, vp = 0; c0 < dvp; c0 += kVPanel<T>, ++vp) {
    const T* v = pk.v.data() + (vp * len_k + jb) * kVPanel<T>;
    for (int64_t r0 = 0; r0 < rows; r0 += kPRows) {
      const KeyRange kr = range[r0 / kSRows];
      const int64_t nk = kr.hi - kr.lo;
      if (nk <= 0) continue;
      const T* pr = p + r0 * ldp + kr.lo;
      const T* vr = v + kr.lo * kVPanel<T>;
      T* orow = o + r0 * ldo + c0;
      // A whole panel, or the last one's 1 to kPCols - 1 vectors.
      const int64_t cv = std::min<int64_t>(kVPanel<T>, dvp - c0) / kW<T>;
      if (cv == kPCols) {
        pv_tile<T, kPCols>(pr, ldp, nk, vr, kVPanel<T>, orow, ldo);
      } else if (cv == 1) {
        pv_tile<T, 1>(pr, ldp, nk, vr, kVPanel<T>, orow, ldo);
      } else if (cv == 2) {
        pv_tile<T, 2>(pr, ldp, nk, vr, kVPanel<T>, orow, ldo);
      } else {
        pv_tile<T, 3>(pr, ldp, nk, vr, kVPanel<T>, orow, ldo);
      }
    }
  }
}

// Per-thread scratch.
template <class T>
struct Scratch {
  std::vector<T> q, s, o, drop;
  std::vector<T> m, l;
  std::vector<T> weights, scores;  // the block's rows of the kept maps, until each is done
  std::vector<T> tile_m;           // [row][tile]: the running maximum after each key tile
  std::vector<T> mx;               // [row][W]: the tile's maxima by lane, from the score tiles
  std::vector<KeyRange> range;     // [row group]: the keys of the tile in use
  std::vector<T> row;              // an output row on its way to the caller's doubles
};

// One block of queries: rows [i0, i0 + rows) of task t.
template <class T>
class Block {
 public:
  // `cap` is the run's block size (kBlockQ or kBlockQLong).
  // `mult` is the head's score multiplier (per head with scale "norm").
  // `alibi` is the head's alibi_table, or null without ALiBi.
  Block(const HeadTask<T>& t, const Packed<T>& pk, const ScoreRules& rules, Scratch<T>& sc,
        int64_t i0, int64_t cap, double mult, const T* alibi)
      : t_(t),
        pk_(pk),
        rules_(rules),
        sc_(sc),
        i0_(i0),
        rows_(std::min(cap, t.len_q - i0)),
        ldo_(pk.dvp),
        fill_(static_cast<T>(rules.mask_fill)),
        alibi_(alibi) {
    const int64_t d = t.d;
    const int64_t pad = round_up(rows_, kRowPad);
    sc.q.resize(static_cast<size_t>(pad * d));
    t.q.visit([&](const auto* q) { convert(q + i0 * d, rows_ * d, sc.q.data()); });
    std::fill(sc.q.begin() + rows_ * d, sc.q.end(), T(0));
    // The score multiplier goes into the packed queries, (q·m)·k instead of
    // (q·k)·m: one multiply per query element instead of one per score.
    if (const T m = static_cast<T>(mult); m != T(1)) {
      for (int64_t i = 0; i < rows_ * d; ++i) sc.q[static_cast<size_t>(i)] *= m;
    }
    sc.s.resize(static_cast<size_t>(pad * kBlockK<T>));
    sc.o.assign(static_cast<size_t>(pad * pk.dvp), T(0));
    sc.m.assign(static_cast<size_t>(pad), -std::numeric_limits<T>::infinity());
    sc.l.assign(static_cast<size_t>(pad), T(0));
    if (rules.dropout > 0) sc.drop.resize(static_cast<size_t>(pad * kBlockK<T>));
    const size_t cells = static_cast<size_t>(rows_ * t.len_k);
    if (t.weights && sc.weights.size() < cells) sc.weights.resize(cells);
    if (t.scores && sc.scores.size() < cells) sc.scores.resize(cells);
    tiles_ = (t.len_k + kBlockK<T> - 1) / kBlockK<T>;
    if (t.weights) sc.tile_m.resize(static_cast<size_t>(rows_ * tiles_));
  }

  // The kernel: online softmax over key tiles. With maps requested, each
  // tile's exponentials are also written to the weights with the running
  // maximum they were taken against (and the scores and mask flags kept);
  // once the row's last tile is done one multiply per weight brings them
  // to the final maximum and sum, the ones the output is divided by. The
  // output is computed the same way whether maps are kept or not, to the
  // bit.
  // Kept a function of its own: everything here has internal linkage, and
  // GCC would inline it into run_heads (the only caller), one function of
  // 6000 instructions that ran up to 15% slower (f32, n = 8192, one thread).
  [[gnu::noinline]] void stream(std::vector<FullyMaskedRow>& fully) {
    const int64_t n = t_.len_k;
    // With an infinite fill, keys past every row's limit (valid_lens,
    // causal) contribute nothing: the tiles stop there. The window's left
    // edge likewise lets them start late, at the tile holding the first
    // key any row of the block may see. Tiles start at multiples of kBlockK
    // whatever is asked, so kept maps (which need every tile) see the same
    // tiles and the output the same bits.
    int64_t begin = 0, end = n;
    const bool maps = t_.weights || t_.scores || t_.masked;
    const bool limits = t_.masks && std::isinf(rules_.mask_fill) && !maps;
    if (limits) {
      end = 0;
      begin = n;
      for (int64_t r = 0; r < rows_; ++r) {
        end = std::max(end, t_.masks->key_limit(i0_ + r));
        begin = std::min(begin, t_.masks->key_start(i0_ + r));
      }
      begin = begin / kBlockK<T> * kBlockK<T>;
    }
    // Within a tile each register group of rows visits only the keys one
    // of its rows may see (a window's band, the causal diagonal): a block
    // then costs about a group's height more keys per row, not its own.
    const bool ranged = limits && rules_.dropout == 0;
    const int64_t ld = kBlockK<T>;
    // Where the rules change no score after the product (no mask, bias,
    // ALiBi or soft cap) and in a tile of whole panels (no padding keys),
    // a row's maximum over the tile is the largest of the score tiles'
    // accumulators. They keep it by lane on their way out of the
    // registers, and the row needs no pass of its own for it. The same
    // value (a maximum is exact), so the same bits. With AVX-512 on a Zen
    // 4 (n = 8192, f32, one thread, rdtsc around each phase) the rows'
    // softmax took 13% less time and the score tiles 0.4% more: 1.2% of
    // the kernel's time.
    const bool tile_maxima = kTileMaxima && scores_as_computed();
    if (tile_maxima) sc_.mx.resize(static_cast<size_t>(round_up(rows_, kRowPad) * kW<T>));
    for (int64_t jb = begin; jb < end; jb += kBlockK<T>) {
      const int64_t nk = std::min(kBlockK<T>, end - jb);
      key_ranges(jb, nk, ranged);
      T* mx = tile_maxima && nk % kPanel<T> == 0 ? sc_.mx.data() : nullptr;
      if (mx) std::fill(sc_.mx.begin(), sc_.mx.end(), -std::numeric_limits<T>::infinity());
      scores_tile(jb, nk, sc_.s.data(), ld, mx);
      for (int64_t r = 0; r < rows_; ++r) {
        const KeyRange kr = sc_.range[static_cast<size_t>(r / kSRows)];
        if (kr.hi <= kr.lo) continue;  // every key of the tile masked for the group
        const int64_t i = i0_ + r, j0 = jb + kr.lo, len = kr.hi - kr.lo;
        T* s = sc_.s.data() + r * ld + kr.lo;
        T* scores = scores_row(r);
        T* weights = weights_row_of(r);
        rules_row(s, i, j0, len, scores ? scores + j0 : nullptr,
                  t_.masked ? t_.masked + i * n + j0 : nullptr);
        online_row(r, s, len, mx ? mx + r * kW<T> : nullptr);
        if (weights) {
          copy_row(s, weights + j0, len);
          sc_.tile_m[static_cast<size_t>(r * tiles_ + jb / kBlockK<T>)] = sc_.m[r];
        }
      }
      const T* p = sc_.s.data();
      if (rules_.dropout > 0) p = dropped(sc_.s.data(), ld, jb, nk);
      pv_block(p, ld, round_up(rows_, kPRows), sc_.range.data(), pk_, n, jb, sc_.o.data(), ldo_);
    }
    if (t_.out_wide) sc_.row.resize(static_cast<size_t>(t_.dv));
    for (int64_t r = 0; r < rows_; ++r) {
      if (t_.weights) weights_row(r);
      if (t_.scores) put_row(scores_row(r), t_.scores + (i0_ + r) * n, n, T(1));
      const int64_t at = (i0_ + r) * t_.dv;
      T* out = t_.out_wide ? sc_.row.data() : t_.out + at;
      output_row(r, out, fully);
      finite_ &= all_finite(out, t_.dv);
      // The output is read long after (written to a file): streamed like
      // the maps.
      if (t_.out_wide) put_row(out, t_.out_wide + at, t_.dv, T(1));
    }
#if defined(__x86_64__)
    _mm_sfence();  // put_row's streaming stores
#endif
  }

  // Whether every output value stream() wrote is finite (not inf, not NaN).
  bool output_finite() const { return finite_; }

 private:
  // Row r of the block's output: the accumulated values over the softmax's
  // sum, a fully masked row as the rules say.
  void output_row(int64_t r, T* out, std::vector<FullyMaskedRow>& fully) {
    if (sc_.m[r] == -std::numeric_limits<T>::infinity()) {
      if (t_.has_sink) {  // the sink takes the whole row
        std::fill(out, out + t_.dv, T(0));
        return;
      }
      fully.push_back(FullyMaskedRow{t_.batch, t_.head, i0_ + r});
      fill_fully_masked_output(out, i0_ + r);
      return;
    }
    const T* acc = sc_.o.data() + r * ldo_;
    const Final f = final_of(r);
    const T inv = f.c / f.l;
    const T om = static_cast<T>(rules_.out_mult);
    for (int64_t c = 0; c < t_.dv; ++c) out[c] = acc[c] * inv * om;
  }

  // The keys of tile [jb, jb + nk) each register group of rows visits
  // (sc_.range, relative to jb): all of them, or when `ranged` the span
  // from the first key any row of the group may see to the last, its
  // start rounded down to a panel. Empty for a group that sees none.
  void key_ranges(int64_t jb, int64_t nk, bool ranged) {
    const size_t groups = static_cast<size_t>(round_up(rows_, kSRows) / kSRows);
    sc_.range.assign(groups, KeyRange{0, nk});
    if (!ranged) return;
    for (size_t g = 0; g < groups; ++g) {
      int64_t lo = nk, hi = 0;
      const int64_t r0 = static_cast<int64_t>(g) * kSRows;
      for (int64_t r = r0; r < std::min(rows_, r0 + kSRows); ++r) {
        const int64_t a = std::clamp<int64_t>(t_.masks->key_start(i0_ + r) - jb, 0, nk);
        const int64_t z = std::clamp<int64_t>(t_.masks->key_limit(i0_ + r) - jb, 0, nk);
        if (a >= z) continue;
        lo = std::min(lo, a);
        hi = std::max(hi, z);
      }
      sc_.range[g] = lo < hi ? KeyRange{lo / kW<T> * kW<T>, hi} : KeyRange{0, 0};
    }
  }

  // S[r][j] for the rows of the block and the keys j of tile [jb, jb + nk)
  // in their group's range (whole vectors). Where a range starts or ends
  // inside a panel only its vectors in the range are computed: under a
  // window of 1024 keys, whole panels (48 keys with AVX-512) cost a row
  // about 3% more score products than it needs.
  void scores_tile(int64_t jb, int64_t nk, T* s, int64_t lds, T* mx) {
    const int64_t d = t_.d;
    const int64_t panels = round_up(nk, kPanel<T>) / kPanel<T>;
    const int64_t qrows = round_up(rows_, kSRows);
    for (int64_t p = 0; p < panels; ++p) {
      const T* kp = pk_.k.data() + (jb / kPanel<T> + p) * d * kPanel<T>;
      const int64_t k0 = p * kPanel<T>;
      for (int64_t r0 = 0; r0 < qrows; r0 += kSRows) {
        const KeyRange kr = sc_.range[static_cast<size_t>(r0 / kSRows)];
        if (k0 >= kr.hi || k0 + kPanel<T> <= kr.lo) continue;
        const T* q = sc_.q.data() + r0 * d;
        T* out = s + r0 * lds + k0;
        if (kr.lo <= k0 && k0 + kPanel<T> <= kr.hi) {
          s_tile(q, d, kp, out, lds, mx ? mx + r0 * kW<T> : nullptr);
          continue;
        }
        const int64_t v0 = std::max<int64_t>(0, kr.lo - k0) / kW<T>;
        const int64_t v1 = std::min<int64_t>(kSCols, (kr.hi - k0 + kW<T> - 1) / kW<T>);
        partial_s_tile(q, d, kp + v0 * kW<T>, out + v0 * kW<T>, lds, v1 - v0);
      }
    }
  }

  // s_tile on 1 to kSCols vectors of a panel.
  static void partial_s_tile(const T* q, int64_t d, const T* kp, T* s, int64_t lds, int64_t n) {
    static_assert(kSCols <= 3, "partial_s_tile's cases cover up to 3 vectors");
    if (n == 1) {
      s_tile<T, 1>(q, d, kp, s, lds);
    } else if (n == 2) {
      s_tile<T, std::min(2, kSCols)>(q, d, kp, s, lds);
    } else {
      s_tile<T, std::min(3, kSCols)>(q, d, kp, s, lds);
    }
  }

  // Whether rules_row leaves every score of a tile as the product made it
  // (the scale and temperature are in the packed queries): no soft cap,
  // bias, ALiBi or mask. Keep it in step with rules_row.
  bool scores_as_computed() const { return rules_.softcap == 0 && !t_.masks && !alibi_; }

  // The score rules of docs/spec.md on one row of a tile, after the scale
  // and temperature the packed queries carry: soft cap, bias, ALiBi, then
  // masked cells set to mask_fill. Columns past nk are tile padding and
  // never part of the softmax.
  void rules_row(T* s, int64_t i, int64_t jb, int64_t nk, T* scores_out, uint8_t* masked_out) {
    const int64_t npad = round_up(nk, kW<T>);
    if (rules_.softcap > 0) {
      const T cap = static_cast<T>(rules_.softcap), two_inv = T(2) / cap;
      int64_t j = 0;
      for (; j + 4 * kW<T> <= npad; j += 4 * kW<T>) {
        Vec<T> x[4];
        ATTN_UNROLL for (int k = 0; k < 4; ++k) x[k] = load(s + j + k * kW<T>);
        vsoftcap_n<T, 4>(x, cap, two_inv);
        ATTN_UNROLL for (int k = 0; k < 4; ++k) store(s + j + k * kW<T>, x[k]);
      }
      for (; j < npad; j += kW<T>) {
        Vec<T> x[1] = {load(s + j)};
        vsoftcap_n<T, 1>(x, cap, two_inv);
        store(s + j, x[0]);
      }
    }
    const detail::MaskView* mv = t_.masks;
    if (mv && mv->has_bias()) {
      const double* b = mv->bias_row(i) + jb;
      for (int64_t j = 0; j < nk; ++j) s[j] += static_cast<T>(b[j]);
    }
    if (alibi_) {
      // The head's ALiBi biases by distance j - i (alibi_table), read from
      // where this tile's first key sits relative to row i.
      const T* b = alibi_ + (jb - i) + (t_.len_q - 1);
      int64_t j = 0;
      for (; j + kW<T> <= nk; j += kW<T>) store(s + j, load(s + j) + load(b + j));
      for (; j < nk; ++j) s[j] += b[j];
    }
    if (scores_out) std::memcpy(scores_out, s, sizeof(T) * static_cast<size_t>(nk));
    if (mv && !mv->mask_row(i) && !mv->key_padding()) {
      // Limits only (causal, valid_lens, a window): keys [a, z) of the tile
      // take part, the rest is filled; no test per cell.
      const int64_t a = std::clamp<int64_t>(mv->key_start(i) - jb, 0, nk);
      const int64_t z = std::clamp<int64_t>(mv->key_limit(i) - jb, a, nk);
      std::fill(s, s + a, fill_);
      std::fill(s + z, s + nk, fill_);
      if (masked_out) {
        std::memset(masked_out, 1, static_cast<size_t>(a));
        for (int64_t j = a; j < z; ++j) masked_out[j] = s[j] == -std::numeric_limits<T>::infinity();
        std::memset(masked_out + z, 1, static_cast<size_t>(nk - z));
      }
    } else if (mv) {
      const int64_t lim = mv->key_limit(i);
      const int64_t start = mv->key_start(i);
      const uint8_t* mrow = mv->mask_row(i);
      const uint8_t* kpm = mv->key_padding();
      for (int64_t j = 0; j < nk; ++j) {
        const int64_t jj = jb + j;
        const bool masked = jj >= lim || jj < start || (mrow && mrow[jj]) || (kpm && kpm[jj]);
        if (masked) s[j] = fill_;
        if (masked_out) masked_out[j] = masked || s[j] == -std::numeric_limits<T>::infinity();
      }
    } else if (masked_out) {
      for (int64_t j = 0; j < nk; ++j) masked_out[j] = s[j] == -std::numeric_limits<T>::infinity();
    }
    for (int64_t j = nk; j < npad; ++j) s[j] = -std::numeric_limits<T>::infinity();
  }

  // Online softmax of row r on one tile: new running maximum, the tile's
  // exponentials (in place), the running sum and the accumulator rescaled.
  // `mx`: the row's maxima by lane from the score tiles, or null to take
  // the maximum from the row.
  void online_row(int64_t r, T* s, int64_t nk, const T* mx) {
    const int64_t npad = round_up(nk, kW<T>);
    const T tile_max = mx ? hmax(load(mx)) : max_of(s, npad);
    const T old = sc_.m[r];
    const T m = std::max(old, tile_max);
    if (m == -std::numeric_limits<T>::infinity()) {
      std::fill(s, s + npad, T(0));  // nothing unmasked yet
      return;
    }
    const Vec<T> sum = exp_shifted(s, npad, splat(m));
    if (old != m) {
      const T c = old == -std::numeric_limits<T>::infinity() ? T(0) : std::exp(old - m);
      sc_.l[r] *= c;
      T* o = sc_.o.data() + r * ldo_;
      const Vec<T> vc = splat(c);
      for (int64_t k = 0; k < pk_.dvp; k += kW<T>) store(o + k, load(o + k) * vc);
      sc_.m[r] = m;
    }
    sc_.l[r] += hsum(sum);
  }

  // The largest of s[0..n), n a multiple of the vector width. Four
  // running maxima: one was a chain of dependent instructions, 2% of the
  // time of a long run.
  static T max_of(const T* s, int64_t n) {
    const Vec<T> lo = splat(-std::numeric_limits<T>::infinity());
    Vec<T> m0 = lo, m1 = lo, m2 = lo, m3 = lo;
    int64_t j = 0;
    for (; j + 4 * kW<T> <= n; j += 4 * kW<T>) {
      m0 = vmax(m0, load(s + j));
      m1 = vmax(m1, load(s + j + kW<T>));
      m2 = vmax(m2, load(s + j + 2 * kW<T>));
      m3 = vmax(m3, load(s + j + 3 * kW<T>));
    }
    for (; j < n; j += kW<T>) m0 = vmax(m0, load(s + j));
    return hmax(vmax(vmax(m0, m1), vmax(m2, m3)));
  }

  // p[j] = exp(p[j] - m) for j < n (a multiple of the vector width), and
  // the vector of partial sums: the exponentials of both softmax paths.
  // Four vectors at a time in lockstep (vexp_softmax_n): +0.7% in f32 and +2% in
  // f64 over one at a time (n = 8192, one thread), the sum still taken
  // vector by vector in order, so the bits are the same.
  static Vec<T> exp_shifted(T* p, int64_t n, Vec<T> m) {
    Vec<T> sum = splat<T>(0);
    int64_t j = 0;
    for (; j + 4 * kW<T> <= n; j += 4 * kW<T>) {
      Vec<T> e[4];
      ATTN_UNROLL for (int k = 0; k < 4; ++k) e[k] = load(p + j + k * kW<T>) - m;
      vexp_softmax_n<T, 4>(e);
      ATTN_UNROLL for (int k = 0; k < 4; ++k) {
        store(p + j + k * kW<T>, e[k]);
        sum += e[k];
      }
    }
    for (; j < n; j += kW<T>) {
      const Vec<T> e = vexp_softmax(load(p + j) - m);
      store(p + j, e);
      sum += e;
    }
    return sum;
  }

  // Where row r of the block keeps its weights and scores until the row is
  // done, or null when they are not kept.
  T* weights_row_of(int64_t r) { return t_.weights ? sc_.weights.data() + r * t_.len_k : nullptr; }
  T* scores_row(int64_t r) { return t_.scores ? sc_.scores.data() + r * t_.len_k : nullptr; }

  // dst[0..n) = src[0..n) in vectors: GCC turns the memcpy of a row of a
  // tile (a few hundred bytes) into rep movs, which starts slowly.
  static void copy_row(const T* src, T* dst, int64_t n) {
    int64_t j = 0;
    for (; j + kW<T> <= n; j += kW<T>) store(dst + j, load(src + j));
    for (; j < n; ++j) dst[j] = src[j];
  }

  // Row r's final maximum `top` and sum `l` once every tile is done, and
  // the factor `c` the accumulated values (taken against the running
  // maximum m) need: an attention sink joins the denominator, so with one
  // everything is rescaled to max(m, sink). Only for rows with a key left.
  struct Final {
    T top, l, c;
  };
  Final final_of(int64_t r) const {
    const T m = sc_.m[r];
    if (!t_.has_sink) return {m, sc_.l[r], T(1)};
    const T sink = static_cast<T>(t_.sink), top = std::max(m, sink);
    const T c = std::exp(m - top);
    return {top, sc_.l[r] * c + std::exp(sink - top), c};
  }

  // Row r's kept exponentials to its weights: the tile taken against the
  // running maximum m_t is multiplied by exp(m_t - top) / l. A row with
  // every key masked is filled as rules.fully_masked says, and all zero
  // when a sink takes it.
  void weights_row(int64_t r) {
    const int64_t n = t_.len_k;
    double* dst = t_.weights + (i0_ + r) * n;
    if (sc_.m[r] == -std::numeric_limits<T>::infinity()) {
      T v = 0;
      if (!t_.has_sink && rules_.fully_masked == FullyMasked::kUniform) {
        v = T(1) / static_cast<T>(n);
      }
      if (!t_.has_sink && rules_.fully_masked == FullyMasked::kNan) {
        v = std::numeric_limits<T>::quiet_NaN();
      }
      std::fill(dst, dst + n, static_cast<double>(v));
      return;
    }
    const Final f = final_of(r);
    const T inv = T(1) / f.l;
    const T* w = weights_row_of(r);
    const T* tile_m = sc_.tile_m.data() + r * tiles_;
    for (int64_t t = 0; t < tiles_; ++t) {
      const T scale = std::exp(tile_m[t] - f.top) * inv;  // 0 for a tile with nothing seen yet
      const int64_t j0 = t * kBlockK<T>, j1 = std::min(n, j0 + kBlockK<T>);
      put_row(w + j0, dst + j0, j1 - j0, scale);
    }
  }

  // dst[j] = double(src[j] · scale), the product rounded to T. The maps are
  // written once and read long after (n = 2048 keeps 32 MB of weights), so
  // the stores go around the caches: no read of each line before it is
  // written, no eviction of the tiles in use. stream() fences them.
  static void put_row(const T* src, double* dst, int64_t n, T scale) {
    int64_t j = 0;
#if defined(__x86_64__)
    for (; j < n && (reinterpret_cast<uintptr_t>(dst + j) & 15) != 0; ++j) {
      dst[j] = static_cast<double>(src[j] * scale);
    }
    for (; j + 2 <= n; j += 2) {
      _mm_stream_pd(dst + j, _mm_set_pd(static_cast<double>(src[j + 1] * scale),
                                        static_cast<double>(src[j] * scale)));
    }
#endif
    for (; j < n; ++j) dst[j] = static_cast<double>(src[j] * scale);
  }

  // Inverted dropout on a tile of weights (kept for the value product only).
  const T* dropped(const T* p, int64_t ld, int64_t jb, int64_t nk) {
    const T scale = static_cast<T>(1.0 / (1.0 - rules_.dropout));
    T* out = sc_.drop.data();
    for (int64_t r = 0; r < round_up(rows_, kPRows); ++r) {
      const int64_t i = i0_ + r;
      const uint64_t base = static_cast<uint64_t>((t_.batch * t_.heads + t_.head) * t_.len_q + i) *
                            static_cast<uint64_t>(t_.len_k);
      for (int64_t j = 0; j < nk; ++j) {
        const bool keep =
            r < rows_ &&
            dropout_keep(rules_.seed, base + static_cast<uint64_t>(jb + j), rules_.dropout);
        out[r * ld + j] = keep ? p[r * ld + j] * scale : T(0);
      }
    }
    return out;
  }

  void fill_fully_masked_output(T* out, int64_t i) {
    switch (rules_.fully_masked) {
      case FullyMasked::kUniform: {
        const T om = static_cast<T>(rules_.out_mult);
        if (rules_.dropout == 0) {
          for (int64_t c = 0; c < t_.dv; ++c)
            out[c] = static_cast<T>(pk_.v_mean[static_cast<size_t>(c)]) * om;
          break;
        }
        // Equal weights 1/len_k, then dropout on them, as for any row.
        const T w = static_cast<T>(1.0 / (static_cast<double>(t_.len_k) * (1.0 - rules_.dropout)));
        const uint64_t base =
            static_cast<uint64_t>((t_.batch * t_.heads + t_.head) * t_.len_q + i) *
            static_cast<uint64_t>(t_.len_k);
        std::fill(out, out + t_.dv, T(0));
        t_.v.visit([&](const auto* v) {
          for (int64_t j = 0; j < t_.len_k; ++j) {
            if (!dropout_keep(rules_.seed, base + static_cast<uint64_t>(j), rules_.dropout)) {
              continue;
            }
            for (int64_t c = 0; c < t_.dv; ++c) out[c] += w * static_cast<T>(v[j * t_.dv + c]);
          }
        });
        for (int64_t c = 0; c < t_.dv; ++c) out[c] *= om;
        break;
      }
      case FullyMasked::kNan:
        std::fill(out, out + t_.dv, std::numeric_limits<T>::quiet_NaN());
        break;
      case FullyMasked::kZero:
      case FullyMasked::kError:
        std::fill(out, out + t_.dv, T(0));
        break;
    }
  }

  const HeadTask<T>& t_;
  const Packed<T>& pk_;
  const ScoreRules& rules_;
  Scratch<T>& sc_;
  int64_t i0_, rows_, ldo_;
  T fill_;
  const T* alibi_;
  int64_t tiles_ = 0;   // key tiles of a row
  bool finite_ = true;  // every output row written so far is finite
};

// ALiBi's bias -alibi·|i + diagonal - j| of a head by the distance j - i, from
// -(len_q - 1) (entry 0) to len_k - 1: computed in double, as the reference
// builds its bias matrix, and rounded to T once. Rows then add a slice of
// it, one load per vector of scores; the bits are those of the bias matrix.
template <class T>
std::vector<T> alibi_table(const HeadTask<T>& t) {
  std::vector<T> b(static_cast<size_t>(t.len_q + t.len_k - 1));
  for (int64_t e = 0; e < static_cast<int64_t>(b.size()); ++e) {
    const double dist = std::fabs(static_cast<double>(e - (t.len_q - 1) - t.alibi_diagonal));
    b[static_cast<size_t>(e)] = static_cast<T>(-t.alibi * dist);
  }
  return b;
}

// ‖S‖_F² of a block of rows of a head (raw scores), for scale "norm".
template <class T>
double frobenius_block(const HeadTask<T>& t, const Packed<T>& pk, Scratch<T>& sc, int64_t i0,
                       int64_t cap) {
  const int64_t rows = std::min(cap, t.len_q - i0);
  const int64_t pad = round_up(rows, kRowPad);
  sc.q.assign(static_cast<size_t>(pad * t.d), T(0));
  t.q.visit([&](const auto* q) { convert(q + i0 * t.d, rows * t.d, sc.q.data()); });
  sc.s.resize(static_cast<size_t>(pad * kPanel<T>));
  double sum = 0;
  const int64_t panels = round_up(t.len_k, kPanel<T>) / kPanel<T>;
  for (int64_t p = 0; p < panels; ++p) {
    for (int64_t r0 = 0; r0 < round_up(rows, kSRows); r0 += kSRows) {
      s_tile(sc.q.data() + r0 * t.d, t.d, pk.k.data() + p * t.d * kPanel<T>,
             sc.s.data() + r0 * kPanel<T>, kPanel<T>);
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < kPanel<T> && p * kPanel<T> + j < t.len_k; ++j) {
        const double x = static_cast<double>(sc.s[static_cast<size_t>(r * kPanel<T> + j)]);
        sum += x * x;
      }
    }
  }
  return sum;
}

template <class T>
int64_t packed_key_elements(int64_t len_k, int64_t d) {
  return round_up(len_k, kPanel<T>) * d;
}

// The most keys a query row of t visits: len_k, or with a window (an
// infinite fill, so the skipped keys weigh nothing) the widest row's range.
// A block visits its rows' ranges together, so under a narrow window a
// large block visits more keys no row needs (about one block's height per
// row): the large blocks are for long spans only.
template <class T>
int64_t key_span(const HeadTask<T>& t, const ScoreRules& rules) {
  if (!t.masks || !t.masks->windowed() || !std::isinf(rules.mask_fill)) return t.len_k;
  int64_t span = 0;
  for (int64_t i = 0; i < t.len_q; ++i) {
    span = std::max(span, t.masks->key_limit(i) - t.masks->key_start(i));
  }
  return span;
}

template <class T>
RunReport run_heads(std::vector<HeadTask<T>>& tasks, const ScoreRules& rules, int threads,
                    const ProgressFn& progress) {
  const int64_t H = static_cast<int64_t>(tasks.size());
  // One packed copy per distinct (K, V): grouped query heads read theirs once.
  std::vector<size_t> pack_of(static_cast<size_t>(H));
  std::vector<size_t> first_task;
  {
    std::map<std::pair<const void*, const void*>, size_t> seen;
    for (int64_t h = 0; h < H; ++h) {
      const HeadTask<T>& t = tasks[static_cast<size_t>(h)];
      auto [it, fresh] = seen.emplace(std::make_pair(t.k.id(), t.v.id()), first_task.size());
      if (fresh) first_task.push_back(static_cast<size_t>(h));
      pack_of[static_cast<size_t>(h)] = it->second;
    }
  }
  std::vector<Packed<T>> packed(first_task.size());
  std::vector<double> mult(static_cast<size_t>(H), rules.mult);
  parallel_for(2 * static_cast<int64_t>(first_task.size()), threads, [&](int64_t u, int) {
    const HeadTask<T>& t = tasks[first_task[static_cast<size_t>(u / 2)]];
    Packed<T>& pk = packed[static_cast<size_t>(u / 2)];
    if (u % 2 == 0) {
      pack_keys(t, pk);
    } else {
      pack_values(t, rules, pk);
    }
  });
  // Blocks of queries of every head, in (head, block) order. The block size
  // depends on the shapes only, never on the thread count, so the blocks
  // (and the order of the norm's partial sums) are the same for any thread
  // count. Large blocks need long keys, and enough of them to share out.
  int64_t max_span = 0, queries = 0;
  for (const HeadTask<T>& t : tasks) {
    max_span = std::max(max_span, key_span(t, rules));
    queries += t.len_q;
  }
  const int64_t cap = max_span >= kLongKeys && queries >= 16 * kBlockQLong ? kBlockQLong : kBlockQ;
  std::vector<std::pair<int64_t, int64_t>> blocks;
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t i0 = 0; i0 < tasks[static_cast<size_t>(h)].len_q; i0 += cap) {
      blocks.emplace_back(h, i0);
    }
  }
  const int nthreads = std::max(1, threads);
  std::vector<Scratch<T>> scratch(static_cast<size_t>(nthreads));
  if (rules.norm) {
    std::vector<double> partial(blocks.size(), 0.0);
    parallel_for(static_cast<int64_t>(blocks.size()), nthreads, [&](int64_t b, int id) {
      const auto [h, i0] = blocks[static_cast<size_t>(b)];
      partial[static_cast<size_t>(b)] =
          frobenius_block(tasks[static_cast<size_t>(h)], packed[pack_of[static_cast<size_t>(h)]],
                          scratch[static_cast<size_t>(id)], i0, cap);
    });
    std::vector<double> sums(static_cast<size_t>(H), 0.0);
    for (size_t b = 0; b < blocks.size(); ++b)
      sums[static_cast<size_t>(blocks[b].first)] += partial[b];
    for (int64_t h = 0; h < H; ++h) {
      mult[static_cast<size_t>(h)] =
          rules.mult / std::max(std::sqrt(sums[static_cast<size_t>(h)]), 1e-12);
    }
  }
  std::vector<std::vector<T>> alibi(static_cast<size_t>(H));
  for (int64_t h = 0; h < H; ++h) {  // len_q + len_k values a head: not worth a thread
    const HeadTask<T>& t = tasks[static_cast<size_t>(h)];
    if (t.alibi != 0.0) alibi[static_cast<size_t>(h)] = alibi_table(t);
  }
  std::vector<std::vector<FullyMaskedRow>> found(blocks.size());
  std::atomic<bool> finite{true};
  std::atomic<int64_t> done{0};
  int64_t reported = 0;  // written by thread 0 only, read after the join
  const int64_t total = static_cast<int64_t>(blocks.size());
  parallel_for(total, nthreads, [&](int64_t b, int id) {
    const auto [h, i0] = blocks[static_cast<size_t>(b)];
    const HeadTask<T>& t = tasks[static_cast<size_t>(h)];
    const std::vector<T>& bias = alibi[static_cast<size_t>(h)];
    Block<T> blk(t, packed[pack_of[static_cast<size_t>(h)]], rules,
                 scratch[static_cast<size_t>(id)], i0, cap, mult[static_cast<size_t>(h)],
                 bias.empty() ? nullptr : bias.data());
    blk.stream(found[static_cast<size_t>(b)]);
    if (!blk.output_finite()) finite = false;
    const int64_t now = ++done;
    if (progress && id == 0) {  // one reporting thread
      progress(now, total);
      reported = now;
    }
  });
  if (progress && reported != total) progress(total, total);
  RunReport report;
  for (auto& f : found) report.fully_masked.insert(report.fully_masked.end(), f.begin(), f.end());
  report.output_finite = finite;
  return report;
}

// y = f(x) through a vector function, the tail through one padded vector.
template <class T, Vec<T> (*F)(Vec<T>)>
void map_array(const T* x, T* y, int64_t n) {
  int64_t i = 0;
  for (; i + kW<T> <= n; i += kW<T>) store(y + i, F(load(x + i)));
  if (i == n) return;
  T tmp[kW<T>] = {};
  std::memcpy(tmp, x + i, sizeof(T) * static_cast<size_t>(n - i));
  store(tmp, F(load(tmp)));
  std::memcpy(y + i, tmp, sizeof(T) * static_cast<size_t>(n - i));
}

}  // namespace

const Kernels kKernels = {
    kIsa,
    kVectorBytes,
    &max_row_square,
    &largest_abs_finite,
    {&run_heads<float>, &packed_key_elements<float>, &map_array<float, vexp_softmax>,
     &map_array<float, vtanh>},
    {&run_heads<double>, &packed_key_elements<double>, &map_array<double, vexp_softmax>,
     &map_array<double, vtanh>},
};
