// The products with weight matrices (kernel/linear_kernel.h), in float32
// and float64, for one instruction set.
//
// Not a normal header: linear_kernel_<isa>.cc includes it inside its own
// namespace, after kernel/simd.h, once per instruction set; everything but
// the table kLinear has internal linkage (see kernel/isa_region.h).
//
// The product is cut into panels of Tile<T>::kPanel outputs. A task takes
// one panel (and, when the panels are too few to keep the threads busy,
// part of x's rows); for each block of kDepth inputs it packs the panel's
// cells into a buffer, input-major (pack), and runs the register tile over
// every group of Tile<T>::kRows rows of x against it (tile). The buffer
// (48 KiB with AVX-512 in float) stays in L2 for the whole block; the rows
// of x are read from L2 or L3 once per panel.
#ifndef ATTN_KERNEL_ISA_REGION
#error "kernel/linear_kernel_impl.h is included by kernel/linear_kernel_<isa>.cc only"
#endif

namespace {

// ggml's dequantization built for this instruction set: the same loops as
// the library's (io/ggml_blocks_impl.h), vectorized here; this file is
// compiled with -ffp-contract=off, so the floats are ggml's to the bit.
namespace ggml {
constexpr int64_t kQK = 32;
constexpr int64_t kQKK = 256;
#include "io/ggml_blocks_impl.h"
}  // namespace ggml

#if defined(ATTN_SIMD_AVX512) || defined(ATTN_SIMD_AVX2)
// The 32-cell blocks whose cells are an integer times the block's scale,
// with 256-bit vectors: the 32 integers, each converted to a float (exact)
// and multiplied by the scale once, as ggml's loops do: the same floats.
inline void scaled_cells(__m256i q, float d, float* out) {
  const __m256 scale = _mm256_set1_ps(d);
  const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
  const __m128i parts[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(out + 8 * i,
                     _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(parts[i])), scale));
  }
}

// The 16 bytes of nibbles of a Q4_0 or Q5_0 block: cells 0-15 the low
// nibbles, cells 16-31 the high ones.
inline __m256i nibbles(const unsigned char* qs) {
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i mask = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), mask), _mm_and_si128(q, mask));
}

// Byte i is 0xFF where bit i of the 32 bits at p is set.
inline __m256i bytes_of_bits(const unsigned char* p) {
  uint32_t bits;
  std::memcpy(&bits, p, 4);
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
  const __m256i others = _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe);
  return _mm256_cmpeq_epi8(_mm256_or_si256(spread, others), _mm256_set1_epi64x(-1));
}

void q8_0_cells(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / 32; ++i, x += 34, y += 32) {
    scaled_cells(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 2)), ggml::half_at(x), y);
  }
}

void q4_0_cells(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / 32; ++i, x += 18, y += 32) {
    scaled_cells(_mm256_sub_epi8(nibbles(x + 2), _mm256_set1_epi8(8)), ggml::half_at(x), y);
  }
}

void q5_0_cells(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / 32; ++i, x += 22, y += 32) {
    const __m256i fifth = _mm256_and_si256(bytes_of_bits(x + 2), _mm256_set1_epi8(0x10));
    scaled_cells(_mm256_sub_epi8(_mm256_or_si256(nibbles(x + 6), fifth), _mm256_set1_epi8(16)),
                 ggml::half_at(x), y);
  }
}
#endif

// n cells of a block type (whole blocks) as floats.
void dequantize(ElementType t, const unsigned char* blocks, float* out, int64_t n) {
  switch (t) {
#if defined(ATTN_SIMD_AVX512) || defined(ATTN_SIMD_AVX2)
    case ElementType::kQ4_0:
      return q4_0_cells(blocks, out, n);
    case ElementType::kQ5_0:
      return q5_0_cells(blocks, out, n);
    case ElementType::kQ8_0:
      return q8_0_cells(blocks, out, n);
#else
    case ElementType::kQ4_0:
      return ggml::dequantize_q4_0(blocks, out, n);
    case ElementType::kQ5_0:
      return ggml::dequantize_q5_0(blocks, out, n);
    case ElementType::kQ8_0:
      return ggml::dequantize_q8_0(blocks, out, n);
#endif
    case ElementType::kQ4_1:
      return ggml::dequantize_q4_1(blocks, out, n);
    case ElementType::kQ5_1:
      return ggml::dequantize_q5_1(blocks, out, n);
    case ElementType::kQ2_K:
      return ggml::dequantize_q2_k(blocks, out, n);
    case ElementType::kQ3_K:
      return ggml::dequantize_q3_k(blocks, out, n);
    case ElementType::kQ4_K:
      return ggml::dequantize_q4_k(blocks, out, n);
    case ElementType::kQ5_K:
      return ggml::dequantize_q5_k(blocks, out, n);
    case ElementType::kQ6_K:
      return ggml::dequantize_q6_k(blocks, out, n);
    case ElementType::kIQ4_NL:
      return ggml::dequantize_iq4_nl(blocks, out, n);
    case ElementType::kIQ4_XS:
      return ggml::dequantize_iq4_xs(blocks, out, n);
    default:
      return element_traits(t).to_float(blocks, out, n);
  }
}

#define ATTN_LINEAR_UNROLL _Pragma("GCC unroll 16")

// The register tile: kRows rows of x by kCols vectors of outputs. In
// float64 a panel is as wide as one group of rows the float32 transpose
// turns (kW<float>): two vectors of doubles.
template <class T>
struct Tile;
#if defined(ATTN_SIMD_AVX512)
template <>
struct Tile<float> {
  static constexpr int kRows = 8, kCols = 3;  // 24 accumulators of 32 registers
};
template <>
struct Tile<double> {
  static constexpr int kRows = 12, kCols = 2;
};
#elif defined(ATTN_SIMD_AVX2)
template <>
struct Tile<float> {
  static constexpr int kRows = 6, kCols = 2;  // 12 of 16
};
template <>
struct Tile<double> {
  static constexpr int kRows = 6, kCols = 2;
};
#else
template <>
struct Tile<float> {
  static constexpr int kRows = 4, kCols = 2;
};
template <>
struct Tile<double> {
  static constexpr int kRows = 4, kCols = 2;
};
#endif

template <class T>
constexpr int kW = Simd<T>::W;  // cells per vector
template <class T>
constexpr int kRows = Tile<T>::kRows;
template <class T>
constexpr int kPanel = Tile<T>::kCols* kW<T>;  // outputs per panel
constexpr int64_t kDepth = 256;                // inputs per packed block
constexpr int kMaxBlockRows = 16;              // rows of quantized blocks dequantized at once

// y[r][0..kPanel) for the kRows rows of x (ldx apart): the sum over the
// block's kc inputs of x[r][k] · p[k][...], added to what y holds when
// kAdd (the blocks after the first).
template <class T, bool kAdd>
[[gnu::always_inline]] inline void tile(const T* x, int64_t ldx, int64_t kc, const T* p, T* y,
                                        int64_t ldy) {
  constexpr int R = kRows<T>, C = Tile<T>::kCols;
  Vec<T> acc[R][C];
  ATTN_LINEAR_UNROLL for (int r = 0; r < R; ++r) {
    ATTN_LINEAR_UNROLL for (int c = 0; c < C; ++c) acc[r][c] = splat(T(0));
  }
  for (int64_t k = 0; k < kc; ++k) {
    Vec<T> b[C];
    ATTN_LINEAR_UNROLL for (int c = 0; c < C; ++c) {
      b[c] = in_register(load(p + k * kPanel<T> + c * kW<T>));
    }
    ATTN_LINEAR_UNROLL for (int r = 0; r < R; ++r) {
      const Vec<T> a = splat(x[r * ldx + k]);
      ATTN_LINEAR_UNROLL for (int c = 0; c < C; ++c) acc[r][c] = fma(a, b[c], acc[r][c]);
    }
  }
  ATTN_LINEAR_UNROLL for (int r = 0; r < R; ++r) {
    ATTN_LINEAR_UNROLL for (int c = 0; c < C; ++c) {
      T* out = y + r * ldy + c * kW<T>;
      store(out, kAdd ? acc[r][c] + load(out) : acc[r][c]);
    }
  }
}

// One cell as a T: exact for float32, bfloat16 and float16 (and float64
// into double); a float64 into float rounds, to an infinity past
// float32's range, which the caller's finite check then finds.
template <class T>
inline T cell_value(const unsigned char* p, ElementType t) {
  switch (t) {
    case ElementType::kF32: {
      float f;
      std::memcpy(&f, p, 4);
      return static_cast<T>(f);
    }
    case ElementType::kBF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return static_cast<T>(f);
    }
    case ElementType::kF64: {
      double d;
      std::memcpy(&d, p, 8);
      return static_cast<T>(d);
    }
    default:
      return static_cast<T>(decode_cell(p, t));
  }
}

#if defined(ATTN_SIMD_AVX512) || defined(ATTN_SIMD_AVX2)
constexpr int kFW = kW<float>;

// kFW cells at p as floats: float32 loaded, bfloat16 widened (its bits
// moved to the top half of each lane).
template <ElementType kType>
inline Vec<float> cells(const unsigned char* p) {
#if defined(ATTN_SIMD_AVX512)
  if constexpr (kType == ElementType::kBF16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  } else {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(p));
  }
#else
  if constexpr (kType == ElementType::kBF16) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  } else {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  }
#endif
}

// kFW floats stored as T at dst: as they are, or widened to two vectors
// of doubles (exact).
template <class T>
inline void put(T* dst, Vec<float> v) {
  if constexpr (std::is_same_v<T, float>) {
    store(dst, v);
  } else {
#if defined(ATTN_SIMD_AVX512)
    store(dst, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    store(dst + 8,
          _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
#else
    store(dst, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    store(dst + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
#endif
  }
}

// r[i][j] becomes r[j][i]: a kFW x kFW block of floats transposed in
// registers (unpack, shuffle, then whole 128-bit lanes).
inline void transpose(Vec<float> (&r)[kFW]) {
#if defined(ATTN_SIMD_AVX512)
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + e], 128-bit lane L: rows 4i..4i+3 at column 4L + e.
  for (int i = 0; i < 4; ++i) {
    u[4 * i + 0] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int e = 0; e < 4; ++e) {
    const __m512 v = _mm512_shuffle_f32x4(u[e], u[4 + e], 0x88);
    const __m512 w = _mm512_shuffle_f32x4(u[e], u[4 + e], 0xDD);
    const __m512 v2 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0x88);
    const __m512 w2 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0xDD);
    r[e] = _mm512_shuffle_f32x4(v, v2, 0x88);
    r[8 + e] = _mm512_shuffle_f32x4(v, v2, 0xDD);
    r[4 + e] = _mm512_shuffle_f32x4(w, w2, 0x88);
    r[12 + e] = _mm512_shuffle_f32x4(w, w2, 0xDD);
  }
#else
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int e = 0; e < 4; ++e) {
    r[e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x20);
    r[4 + e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x31);
  }
#endif
}

// The vector part of pack(): whole groups of kFW outputs, whole vectors of
// inputs, read as floats (bfloat16 widened) and stored as T. Whether every
// cell is finite.
template <class T, ElementType kType>
bool pack_vectors(const LinearWeight& w, int64_t o0, int64_t groups, int64_t k0, int64_t kv,
                  T* dst) {
  constexpr int size = kType == ElementType::kBF16 ? 2 : 4;  // bfloat16 or float32
  // finite_marks summed (simd_math.h): NaN once a cell is not finite.
  Vec<float> marks = splat(0.0f);
  if (w.out_major) {
    // Row o of the file holds output o's inputs: kFW rows of kFW cells
    // each, transposed.
    for (int64_t g = 0; g < groups; ++g) {
      const unsigned char* src = w.data + ((o0 + g * kFW) * w.cols + k0) * size;
      for (int64_t k = 0; k < kv; k += kFW) {
        Vec<float> r[kFW];
        // Each row is a run of a few cache lines (512 bytes of bf16 for a
        // block of 256 inputs), too short for the hardware prefetchers to
        // follow: at each new line, the line two ahead of it in every row
        // is asked for. Packing then waited 20-25% less on memory (the
        // weights come from DRAM, read once per forward pass).
        if ((k * size) % 64 == 0) {
          ATTN_LINEAR_UNROLL for (int i = 0; i < kFW; ++i) {
            __builtin_prefetch(src + (i * w.cols + k) * size + 384, 0, 3);
          }
        }
        ATTN_LINEAR_UNROLL for (int i = 0; i < kFW; ++i) {
          r[i] = cells<kType>(src + (i * w.cols + k) * size);
          marks += finite_marks(r[i]);
        }
        transpose(r);
        ATTN_LINEAR_UNROLL for (int i = 0; i < kFW; ++i) {
          put(dst + (k + i) * kPanel<T> + g * kFW, r[i]);
        }
      }
    }
  } else {
    // Row k of the file holds input k's outputs: copied across.
    for (int64_t k = 0; k < kv; ++k) {
      const unsigned char* src = w.data + ((k0 + k) * w.cols + o0) * size;
      for (int64_t g = 0; g < groups; ++g) {
        const Vec<float> v = cells<kType>(src + g * kFW * size);
        marks += finite_marks(v);
        put(dst + k * kPanel<T> + g * kFW, v);
      }
    }
  }
  return no_mark_set(marks);
}
#endif

// dst[k][j] (kPanel<T> cells per k) = the cell of output o0 + j and input
// k0 + k, for j < width (0 past it) and k < kc. Whether every cell is
// finite as a T.
template <class T>
bool pack(const LinearWeight& w, int64_t o0, int64_t width, int64_t k0, int64_t kc, T* dst) {
  // What the vector code did: columns [0, done) of inputs [0, kv).
  int64_t done = 0, kv = 0;
  bool finite = true;
#if defined(ATTN_SIMD_AVX512) || defined(ATTN_SIMD_AVX2)
  static_assert(kPanel<T> % kFW == 0, "a panel holds whole groups of the float transpose");
  if (w.type == ElementType::kBF16 || w.type == ElementType::kF32) {
    const int64_t groups = width / kFW;
    kv = w.out_major ? kc / kFW * kFW : kc;
    finite = w.type == ElementType::kBF16
                 ? pack_vectors<T, ElementType::kBF16>(w, o0, groups, k0, kv, dst)
                 : pack_vectors<T, ElementType::kF32>(w, o0, groups, k0, kv, dst);
    done = groups * kFW;
  }
#endif
  // GGUF's quantized blocks run along each output's inputs: kFW outputs'
  // kc cells (whole blocks: kDepth and the rows are multiples of the block)
  // dequantized as ggml does into a scratch of floats, then transposed into
  // the panel as float32 weights are.
  if (block_cells(w.type) > 1) {
    if (!w.out_major) return false;
    const uint64_t row_bytes = cells_bytes(w.type, static_cast<uint64_t>(w.cols));
    const uint64_t skip = cells_bytes(w.type, static_cast<uint64_t>(k0));
    alignas(64) static thread_local float scratch[kMaxBlockRows * kDepth];
    int64_t j0 = 0;
#if defined(ATTN_SIMD_AVX512) || defined(ATTN_SIMD_AVX2)
    static_assert(kFW <= kMaxBlockRows, "the scratch holds a group of rows");
    const LinearWeight rows{reinterpret_cast<const unsigned char*>(scratch), ElementType::kF32, kFW,
                            kc, true};
    for (; j0 + kFW <= width; j0 += kFW) {
      for (int i = 0; i < kFW; ++i) {
        dequantize(w.type, w.data + static_cast<uint64_t>(o0 + j0 + i) * row_bytes + skip,
                   scratch + i * kc, kc);
      }
      finite &= pack_vectors<T, ElementType::kF32>(rows, 0, 1, 0, kc, dst + j0);
    }
#endif
    for (int64_t j = j0; j < kPanel<T>; ++j) {
      if (j >= width) {
        for (int64_t k = 0; k < kc; ++k) dst[k * kPanel<T> + j] = T(0);
        continue;
      }
      dequantize(w.type, w.data + static_cast<uint64_t>(o0 + j) * row_bytes + skip, scratch, kc);
      for (int64_t k = 0; k < kc; ++k) {
        const T v = static_cast<T>(scratch[k]);
        finite &= std::isfinite(v);
        dst[k * kPanel<T> + j] = v;
      }
    }
    return finite;
  }
  const int size = element_size(w.type);
  const int64_t in_stride = w.out_major ? 1 : w.cols, out_stride = w.out_major ? w.cols : 1;
  for (int64_t k = 0; k < kc; ++k) {
    T* row = dst + k * kPanel<T>;
    // The columns the vector code left: all of them past its last input,
    // else those past its last group.
    for (int64_t j = k < kv ? done : 0; j < kPanel<T>; ++j) {
      if (j >= width) {
        row[j] = T(0);
        continue;
      }
      const T v =
          cell_value<T>(w.data + ((o0 + j) * out_stride + (k0 + k) * in_stride) * size, w.type);
      finite &= std::isfinite(v);
      row[j] = v;
    }
  }
  return finite;
}

struct Panel {
  int weight;
  int64_t o0, width, column;  // its outputs in the weight, and y's column of o0
};

template <class T>
struct Buffer {
  T* p = nullptr;
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { std::free(p); }
  void allocate(int64_t cells) {
    if (p) return;
    const auto bytes = static_cast<size_t>(cells) * sizeof(T);
    p = static_cast<T*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
    if (!p) throw std::bad_alloc();
  }
};

template <class T>
bool linear(const T* x, int64_t n, int64_t in, const LinearWeight* w, int count, T* y, int64_t ldy,
            int threads) {
  constexpr int R = kRows<T>, P = kPanel<T>;
  std::vector<Panel> panels;
  int64_t column = 0;
  for (int i = 0; i < count; ++i) {
    const int64_t out = w[i].outputs();
    for (int64_t o0 = 0; o0 < out; o0 += P) {
      panels.push_back(Panel{i, o0, std::min<int64_t>(P, out - o0), column + o0});
    }
    column += out;
  }
  const int64_t row_groups = (n + R - 1) / R;
  const auto npanels = static_cast<int64_t>(panels.size());
  if (npanels == 0 || row_groups == 0) return true;
  // The last rows when they do not fill a group, padded with zeros: the
  // register tile reads kRows rows.
  Buffer<T> tail;
  const int64_t full = n / R * R;
  if (full < n) {
    tail.allocate(R * in);
    std::memcpy(tail.p, x + full * in, sizeof(T) * static_cast<size_t>((n - full) * in));
    std::fill(tail.p + (n - full) * in, tail.p + R * in, T(0));
  }
  // Tasks of a panel and a range of row groups. Panels are whole tasks
  // but for balance: with too few panels for the threads (the keys' and
  // values' projections) every panel is cut by rows, each part packing the
  // panel again; otherwise the panels that do not divide among the threads
  // are, so that the threads end together (a Qwen2.5 down projection is 19
  // panels of 0.6 ms each on one thread).
  struct Task {
    int64_t panel, g0, g1;
  };
  std::vector<Task> tasks;
  auto add = [&](int64_t panel, int64_t parts) {
    const int64_t per = (row_groups + parts - 1) / parts;
    for (int64_t g0 = 0; g0 < row_groups; g0 += per) {
      tasks.push_back(Task{panel, g0, std::min(row_groups, g0 + per)});
    }
  };
  const int workers = std::max(1, threads);
  if (npanels < 4 * workers) {
    const int64_t parts = std::min<int64_t>(row_groups, (4 * workers + npanels - 1) / npanels);
    for (int64_t p = 0; p < npanels; ++p) add(p, parts);
  } else {
    const int64_t whole = npanels - npanels % workers;
    for (int64_t p = 0; p < npanels; ++p)
      add(p, p < whole ? 1 : std::min<int64_t>(row_groups, workers));
  }
  std::vector<Buffer<T>> buffers(static_cast<size_t>(workers));
  std::vector<char> bad(tasks.size(), 0);
  parallel_for(static_cast<int64_t>(tasks.size()), workers, [&](int64_t task, int thread) {
    const Task& t = tasks[static_cast<size_t>(task)];
    const Panel& pn = panels[static_cast<size_t>(t.panel)];
    const int64_t g0 = t.g0, g1 = t.g1;
    Buffer<T>& buf = buffers[static_cast<size_t>(thread)];
    buf.allocate(kDepth * P);
    alignas(64) T part[R * P];
    const bool whole = pn.width == P;
    for (int64_t k0 = 0; k0 < in; k0 += kDepth) {
      const int64_t kc = std::min(kDepth, in - k0);
      if (!pack(w[pn.weight], pn.o0, pn.width, k0, kc, buf.p)) {
        bad[static_cast<size_t>(task)] = 1;
        return;
      }
      for (int64_t g = g0; g < g1; ++g) {
        const int64_t r0 = g * R;
        const T* xr = (r0 < full ? x + r0 * in : tail.p) + k0;
        T* yr = y + r0 * ldy + pn.column;
        if (whole && r0 < full) {
          if (k0 == 0) {
            tile<T, false>(xr, in, kc, buf.p, yr, ldy);
          } else {
            tile<T, true>(xr, in, kc, buf.p, yr, ldy);
          }
          continue;
        }
        // A tile past y's last row or the weight's last output: computed
        // aside, and only its cells inside y kept.
        tile<T, false>(xr, in, kc, buf.p, part, P);
        for (int64_t r = 0; r < std::min<int64_t>(R, n - r0); ++r) {
          for (int64_t j = 0; j < pn.width; ++j) {
            yr[r * ldy + j] = k0 == 0 ? part[r * P + j] : yr[r * ldy + j] + part[r * P + j];
          }
        }
      }
    }
  });
  return std::find(bad.begin(), bad.end(), 1) == bad.end();
}

// SiLU: x·σ(x) with σ(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) below,
// e = exp(-|x|): the softmax's exp, which takes x <= 0 only, and no
// overflow for any x. GELU (tanh): the soft cap's tanh.
template <GateKind kKind>
inline Vec<float> activate(Vec<float> x) {
  if constexpr (kKind == GateKind::kSilu) {
    using I = Simd<float>::I;
    I b;
    std::memcpy(&b, &x, sizeof b);
    b |= I{} + 0x80000000u;  // -|x|
    Vec<float> neg;
    std::memcpy(&neg, &b, sizeof b);
    const Vec<float> e = vexp_softmax(neg);
    const Vec<float> num = x >= splat(0.0f) ? splat(1.0f) : e;
    return x * (num / (splat(1.0f) + e));
  } else {
    const Vec<float> k = splat(0.7978845608028654f);  // √(2/π)
    const Vec<float> inner = k * fma(splat(0.044715f) * x, x * x, x);
    return splat(0.5f) * x * (splat(1.0f) + vtanh(inner));
  }
}

template <GateKind kKind>
void gate_row(const float* g, const float* u, float* out, int64_t width) {
  int64_t c = 0;
  constexpr int W = kW<float>;
  for (; c + W <= width; c += W) store(out + c, activate<kKind>(load(g + c)) * load(u + c));
  if (c == width) return;
  float tg[W] = {}, tu[W] = {}, to[W];
  std::memcpy(tg, g + c, sizeof(float) * static_cast<size_t>(width - c));
  std::memcpy(tu, u + c, sizeof(float) * static_cast<size_t>(width - c));
  store(to, activate<kKind>(load(tg)) * load(tu));
  std::memcpy(out + c, to, sizeof(float) * static_cast<size_t>(width - c));
}

void gate_f32(const float* gate_up, int64_t n, int64_t width, int64_t ld, GateKind kind, float* out,
              int64_t ldo, int threads) {
  parallel_for(n, std::max(1, threads), [&](int64_t r, int) {
    const float* g = gate_up + r * ld;
    if (kind == GateKind::kSilu) {
      gate_row<GateKind::kSilu>(g, g + width, out + r * ldo, width);
    } else {
      gate_row<GateKind::kGeluTanh>(g, g + width, out + r * ldo, width);
    }
  });
}

#undef ATTN_LINEAR_UNROLL

}  // namespace

const LinearKernels kLinear = {&linear<float>, &linear<double>, &gate_f32};
