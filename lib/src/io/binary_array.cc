#include "attn/binary_array.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "io/cells.h"

namespace attn {

namespace {

uint64_t load_le(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

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

// IEEE binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits.
double half(uint32_t h) {
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  const uint32_t e = (h >> 10) & 0x1f, f = h & 0x3ff;
  if (e == 0) return sign * std::ldexp(static_cast<double>(f), -24);
  if (e == 31) return f ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
  return sign * std::ldexp(static_cast<double>(f | 0x400), static_cast<int>(e) - 25);
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

struct Name {
  ElementType type;
  const char* name;
  int size;
};

constexpr Name kNames[] = {
    {ElementType::kF64, "F64", 8},        {ElementType::kF32, "F32", 4},
    {ElementType::kF16, "F16", 2},        {ElementType::kBF16, "BF16", 2},
    {ElementType::kF8E4M3, "F8_E4M3", 1}, {ElementType::kF8E5M2, "F8_E5M2", 1},
    {ElementType::kI64, "I64", 8},        {ElementType::kI32, "I32", 4},
    {ElementType::kI16, "I16", 2},        {ElementType::kI8, "I8", 1},
    {ElementType::kU64, "U64", 8},        {ElementType::kU32, "U32", 4},
    {ElementType::kU16, "U16", 2},        {ElementType::kU8, "U8", 1},
    {ElementType::kBool, "BOOL", 1},
};

const Name& entry(ElementType t) {
  for (const Name& n : kNames) {
    if (n.type == t) return n;
  }
  return kNames[0];
}

}  // namespace

int element_size(ElementType t) { return entry(t).size; }

bool single_precision(ElementType t) {
  return t == ElementType::kF32 || t == ElementType::kF16 || t == ElementType::kBF16 ||
         t == ElementType::kF8E4M3 || t == ElementType::kF8E5M2;
}

const char* safetensors_dtype_name(ElementType t) { return entry(t).name; }

bool safetensors_dtype(std::string_view name, ElementType& out) {
  for (const Name& n : kNames) {
    if (name == n.name) {
      out = n.type;
      return true;
    }
  }
  return false;
}

double decode_cell(const unsigned char* p, ElementType t) {
  switch (t) {
    case ElementType::kF64: {
      const uint64_t b = load_le(p, 8);
      double x = 0;
      std::memcpy(&x, &b, sizeof x);
      return x;
    }
    case ElementType::kF32:
      return float_bits(static_cast<uint32_t>(load_le(p, 4)));
    case ElementType::kF16:
      return half(static_cast<uint32_t>(load_le(p, 2)));
    case ElementType::kBF16:
      // bfloat16 is the upper half of a float32.
      return float_bits(static_cast<uint32_t>(load_le(p, 2)) << 16);
    case ElementType::kF8E4M3:
      return f8_e4m3(p[0]);
    case ElementType::kF8E5M2:
      // e5m2 is the upper byte of a binary16.
      return half(static_cast<uint32_t>(p[0]) << 8);
    case ElementType::kI64:
      return as_signed<int64_t, uint64_t>(load_le(p, 8));
    case ElementType::kI32:
      return as_signed<int32_t, uint32_t>(load_le(p, 4));
    case ElementType::kI16:
      return as_signed<int16_t, uint16_t>(load_le(p, 2));
    case ElementType::kI8:
      return as_signed<int8_t, uint8_t>(p[0]);
    case ElementType::kU64:
      return static_cast<double>(load_le(p, 8));
    case ElementType::kU32:
      return static_cast<double>(load_le(p, 4));
    case ElementType::kU16:
      return static_cast<double>(load_le(p, 2));
    case ElementType::kU8:
      return p[0];
    case ElementType::kBool:
      // Any non-zero byte is true, as NumPy and PyTorch read it.
      return p[0] ? 1.0 : 0.0;
  }
  return 0;
}

Tensor<double> BinaryArray::to_tensor(const std::string& name, CellKind kind) const {
  std::vector<double> v(static_cast<size_t>(size()));
  const int step = element_size(type);
  const unsigned char* p = data;
  for (size_t i = 0; i < v.size(); ++i, p += step) v[i] = decode_cell(p, type);
  detail::check_cells(v, shape, name, kind, single_precision(type));
  return Tensor<double>(shape, std::move(v));
}

}  // namespace attn
