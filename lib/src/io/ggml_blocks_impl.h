// The bodies of ggml's dequantization (io/ggml_blocks.h), in a header of
// its own so that they are built twice from one text: by ggml_blocks.cc
// for the library's readers, and inside each instruction set's region of
// the linear kernel (kernel/linear_kernel_<isa>.cc), where the compiler
// vectorizes the same loops for the packing of quantized weights. Not a
// normal header: the file that includes it opens the namespace. Every file
// that includes it is compiled with -ffp-contract=off: each function does
// ggml's float operations in ggml's order (a product, then a sum: two
// roundings), so the floats are ggml's, and a fused multiply-add would
// round once and differ in the last bit.

float fp16_to_fp32(uint16_t h);

inline float float_of_bits(uint32_t b) {
  float f = 0;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

inline uint32_t bits_of_float(float f) {
  uint32_t b = 0;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

inline uint16_t u16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

inline uint32_t u32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

inline float half_at(const unsigned char* p) { return fp16_to_fp32(u16(p)); }

// The non-linear levels of IQ4_NL and IQ4_XS (kvalues_iq4nl).
inline constexpr int8_t kValuesIq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// The 6-bit scale and min of sub-block j of a Q4_K or Q5_K block
// (get_scale_min_k4).
inline void scale_min_k4(int j, const unsigned char* q, uint8_t& d, uint8_t& m) {
  if (j < 4) {
    d = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    d = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
  }
}

float fp16_to_fp32(uint16_t h) {
  // ggml_compute_fp16_to_fp32: the half's exponent and fraction moved into
  // a float and rescaled by 2^-112 (normal numbers, infinities and NaNs),
  // or a subnormal made exact by subtracting a magic bias.
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  const uint32_t exp_offset = 0xE0u << 23;
  const float exp_scale = 0x1.0p-112f;
  const float normalized = float_of_bits((two_w >> 4) + exp_offset) * exp_scale;
  const uint32_t magic_mask = 126u << 23;
  const float magic_bias = 0.5f;
  const float denormalized = float_of_bits((two_w >> 17) | magic_mask) - magic_bias;
  const uint32_t denormalized_cutoff = 1u << 27;
  return float_of_bits(sign | (two_w < denormalized_cutoff ? bits_of_float(denormalized)
                                                           : bits_of_float(normalized)));
}

// Q4_0 (18 bytes): d, then 16 bytes of nibbles; cell j is the low nibble
// of byte j, cell j + 16 the high one, each minus 8.
[[maybe_unused]] void dequantize_q4_0(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += 18, y += kQK) {
    const float d = half_at(x);
    const unsigned char* qs = x + 2;
    for (int j = 0; j < 16; ++j) {
      const int x0 = (qs[j] & 0x0F) - 8;
      const int x1 = (qs[j] >> 4) - 8;
      y[j] = static_cast<float>(x0) * d;
      y[j + 16] = static_cast<float>(x1) * d;
    }
  }
}

// Q4_1 (20 bytes): d, m, nibbles; a cell is q·d + m.
[[maybe_unused]] void dequantize_q4_1(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += 20, y += kQK) {
    const float d = half_at(x);
    const float m = half_at(x + 2);
    const unsigned char* qs = x + 4;
    for (int j = 0; j < 16; ++j) {
      const int x0 = qs[j] & 0x0F;
      const int x1 = qs[j] >> 4;
      y[j] = static_cast<float>(x0) * d + m;
      y[j + 16] = static_cast<float>(x1) * d + m;
    }
  }
}

// Q5_0 (22 bytes): d, 32 fifth bits, nibbles; a cell minus 16.
[[maybe_unused]] void dequantize_q5_0(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += 22, y += kQK) {
    const float d = half_at(x);
    const uint32_t qh = u32(x + 2);
    const unsigned char* qs = x + 6;
    for (int j = 0; j < 16; ++j) {
      const uint8_t xh_0 = static_cast<uint8_t>(((qh >> (j + 0)) << 4) & 0x10);
      const uint8_t xh_1 = static_cast<uint8_t>((qh >> (j + 12)) & 0x10);
      const int32_t x0 = ((qs[j] & 0x0F) | xh_0) - 16;
      const int32_t x1 = ((qs[j] >> 4) | xh_1) - 16;
      y[j] = static_cast<float>(x0) * d;
      y[j + 16] = static_cast<float>(x1) * d;
    }
  }
}

// Q5_1 (24 bytes): d, m, 32 fifth bits, nibbles; a cell is q·d + m.
[[maybe_unused]] void dequantize_q5_1(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += 24, y += kQK) {
    const float d = half_at(x);
    const float m = half_at(x + 2);
    const uint32_t qh = u32(x + 4);
    const unsigned char* qs = x + 8;
    for (int j = 0; j < 16; ++j) {
      const uint8_t xh_0 = static_cast<uint8_t>(((qh >> (j + 0)) << 4) & 0x10);
      const uint8_t xh_1 = static_cast<uint8_t>((qh >> (j + 12)) & 0x10);
      const int x0 = (qs[j] & 0x0F) | xh_0;
      const int x1 = (qs[j] >> 4) | xh_1;
      y[j] = static_cast<float>(x0) * d + m;
      y[j + 16] = static_cast<float>(x1) * d + m;
    }
  }
}

// Q8_0 (34 bytes): d, then 32 signed bytes.
[[maybe_unused]] void dequantize_q8_0(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += 34, y += kQK) {
    const float d = half_at(x);
    for (int j = 0; j < 32; ++j) {
      y[j] = static_cast<float>(static_cast<int8_t>(x[2 + j])) * d;
    }
  }
}

// Q2_K (84 bytes): 16 scale bytes (a 4-bit scale and a 4-bit min for each
// 16 cells), 64 bytes of 2-bit quants, d, dmin; a cell is
// d·scale·q − dmin·min.
[[maybe_unused]] void dequantize_q2_k(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, x += 84) {
    const unsigned char* scales = x;
    const unsigned char* q = x + 16;
    const float d = half_at(x + 80);
    const float min = half_at(x + 82);
    int is = 0;
    for (int c = 0; c < 256; c += 128) {
      int shift = 0;
      for (int j = 0; j < 4; ++j) {
        uint8_t sc = scales[is++];
        float dl = d * static_cast<float>(sc & 0xF);
        float ml = min * static_cast<float>(sc >> 4);
        for (int l = 0; l < 16; ++l) {
          *y++ = dl * static_cast<float>(static_cast<int8_t>((q[l] >> shift) & 3)) - ml;
        }
        sc = scales[is++];
        dl = d * static_cast<float>(sc & 0xF);
        ml = min * static_cast<float>(sc >> 4);
        for (int l = 0; l < 16; ++l) {
          *y++ = dl * static_cast<float>(static_cast<int8_t>((q[l + 16] >> shift) & 3)) - ml;
        }
        shift += 2;
      }
      q += 32;
    }
  }
}

// Q3_K (110 bytes): 32 bytes of high bits, 64 bytes of 2-bit quants, 12
// bytes of sixteen 6-bit scales, d; a cell is d·(scale − 32)·(q − 4 if
// its high bit is clear).
[[maybe_unused]] void dequantize_q3_k(const unsigned char* x, float* y, int64_t n) {
  constexpr uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f;
  for (int64_t i = 0; i < n / kQKK; ++i, x += 110) {
    const unsigned char* hm = x;
    const unsigned char* q = x + 32;
    const float d_all = half_at(x + 108);
    uint32_t aux[4] = {u32(x + 96), u32(x + 100), u32(x + 104), 0};
    const uint32_t tmp = aux[2];
    aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
    aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
    aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
    aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
    // The scales are the bytes of aux, in memory order (little endian).
    int8_t scales[16];
    for (int k = 0; k < 16; ++k) {
      scales[k] = static_cast<int8_t>((aux[k / 4] >> (8 * (k % 4))) & 0xFF);
    }
    int is = 0;
    uint8_t m = 1;
    for (int c = 0; c < 256; c += 128) {
      int shift = 0;
      for (int j = 0; j < 4; ++j) {
        float dl = d_all * static_cast<float>(scales[is++] - 32);
        for (int l = 0; l < 16; ++l) {
          *y++ = dl * static_cast<float>(static_cast<int8_t>((q[l + 0] >> shift) & 3) -
                                         ((hm[l + 0] & m) ? 0 : 4));
        }
        dl = d_all * static_cast<float>(scales[is++] - 32);
        for (int l = 0; l < 16; ++l) {
          *y++ = dl * static_cast<float>(static_cast<int8_t>((q[l + 16] >> shift) & 3) -
                                         ((hm[l + 16] & m) ? 0 : 4));
        }
        shift += 2;
        m = static_cast<uint8_t>(m << 1);
      }
      q += 32;
    }
  }
}

// Q4_K (144 bytes): d, dmin, 12 bytes of eight 6-bit scales and mins, 128
// bytes of nibbles; a cell is d·scale·q − dmin·min.
[[maybe_unused]] void dequantize_q4_k(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, x += 144) {
    const float d = half_at(x);
    const float min = half_at(x + 2);
    const unsigned char* scales = x + 4;
    const unsigned char* q = x + 16;
    int is = 0;
    uint8_t sc = 0, m = 0;
    for (int j = 0; j < 256; j += 64) {
      scale_min_k4(is + 0, scales, sc, m);
      const float d1 = d * static_cast<float>(sc);
      const float m1 = min * static_cast<float>(m);
      scale_min_k4(is + 1, scales, sc, m);
      const float d2 = d * static_cast<float>(sc);
      const float m2 = min * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
      q += 32;
      is += 2;
    }
  }
}

// Q5_K (176 bytes): as Q4_K, with 32 bytes of fifth bits before the
// nibbles.
[[maybe_unused]] void dequantize_q5_k(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, x += 176) {
    const float d = half_at(x);
    const float min = half_at(x + 2);
    const unsigned char* scales = x + 4;
    const unsigned char* qh = x + 16;
    const unsigned char* ql = x + 48;
    int is = 0;
    uint8_t sc = 0, m = 0;
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0; j < 256; j += 64) {
      scale_min_k4(is + 0, scales, sc, m);
      const float d1 = d * static_cast<float>(sc);
      const float m1 = min * static_cast<float>(m);
      scale_min_k4(is + 1, scales, sc, m);
      const float d2 = d * static_cast<float>(sc);
      const float m2 = min * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) {
        *y++ = d1 * static_cast<float>((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        *y++ = d2 * static_cast<float>((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
      }
      ql += 32;
      is += 2;
      u1 = static_cast<uint8_t>(u1 << 2);
      u2 = static_cast<uint8_t>(u2 << 2);
    }
  }
}

// Q6_K (210 bytes): 128 bytes of low nibbles, 64 bytes of high 2 bits, 16
// signed 8-bit scales, d; a cell is d·scale·(q − 32).
[[maybe_unused]] void dequantize_q6_k(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, x += 210) {
    const unsigned char* ql = x;
    const unsigned char* qh = x + 128;
    const unsigned char* sc = x + 192;
    const float d = half_at(x + 208);
    for (int c = 0; c < 256; c += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int8_t q1 = static_cast<int8_t>(((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
        const int8_t q2 =
            static_cast<int8_t>(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
        const int8_t q3 = static_cast<int8_t>(((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
        const int8_t q4 = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
        auto scale = [&](int k) { return static_cast<float>(static_cast<int8_t>(sc[is + k])); };
        y[l + 0] = d * scale(0) * static_cast<float>(q1);
        y[l + 32] = d * scale(2) * static_cast<float>(q2);
        y[l + 64] = d * scale(4) * static_cast<float>(q3);
        y[l + 96] = d * scale(6) * static_cast<float>(q4);
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

// IQ4_NL (18 bytes): d, nibbles indexing the non-linear levels.
[[maybe_unused]] void dequantize_iq4_nl(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += 18, y += kQK) {
    const float d = half_at(x);
    const unsigned char* qs = x + 2;
    for (int j = 0; j < 16; ++j) {
      y[j] = d * static_cast<float>(kValuesIq4nl[qs[j] & 0xf]);
      y[j + 16] = d * static_cast<float>(kValuesIq4nl[qs[j] >> 4]);
    }
  }
}

// IQ4_XS (136 bytes): d, the high 2 bits of eight 6-bit scales, their low
// 4 bits, nibbles indexing the non-linear levels.
[[maybe_unused]] void dequantize_iq4_xs(const unsigned char* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, x += 136) {
    const float d = half_at(x);
    const uint16_t scales_h = u16(x + 2);
    const unsigned char* scales_l = x + 4;
    const unsigned char* qs = x + 8;
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = ((scales_l[ib / 2] >> 4 * (ib % 2)) & 0xf) | (((scales_h >> 2 * ib) & 3) << 4);
      const float dl = d * static_cast<float>(ls - 32);
      for (int j = 0; j < 16; ++j) {
        y[j + 0] = dl * static_cast<float>(kValuesIq4nl[qs[j] & 0xf]);
        y[j + 16] = dl * static_cast<float>(kValuesIq4nl[qs[j] >> 4]);
      }
      y += 32;
      qs += 16;
    }
  }
}
