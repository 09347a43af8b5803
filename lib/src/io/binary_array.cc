#include "attn/binary_array.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "attn/error.h"
#include "io/cells.h"
#include "kernel/parallel.h"

namespace attn {

namespace {

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
};

constexpr Name kNames[] = {
    {ElementType::kF64, "F64"},        {ElementType::kF32, "F32"},
    {ElementType::kF16, "F16"},        {ElementType::kBF16, "BF16"},
    {ElementType::kF8E4M3, "F8_E4M3"}, {ElementType::kF8E5M2, "F8_E5M2"},
    {ElementType::kI64, "I64"},        {ElementType::kI32, "I32"},
    {ElementType::kI16, "I16"},        {ElementType::kI8, "I8"},
    {ElementType::kU64, "U64"},        {ElementType::kU32, "U32"},
    {ElementType::kU16, "U16"},        {ElementType::kU8, "U8"},
    {ElementType::kBool, "BOOL"},
};

const Name& entry(ElementType t) {
  for (const Name& n : kNames) {
    if (n.type == t) return n;
  }
  return kNames[0];
}

}  // namespace

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

namespace {

// One cell of a type known at compile time: the loops below decode a run
// of cells with one dispatch on the type, not one per cell.
template <ElementType T>
double decode(const unsigned char* p) {
  using E = ElementType;
  if constexpr (T == E::kF64) {
    const uint64_t b = detail::load_le(p, 8);
    double x = 0;
    std::memcpy(&x, &b, sizeof x);
    return x;
  } else if constexpr (T == E::kF32) {
    return float_bits(static_cast<uint32_t>(detail::load_le(p, 4)));
  } else if constexpr (T == E::kF16) {
    return half(static_cast<uint32_t>(detail::load_le(p, 2)));
  } else if constexpr (T == E::kBF16) {
    // bfloat16 is the upper half of a float32.
    return float_bits(static_cast<uint32_t>(detail::load_le(p, 2)) << 16);
  } else if constexpr (T == E::kF8E4M3) {
    return f8_e4m3(p[0]);
  } else if constexpr (T == E::kF8E5M2) {
    // e5m2 is the upper byte of a binary16.
    return half(static_cast<uint32_t>(p[0]) << 8);
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
    // BOOL: any non-zero byte is true, as NumPy and PyTorch read it.
    return p[0] ? 1.0 : 0.0;
  }
}

template <ElementType T>
void decode_run(const unsigned char* p, int64_t n, double* out) {
  constexpr int64_t step = element_size(T);
  for (int64_t i = 0; i < n; ++i, p += step) out[i] = decode<T>(p);
}

// Calls f with the type as a compile-time constant (an integral_constant).
template <class F>
auto dispatch(ElementType t, F&& f) {
  using E = ElementType;
  switch (t) {
    case E::kF64:
      return f(std::integral_constant<E, E::kF64>{});
    case E::kF32:
      return f(std::integral_constant<E, E::kF32>{});
    case E::kF16:
      return f(std::integral_constant<E, E::kF16>{});
    case E::kBF16:
      return f(std::integral_constant<E, E::kBF16>{});
    case E::kF8E4M3:
      return f(std::integral_constant<E, E::kF8E4M3>{});
    case E::kF8E5M2:
      return f(std::integral_constant<E, E::kF8E5M2>{});
    case E::kI64:
      return f(std::integral_constant<E, E::kI64>{});
    case E::kI32:
      return f(std::integral_constant<E, E::kI32>{});
    case E::kI16:
      return f(std::integral_constant<E, E::kI16>{});
    case E::kI8:
      return f(std::integral_constant<E, E::kI8>{});
    case E::kU64:
      return f(std::integral_constant<E, E::kU64>{});
    case E::kU32:
      return f(std::integral_constant<E, E::kU32>{});
    case E::kU16:
      return f(std::integral_constant<E, E::kU16>{});
    case E::kU8:
      return f(std::integral_constant<E, E::kU8>{});
    case E::kBool:
      break;
  }
  return f(std::integral_constant<E, E::kBool>{});
}

}  // namespace

double decode_cell(const unsigned char* p, ElementType t) {
  return dispatch(t, [&](auto type) { return decode<decltype(type)::value>(p); });
}

void decode_cells(const unsigned char* p, ElementType t, int64_t n, double* out) {
  dispatch(t, [&](auto type) { decode_run<decltype(type)::value>(p, n, out); });
}

Tensor<double> BinaryArray::to_tensor(const std::string& name, CellKind kind,
                                      int64_t max_elements) const {
  detail::check_element_count(shape, size(), name, max_elements);
  Values<double> v(static_cast<size_t>(size()));  // every cell decoded below
  // A layer's weights are millions of cells: decoded in chunks on every
  // thread (the chunks are disjoint, so the cells are the same).
  constexpr int64_t kChunk = int64_t{1} << 18;
  const int64_t chunks = (size() + kChunk - 1) / kChunk;
  kernel::parallel_for(chunks, kernel::hardware_threads(), [&](int64_t c, int) {
    const int64_t from = c * kChunk, n = std::min(kChunk, size() - from);
    decode_cells(data + from * element_size(type), type, n, v.data() + from);
  });
  keep.check_intact(name);  // before the cells are checked: zeros from a cut file
  check_bools(name);
  detail::check_cells(v, shape, name, kind, single_precision(type));
  return Tensor<double>(shape, std::move(v));
}

void BinaryArray::check_bools(const std::string& name) const {
  if (type != ElementType::kBool) return;
  for (int64_t i = 0; i < size(); ++i) {
    if (data[i] > 1) {
      throw_input(detail::cell_place(name, shape, i),
                  "a bool cell holds the byte " + std::to_string(data[i]) + "; bools are 0 or 1");
    }
  }
}

}  // namespace attn
