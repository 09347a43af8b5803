// The .npy reader and writer, in memory, on files written by NumPy
// (tests/npy/make_fixtures.py) and on hand-made headers.
#include "attn/npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "test_util.h"

namespace attn {
namespace {

using test::error_of;

std::string fixture(const std::string& name) {
  return test::read_text(test::source_path("tests/npy/" + name));
}

NpyArray read(const std::string& name, CellKind kind = CellKind::kFinite) {
  return parse_npy(fixture(name), name, kind);
}

std::string read_error(const std::string& name, CellKind kind = CellKind::kFinite) {
  return error_of([&] { parse_npy(fixture(name), name, kind); });
}

// A version 1.0 file with this header text (padded as NumPy pads) and data.
std::string npy_bytes(const std::string& header, const std::string& data = "") {
  std::string h = header;
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

std::string f8_data(std::initializer_list<double> values) {
  std::string out;
  for (double v : values) {
    char b[8];
    std::memcpy(b, &v, 8);  // the test machine is little endian (x86-64, arm64)
    out.append(b, 8);
  }
  return out;
}

// The fixtures' formulas: see make_fixtures.py.
Values<double> float_values(int64_t n) {
  Values<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(i - 5) * 0.25);
  return v;
}

Values<double> int_values(int64_t n, int64_t offset) {
  Values<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(i - offset));
  return v;
}

struct DtypeCase {
  const char* file;
  const char* dtype;
  Shape shape;
  Values<double> values;
};

TEST(NpyRead, EveryAcceptedDtypeAndRankFromNumpy) {
  const DtypeCase cases[] = {
      {"f8_2d.npy", "<f8", {3, 4}, float_values(12)},
      {"f4_2d.npy", "<f4", {3, 4}, float_values(12)},
      {"f8_4d.npy", "<f8", {2, 2, 2, 3}, float_values(24)},
      {"i4_1d.npy", "<i4", {5}, int_values(5, 5)},
      {"i8_3d.npy", "<i8", {2, 3, 4}, int_values(24, 5)},
      {"i1_1d.npy", "|i1", {4}, int_values(4, 5)},
      {"i2_1d.npy", "<i2", {4}, int_values(4, 5)},
      {"u1_1d.npy", "|u1", {4}, int_values(4, 0)},
      {"u2_1d.npy", "<u2", {4}, int_values(4, 0)},
      {"u4_1d.npy", "<u4", {4}, int_values(4, 0)},
      {"u8_1d.npy", "<u8", {4}, int_values(4, 0)},
      {"b1_2d.npy", "|b1", {3, 3}, {1, 0, 0, 1, 0, 0, 1, 0, 0}},
      {"f8_2d_v2.npy", "<f8", {3, 4}, float_values(12)},
      {"f8_2d_v3.npy", "<f8", {3, 4}, float_values(12)},
  };
  for (const DtypeCase& c : cases) {
    SCOPED_TRACE(c.file);
    const NpyArray a = read(c.file);
    EXPECT_EQ(a.dtype, c.dtype);
    EXPECT_EQ(a.values.shape(), c.shape);
    EXPECT_EQ(a.values.values(), c.values);
  }
}

TEST(NpyRead, VersionsTwoAndThreeUseFourByteHeaderLengths) {
  EXPECT_EQ(fixture("f8_2d_v2.npy")[6], 2);
  EXPECT_EQ(fixture("f8_2d_v3.npy")[6], 3);
  EXPECT_EQ(read("f8_2d_v3.npy").values.values(), read("f8_2d.npy").values.values());
}

TEST(NpyRead, BoolArraysAreMasks) {
  EXPECT_EQ(read("b1_2d.npy", CellKind::kBool).values.values(),
            (Values<double>{1, 0, 0, 1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(read("u1_1d.npy", CellKind::kCount).values.values(), (Values<double>{0, 1, 2, 3}));
}

TEST(NpyRead, ZeroSizedArraysAreLeftToProblemValidation) {
  const NpyArray a = read("empty.npy");
  EXPECT_EQ(a.values.shape(), (Shape{0, 3}));
  EXPECT_EQ(a.values.size(), 0);
}

TEST(NpyRead, NonFiniteValuesFollowTheCellKind) {
  EXPECT_EQ(read_error("nonfinite.npy"),
            "nonfinite.npy[3][1]: non-finite value nan is not allowed here");
  EXPECT_TRUE(std::isnan(read("nonfinite.npy", CellKind::kExtended).values[7]));
  const NpyArray bias = read("bias.npy", CellKind::kExtended);
  EXPECT_EQ(bias.values[1], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(read_error("bias.npy"), "bias.npy[0][1]: non-finite value -inf is not allowed here");
  EXPECT_EQ(read_error("nonfinite.npy", CellKind::kBool),
            "nonfinite.npy[0][0]: mask cells must be true/false or 0/1, got -1.25");
}

TEST(NpyRead, MaskAndCountCellsAreChecked) {
  EXPECT_EQ(read_error("mask_bad.npy", CellKind::kBool),
            "mask_bad.npy[1][0]: mask cells must be true/false or 0/1, got 2");
  EXPECT_EQ(read_error("i4_1d.npy", CellKind::kCount),
            "i4_1d.npy[0]: expected a non-negative integer, got -5");
  EXPECT_EQ(read_error("f4_2d.npy", CellKind::kCount),
            "f4_2d.npy[0][0]: expected a non-negative integer, got -1.25");
}

TEST(NpyRead, RefusedArraysSayWhatToDo) {
  EXPECT_EQ(read_error("big_endian.npy"),
            "big_endian.npy: big-endian data ('>f8') is not supported; use arr.astype('<f8')");
  EXPECT_EQ(read_error("object.npy"),
            "object.npy: object arrays (pickled data) cannot be read; save a numeric array, e.g. "
            "arr.astype(np.float64)");
  EXPECT_EQ(read_error("complex.npy"),
            "complex.npy: complex arrays ('<c16') are not supported; save arr.real");
  EXPECT_EQ(
      read_error("unicode.npy"),
      "unicode.npy: string arrays ('<U4') are not supported; attn reads numbers and booleans");
  EXPECT_EQ(read_error("structured.npy"),
            "structured.npy: structured arrays (record dtypes) are not supported; save each field "
            "as its own array");
  EXPECT_EQ(read_error("scalar.npy"),
            "scalar.npy: array of rank 0 (shape ()); attn reads arrays of rank 1 to 4");
  EXPECT_EQ(read_error("rank5.npy"),
            "rank5.npy: array of rank 5 (shape (1, 1, 1, 2, 2)); attn reads arrays of rank 1 to 4");
  EXPECT_EQ(read_error("not_npy.npy"),
            "not_npy.npy: not a .npy file (it does not start with the NumPy magic \\x93NUMPY)");
  EXPECT_EQ(read_error("two_arrays.npy"),
            "two_arrays.npy: 160 bytes follow the array of shape (2, 2); attn reads one array per "
            ".npy file (was np.save called twice on one file?)");
}

TEST(NpyRead, DeclaredSizesAreCheckedBeforeAllocating) {
  EXPECT_EQ(read_error("truncated.npy"),
            "truncated.npy: truncated: the header declares shape (100, 64) of '<f8' = 51200 bytes "
            "of data but only 4096 follow the header");
  // 8 TB declared by a 128-byte file: an error, not an allocation.
  EXPECT_EQ(read_error("huge_shape.npy"),
            "huge_shape.npy: truncated: the header declares shape (1000000000000,) of '<f8' = "
            "8000000000000 bytes of data but only 0 follow the header");
  // 2^96 elements: the product would overflow 64 bits.
  EXPECT_EQ(read_error("overflow_shape.npy"),
            "overflow_shape.npy: the header declares shape (4294967296, 4294967296, 4294967296) "
            "of '<f8', more data than any file can hold");
  // An empty array is read; its other axes are still bounded, since code
  // after the reader multiplies them (a product past 2^63 is undefined).
  const std::string zero_dim =
      npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 5), }");
  EXPECT_EQ(parse_npy(zero_dim, "z.npy", CellKind::kFinite).values.size(), 0);
  const std::string absurd_zero_dim =
      npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 9223372036854775807), }");
  EXPECT_EQ(test::error_of([&] { parse_npy(absurd_zero_dim, "z.npy", CellKind::kFinite); }),
            "z.npy: the header declares shape (0, 9223372036854775807) of '<f8', more data than "
            "any file can hold");
}

TEST(NpyHeader, AcceptsAnySpacingQuotingAndKeyOrder) {
  const std::string data = f8_data({1.5, -2, 3});
  for (const std::string header : {
           "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
           "{\"shape\":(3,),\"fortran_order\":False,\"descr\":\"<f8\"}",
           " { 'fortran_order' : False ,\n 'shape' : ( 3 , ) , 'descr' : '<f8' } ",
           "{'descr': '<f8', 'fortran_order': False, 'shape': (3L,)}",  // Python 2 writers
           "{'descr': '=f8', 'fortran_order': False, 'shape': (3,)}",
       }) {
    SCOPED_TRACE(header);
    const NpyArray a = parse_npy(npy_bytes(header, data), "h.npy", CellKind::kFinite);
    EXPECT_EQ(a.values.shape(), Shape{3});
    EXPECT_EQ(a.values.values(), (Values<double>{1.5, -2, 3}));
  }
}

TEST(NpyHeader, MalformedHeadersNameTheColumn) {
  auto err = [](const std::string& header) {
    return error_of([&] { parse_npy(npy_bytes(header), "h.npy", CellKind::kFinite); });
  };
  EXPECT_EQ(err("{'descr': '<f8', 'fortran_order': False}"),
            "h.npy: the .npy header has no 'shape' key");
  EXPECT_EQ(err("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'extra': 1}"),
            "h.npy: malformed .npy header at column 57: unexpected key 'extra' (a .npy header has "
            "'descr', 'fortran_order', 'shape')");
  EXPECT_EQ(err("{'descr': '<f8', 'fortran_order': False, 'shape': (3)}"),
            "h.npy: malformed .npy header at column 53: a one-dimensional shape is written (5,), "
            "not (5)");
  EXPECT_EQ(err("{'descr': '<f8', 'fortran_order': 0, 'shape': (3,)}"),
            "h.npy: malformed .npy header at column 35: expected True or False after "
            "'fortran_order'");
  EXPECT_EQ(err("{'descr': '<f8', 'fortran_order': False, 'shape': (-3,)}"),
            "h.npy: malformed .npy header at column 52: expected a non-negative integer in the "
            "shape");
  EXPECT_EQ(err("{'descr': '<f8', 'descr': '<f8'}"),
            "h.npy: malformed .npy header at column 18: duplicate key 'descr'");
  EXPECT_EQ(err("{'descr': '<f16', 'fortran_order': False, 'shape': (3,)}"),
            "h.npy: unsupported dtype '<f16'; attn reads bool, int8-64, uint8-64, float16, "
            "float32 and float64 arrays");
}

TEST(NpyHeader, VersionsAndLengthsAreChecked) {
  std::string v4 = npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (0,)}");
  v4[6] = 4;
  EXPECT_EQ(error_of([&] { parse_npy(v4, "v.npy", CellKind::kFinite); }),
            "v.npy: unsupported .npy format version 4.0 (attn reads 1.0, 2.0 and 3.0)");
  const std::string cut = fixture("f8_2d.npy").substr(0, 40);
  EXPECT_EQ(error_of([&] { parse_npy(cut, "c.npy", CellKind::kFinite); }),
            "c.npy: truncated: the .npy header declares 118 bytes but only 30 follow the preamble");
  EXPECT_EQ(
      error_of([&] { parse_npy(std::string("\x93NUMPY\x01", 7), "c.npy", CellKind::kFinite); }),
      "c.npy: truncated .npy header");
}

TEST(NpyWrite, BytesMatchWhatNumpyWrites) {
  // make_fixtures.py wrote these with np.save; our writer gives the same file.
  Tensor<double> t({3, 4}, float_values(12));
  EXPECT_EQ(format_npy(t, DType::kF64), fixture("f8_2d.npy"));
  EXPECT_EQ(format_npy(t, DType::kF32), fixture("f4_2d.npy"));
  Tensor<double> t4({2, 2, 2, 3}, float_values(24));
  EXPECT_EQ(format_npy(t4, DType::kF64), fixture("f8_4d.npy"));
  EXPECT_EQ(format_npy(read("X.npy").values, DType::kF64), fixture("X.npy"));
}

TEST(NpyWrite, RoundTripsEveryDoubleBitForBit) {
  const double inf = std::numeric_limits<double>::infinity();
  const Values<double> v = {0.1, -0.0, 1e-300,       4.9e-324, -1.7976931348623157e308,
                            inf, -inf, std::nan(""), 1.0 / 3.0};
  const Tensor<double> t({static_cast<int64_t>(v.size())}, v);
  const NpyArray back = parse_npy(format_npy(t, DType::kF64), "r.npy", CellKind::kExtended);
  EXPECT_EQ(back.dtype, "<f8");
  ASSERT_EQ(back.values.shape(), t.shape());
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(std::memcmp(&back.values.values()[i], &v[i], sizeof(double)), 0) << "at " << i;
  }
}

TEST(NpyWrite, Float32RoundsEachValueOnce) {
  const Tensor<double> t({2, 1, 1, 2}, Values<double>{0.1, 1.0 / 3.0, -2.5, 1e-40});
  const NpyArray back = parse_npy(format_npy(t, DType::kF32), "r.npy", CellKind::kFinite);
  EXPECT_EQ(back.dtype, "<f4");
  EXPECT_EQ(back.values.shape(), (Shape{2, 1, 1, 2}));
  for (int64_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(back.values[i], static_cast<double>(static_cast<float>(t[i])));
  }
}

TEST(NpyWrite, HeaderIsPaddedToSixtyFourBytes) {
  const std::string b = format_npy(Tensor<double>({1}, Values<double>{2}), DType::kF64);
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }";
  ASSERT_EQ(b.size(), 128u + 8u);
  EXPECT_EQ(b.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  EXPECT_EQ(b.substr(10, 118), dict + std::string(118 - 1 - dict.size(), ' ') + "\n");
  EXPECT_EQ(b.substr(128), f8_data({2}));
}

}  // namespace
}  // namespace attn
