// The float32 products with weight matrices (kernel/linear_kernel.h), for
// one instruction set.
//
// Not a normal header: linear_kernel_<isa>.cc includes it inside its own
// namespace, after kernel/simd.h, once per instruction set; everything but
// the table kLinear has internal linkage (see kernel/isa_region.h).
//
// The product is cut into panels of kPanel outputs. A task takes one panel
// (and, when the panels are too few to keep the threads busy, part of x's
// rows); for each block of kDepth inputs it packs the panel's cells into
// a buffer, input-major (pack), and runs the register tile over every
// group of kRows rows of x against it (tile). The buffer (48 KiB with
// AVX-512) stays in L2 for the whole block; the rows of x are read from L2
// or L3 once per panel.
#ifndef ATTN_KERNEL_ISA_REGION
#error "kernel/linear_kernel_impl.h is included by kernel/linear_kernel_<isa>.cc only"
#endif

namespace {

#define ATTN_LINEAR_UNROLL _Pragma("GCC unroll 16")

constexpr int kW = Simd<float>::W;  // floats per vector
// The register tile: kRows rows of x by kCols vectors of outputs.
#if defined(ATTN_SIMD_AVX512)
constexpr int kRows = 8, kCols = 3;  // 24 accumulators of 32 registers
#elif defined(ATTN_SIMD_AVX2)
constexpr int kRows = 6, kCols = 2;  // 12 of 16
#else
constexpr int kRows = 4, kCols = 2;
#endif
constexpr int kPanel = kCols * kW;  // outputs per panel
constexpr int64_t kDepth = 256;     // inputs per packed block

// y[r][0..kPanel) for the kRows rows of x (ldx apart): the sum over the
// block's kc inputs of x[r][k] · p[k][...], added to what y holds when
// kAdd (the blocks after the first).
template <bool kAdd>
[[gnu::always_inline]] inline void tile(const float* x, int64_t ldx, int64_t kc, const float* p,
                                        float* y, int64_t ldy) {
  Vec<float> acc[kRows][kCols];
  ATTN_LINEAR_UNROLL for (int r = 0; r < kRows; ++r) {
    ATTN_LINEAR_UNROLL for (int c = 0; c < kCols; ++c) acc[r][c] = splat(0.0f);
  }
  for (int64_t k = 0; k < kc; ++k) {
    Vec<float> b[kCols];
    ATTN_LINEAR_UNROLL for (int c = 0; c < kCols; ++c) {
      b[c] = in_register(load(p + k * kPanel + c * kW));
    }
    ATTN_LINEAR_UNROLL for (int r = 0; r < kRows; ++r) {
      const Vec<float> a = splat(x[r * ldx + k]);
      ATTN_LINEAR_UNROLL for (int c = 0; c < kCols; ++c) acc[r][c] = fma(a, b[c], acc[r][c]);
    }
  }
  ATTN_LINEAR_UNROLL for (int r = 0; r < kRows; ++r) {
    ATTN_LINEAR_UNROLL for (int c = 0; c < kCols; ++c) {
      float* out = y + r * ldy + c * kW;
      store(out, kAdd ? acc[r][c] + load(out) : acc[r][c]);
    }
  }
}

// One cell as a float: exact for float32, bfloat16 and float16; a float64
// rounds (to an infinity past float32's range, which the caller's finite
// check then finds).
inline float cell_float(const unsigned char* p, ElementType t) {
  switch (t) {
    case ElementType::kF32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case ElementType::kBF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case ElementType::kF64: {
      double d;
      std::memcpy(&d, p, 8);
      return static_cast<float>(d);
    }
    default:
      return static_cast<float>(decode_cell(p, t));
  }
}

#if defined(ATTN_SIMD_AVX512) || defined(ATTN_SIMD_AVX2)

// kW cells at p as floats: float32 loaded, bfloat16 widened (its bits
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

// A bit per lane of v that is not finite (its exponent bits all ones).
inline unsigned nonfinite_lanes(Vec<float> v) {
#if defined(ATTN_SIMD_AVX512)
  const __m512i e = _mm512_set1_epi32(0x7f800000);
  return _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(v), e), e);
#else
  const __m256i e = _mm256_set1_epi32(0x7f800000);
  const __m256i m = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(v), e), e);
  return static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(m)));
#endif
}

// r[i][j] becomes r[j][i]: a kW x kW block of floats transposed in
// registers (unpack, shuffle, then whole 128-bit lanes).
inline void transpose(Vec<float> (&r)[kW]) {
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

// The vector part of pack(): whole groups of kW outputs, whole vectors of
// inputs. Returns the bits of nonfinite_lanes, 0 when all are finite.
template <ElementType kType>
unsigned pack_vectors(const LinearWeight& w, int64_t o0, int64_t groups, int64_t k0, int64_t kv,
                      float* dst) {
  constexpr int size = element_size(kType);
  unsigned bad = 0;
  if (w.out_major) {
    // Row o of the file holds output o's inputs: kW rows of kW cells
    // each, transposed.
    for (int64_t g = 0; g < groups; ++g) {
      const unsigned char* src = w.data + ((o0 + g * kW) * w.cols + k0) * size;
      for (int64_t k = 0; k < kv; k += kW) {
        Vec<float> r[kW];
        ATTN_LINEAR_UNROLL for (int i = 0; i < kW; ++i) {
          r[i] = cells<kType>(src + (i * w.cols + k) * size);
          bad |= nonfinite_lanes(r[i]);
        }
        transpose(r);
        ATTN_LINEAR_UNROLL for (int i = 0; i < kW; ++i)
            store(dst + (k + i) * kPanel + g * kW, r[i]);
      }
    }
  } else {
    // Row k of the file holds input k's outputs: copied across.
    for (int64_t k = 0; k < kv; ++k) {
      const unsigned char* src = w.data + ((k0 + k) * w.cols + o0) * size;
      for (int64_t g = 0; g < groups; ++g) {
        const Vec<float> v = cells<kType>(src + g * kW * size);
        bad |= nonfinite_lanes(v);
        store(dst + k * kPanel + g * kW, v);
      }
    }
  }
  return bad;
}
#endif

// dst[k][j] (kPanel floats per k) = the cell of output o0 + j and input
// k0 + k, for j < width (0 past it) and k < kc. Whether every cell is
// finite as a float.
bool pack(const LinearWeight& w, int64_t o0, int64_t width, int64_t k0, int64_t kc, float* dst) {
  int64_t groups = 0, kv = 0;  // what the vector code did
  bool finite = true;
#if defined(ATTN_SIMD_AVX512) || defined(ATTN_SIMD_AVX2)
  if (w.type == ElementType::kBF16 || w.type == ElementType::kF32) {
    groups = width / kW;
    kv = w.out_major ? kc / kW * kW : kc;
    const unsigned bad = w.type == ElementType::kBF16
                             ? pack_vectors<ElementType::kBF16>(w, o0, groups, k0, kv, dst)
                             : pack_vectors<ElementType::kF32>(w, o0, groups, k0, kv, dst);
    finite = bad == 0;
  }
#endif
  const int size = element_size(w.type);
  const int64_t in_stride = w.out_major ? 1 : w.cols, out_stride = w.out_major ? w.cols : 1;
  for (int64_t k = 0; k < kc; ++k) {
    float* row = dst + k * kPanel;
    // The columns the vector code left: all of them past its last input,
    // else those past its last group.
    for (int64_t j = k < kv ? groups * kW : 0; j < kPanel; ++j) {
      if (j >= width) {
        row[j] = 0.0f;
        continue;
      }
      const float f =
          cell_float(w.data + ((o0 + j) * out_stride + (k0 + k) * in_stride) * size, w.type);
      finite &= std::isfinite(f);
      row[j] = f;
    }
  }
  return finite;
}

struct Panel {
  int weight;
  int64_t o0, width, column;  // its outputs in the weight, and y's column of o0
};

bool linear_f32(const float* x, int64_t n, int64_t in, const LinearWeight* w, int count, float* y,
                int64_t ldy, int threads) {
  std::vector<Panel> panels;
  int64_t column = 0;
  for (int i = 0; i < count; ++i) {
    const int64_t out = w[i].outputs();
    for (int64_t o0 = 0; o0 < out; o0 += kPanel) {
      panels.push_back(Panel{i, o0, std::min<int64_t>(kPanel, out - o0), column + o0});
    }
    column += out;
  }
  const int64_t row_groups = (n + kRows - 1) / kRows;
  const auto npanels = static_cast<int64_t>(panels.size());
  if (npanels == 0 || row_groups == 0) return true;
  // Too few panels for the threads (the keys' and values' projections):
  // the rows are cut too, each part packing the panel again.
  const int workers = std::max(1, threads);
  const int64_t parts =
      std::min<int64_t>(row_groups, std::max<int64_t>(1, (4 * workers + npanels - 1) / npanels));
  const int64_t per_part = (row_groups + parts - 1) / parts;
  struct Buffer {
    float* p = nullptr;
    ~Buffer() { std::free(p); }
  };
  std::vector<Buffer> buffers(static_cast<size_t>(workers));
  std::vector<char> bad(static_cast<size_t>(npanels * parts), 0);
  parallel_for(npanels * parts, workers, [&](int64_t task, int thread) {
    const Panel& pn = panels[static_cast<size_t>(task / parts)];
    const int64_t g0 = task % parts * per_part, g1 = std::min(row_groups, g0 + per_part);
    Buffer& buf = buffers[static_cast<size_t>(thread)];
    if (!buf.p) {
      buf.p = static_cast<float*>(std::aligned_alloc(64, kDepth * kPanel * sizeof(float)));
      if (!buf.p) throw std::bad_alloc();
    }
    alignas(64) float part[kRows * kPanel];
    const bool whole = pn.width == kPanel;
    for (int64_t k0 = 0; k0 < in; k0 += kDepth) {
      const int64_t kc = std::min(kDepth, in - k0);
      if (!pack(w[pn.weight], pn.o0, pn.width, k0, kc, buf.p)) {
        bad[static_cast<size_t>(task)] = 1;
        return;
      }
      for (int64_t g = g0; g < g1; ++g) {
        const int64_t r0 = g * kRows;
        const float* xr = x + r0 * in + k0;
        float* yr = y + r0 * ldy + pn.column;
        if (whole && r0 + kRows <= n) {
          if (k0 == 0) {
            tile<false>(xr, in, kc, buf.p, yr, ldy);
          } else {
            tile<true>(xr, in, kc, buf.p, yr, ldy);
          }
          continue;
        }
        // A tile past y's last row or the weight's last output: computed
        // aside, and only its cells inside y kept.
        tile<false>(xr, in, kc, buf.p, part, kPanel);
        for (int64_t r = 0; r < std::min<int64_t>(kRows, n - r0); ++r) {
          for (int64_t j = 0; j < pn.width; ++j) {
            yr[r * ldy + j] =
                k0 == 0 ? part[r * kPanel + j] : yr[r * ldy + j] + part[r * kPanel + j];
          }
        }
      }
    }
  });
  return std::find(bad.begin(), bad.end(), 1) == bad.end();
}

#undef ATTN_LINEAR_UNROLL

}  // namespace

const LinearKernels kLinear = {kRows, &linear_f32};
