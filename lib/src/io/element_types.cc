#include "io/element_types.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "attn/error.h"
#include "io/cells.h"
#include "io/ggml_blocks.h"

namespace attn {

namespace {

using E = ElementType;

template <class S, class U>
double as_signed(uint64_t bits) {
  const U u = static_cast<U>(bits);
  S v = 0;
  std::memcpy(&v, &u, sizeof v);
  return static_cast<double>(v);
}

float float_bits(uint32_t b) {
  float f = 0;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// float8 e4m3fn (the "fn" of PyTorch's float8_e4m3fn): bias 7, no
// infinities, S.1111.111 is NaN.
double f8_e4m3(uint32_t b) {
  const double sign = (b & 0x80) ? -1.0 : 1.0;
  const uint32_t e = (b >> 3) & 0xf, f = b & 0x7;
  if (e == 15 && f == 7) return std::numeric_limits<double>::quiet_NaN();
  if (e == 0) return sign * std::ldexp(static_cast<double>(f), -9);
  return sign * std::ldexp(static_cast<double>(f | 0x8), static_cast<int>(e) - 10);
}

template <ElementType T>
constexpr int kSize = T == E::kF64 || T == E::kI64 || T == E::kU64                    ? 8
                      : T == E::kF32 || T == E::kI32 || T == E::kU32                  ? 4
                      : T == E::kF16 || T == E::kBF16 || T == E::kI16 || T == E::kU16 ? 2
                                                                                      : 1;

// One cell of a scalar type known at compile time: the loops below decode
// a run of cells with one dispatch on the type, not one per cell.
template <ElementType T>
double decode(const unsigned char* p) {
  if constexpr (T == E::kF64) {
    const uint64_t b = detail::load_le(p, 8);
    double x = 0;
    std::memcpy(&x, &b, sizeof x);
    return x;
  } else if constexpr (T == E::kF32) {
    return float_bits(static_cast<uint32_t>(detail::load_le(p, 4)));
  } else if constexpr (T == E::kF16) {
    return ggml::fp16_to_fp32(static_cast<uint16_t>(detail::load_le(p, 2)));
  } else if constexpr (T == E::kBF16) {
    // bfloat16 is the upper half of a float32.
    return float_bits(static_cast<uint32_t>(detail::load_le(p, 2)) << 16);
  } else if constexpr (T == E::kF8E4M3) {
    return f8_e4m3(p[0]);
  } else if constexpr (T == E::kF8E5M2) {
    // e5m2 is the upper byte of a binary16.
    return ggml::fp16_to_fp32(static_cast<uint16_t>(p[0] << 8));
  } else if constexpr (T == E::kI64) {
    return as_signed<int64_t, uint64_t>(detail::load_le(p, 8));
  } else if constexpr (T == E::kI32) {
    return as_signed<int32_t, uint32_t>(detail::load_le(p, 4));
  } else if constexpr (T == E::kI16) {
    return as_signed<int16_t, uint16_t>(detail::load_le(p, 2));
  } else if constexpr (T == E::kI8) {
    return as_signed<int8_t, uint8_t>(p[0]);
  } else if constexpr (T == E::kU64) {
    return static_cast<double>(detail::load_le(p, 8));
  } else if constexpr (T == E::kU32) {
    return static_cast<double>(detail::load_le(p, 4));
  } else if constexpr (T == E::kU16) {
    return static_cast<double>(detail::load_le(p, 2));
  } else if constexpr (T == E::kU8) {
    return p[0];
  } else {
    static_assert(T == E::kBool, "a scalar type");
    // BOOL: any non-zero byte is true, as NumPy and PyTorch read it.
    return p[0] ? 1.0 : 0.0;
  }
}

template <ElementType T>
void scalar_to_double(const unsigned char* p, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i, p += kSize<T>) out[i] = decode<T>(p);
}

template <ElementType T>
void scalar_to_float(const unsigned char* p, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i, p += kSize<T>) out[i] = static_cast<float>(decode<T>(p));
}

template <ElementType T>
constexpr ElementTraits scalar(const char* name, int ggml_type, bool floating, const char* stored) {
  return {T,
          name,
          ggml_type,
          1,
          kSize<T>,
          floating,
          true,
          stored,
          scalar_to_float<T>,
          scalar_to_double<T>};
}

using Dequantize = void (*)(const unsigned char*, float*, int64_t);

// A block type's cells as doubles: each block dequantized as floats,
// then widened (exactly).
template <Dequantize F, int64_t kCells, int64_t kBytes>
void block_to_double(const unsigned char* p, double* out, int64_t n) {
  float cells[kCells];
  for (int64_t done = 0; done < n; done += kCells, p += kBytes) {
    F(p, cells, kCells);
    for (int64_t k = 0; k < kCells; ++k) out[done + k] = cells[k];
  }
}

template <ElementType T, Dequantize F, int64_t kCells, int64_t kBytes>
constexpr ElementTraits block(const char* name, int ggml_type) {
  return {T,    name,  ggml_type, kCells, kBytes,
          true, false, "bf16",    F,      block_to_double<F, kCells, kBytes>};
}

constexpr int64_t kQK = ggml::kQK, kQKK = ggml::kQKK;

// ggml's names of its types, by number (enum ggml_type); nullptr for the
// numbers of removed types. Only those with a row below are read.
constexpr const char* kGgmlNames[] = {
    "F32",     "F16",   "Q4_0",   "Q4_1",  nullptr, nullptr,  "Q5_0",  "Q5_1",    "Q8_0",
    "Q8_1",    "Q2_K",  "Q3_K",   "Q4_K",  "Q5_K",  "Q6_K",   "Q8_K",  "IQ2_XXS", "IQ2_XS",
    "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8",    "I16",     "I32",
    "I64",     "F64",   "IQ1_M",  "BF16",  nullptr, nullptr,  nullptr, "TQ1_0",   "TQ2_0",
    nullptr,   nullptr, nullptr,  "MXFP4", "NVFP4", "Q1_0",   "Q2_0",
};

}  // namespace

const std::vector<ElementTraits>& element_type_table() {
  // One row a type, in the order of ElementType: name, ggml's number,
  // floating, stored as (scalar types); name, ggml's number (block types:
  // cells and bytes per block, and the dequantizer, are template
  // arguments).
  static const std::vector<ElementTraits> rows = {
      scalar<E::kF64>("F64", 28, true, ""),
      scalar<E::kF32>("F32", 0, true, "f32"),
      scalar<E::kF16>("F16", 1, true, "f16"),
      scalar<E::kBF16>("BF16", 30, true, "bf16"),
      scalar<E::kF8E4M3>("F8_E4M3", -1, true, "bf16"),
      scalar<E::kF8E5M2>("F8_E5M2", -1, true, "bf16"),
      scalar<E::kI64>("I64", 27, false, ""),
      scalar<E::kI32>("I32", 26, false, ""),
      scalar<E::kI16>("I16", 25, false, ""),
      scalar<E::kI8>("I8", 24, false, ""),
      scalar<E::kU64>("U64", -1, false, ""),
      scalar<E::kU32>("U32", -1, false, ""),
      scalar<E::kU16>("U16", -1, false, ""),
      scalar<E::kU8>("U8", -1, false, ""),
      scalar<E::kBool>("BOOL", -1, false, ""),
      block<E::kQ4_0, ggml::dequantize_q4_0, kQK, 18>("Q4_0", 2),
      block<E::kQ4_1, ggml::dequantize_q4_1, kQK, 20>("Q4_1", 3),
      block<E::kQ5_0, ggml::dequantize_q5_0, kQK, 22>("Q5_0", 6),
      block<E::kQ5_1, ggml::dequantize_q5_1, kQK, 24>("Q5_1", 7),
      block<E::kQ8_0, ggml::dequantize_q8_0, kQK, 34>("Q8_0", 8),
      block<E::kQ2_K, ggml::dequantize_q2_k, kQKK, 84>("Q2_K", 10),
      block<E::kQ3_K, ggml::dequantize_q3_k, kQKK, 110>("Q3_K", 11),
      block<E::kQ4_K, ggml::dequantize_q4_k, kQKK, 144>("Q4_K", 12),
      block<E::kQ5_K, ggml::dequantize_q5_k, kQKK, 176>("Q5_K", 13),
      block<E::kQ6_K, ggml::dequantize_q6_k, kQKK, 210>("Q6_K", 14),
      block<E::kIQ4_NL, ggml::dequantize_iq4_nl, kQK, 18>("IQ4_NL", 20),
      block<E::kIQ4_XS, ggml::dequantize_iq4_xs, kQKK, 136>("IQ4_XS", 23),
  };
  return rows;
}

const ElementTraits& element_traits(ElementType t) {
  const auto& rows = element_type_table();
  const auto i = static_cast<size_t>(t);
  if (i >= rows.size() || rows[i].type != t) {
    throw_internal("element_traits: no row for type " + std::to_string(i));
  }
  return rows[i];
}

const ElementTraits* element_traits_of_ggml(uint32_t ggml_type) {
  for (const ElementTraits& r : element_type_table()) {
    if (r.ggml_type >= 0 && static_cast<uint32_t>(r.ggml_type) == ggml_type) return &r;
  }
  return nullptr;
}

const char* ggml_type_name(uint32_t ggml_type) {
  constexpr size_t n = sizeof kGgmlNames / sizeof kGgmlNames[0];
  return ggml_type < n ? kGgmlNames[ggml_type] : nullptr;
}

}  // namespace attn
