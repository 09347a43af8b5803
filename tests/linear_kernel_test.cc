// The products with weights (lib/src/kernel/linear_kernel.h), in float32
// and float64, on every instruction set this CPU runs: against a plain sum
// in double over the same operands, for every layout and cell type the
// kernel reads with vectors (bfloat16, float32) or cell by cell (float16,
// float64, int8), shapes that fill whole panels and shapes that leave every
// kind of edge (rows, outputs, inputs past a block), several weights at
// once, any thread count; and a weight that is not finite is found
// wherever it is.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <tuple>
#include <type_traits>
#include <vector>

#include "attn/binary_array.h"
#include "isa_util.h"
#include "kernel/instruction_set.h"
#include "kernel/kernels.h"
#include "kernel/linear_kernel.h"

namespace attn {
namespace {

using kernel::Isa;
using kernel::LinearWeight;

using test::UseIsa;

std::vector<Isa> runnable() { return test::runnable_isas(); }

// A weight's cells in a file's bytes, and the floats they hold exactly.
struct Weight {
  std::vector<unsigned char> bytes;
  std::vector<float> values;  // row-major, as the file
  LinearWeight view;
};

void put_cell(unsigned char* p, ElementType t, float v) {
  switch (t) {
    case ElementType::kF32:
      std::memcpy(p, &v, 4);
      break;
    case ElementType::kF64: {
      const double d = v;
      std::memcpy(p, &d, 8);
      break;
    }
    case ElementType::kBF16: {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      const auto h = static_cast<uint16_t>(bits >> 16);  // v is a bfloat16 already
      std::memcpy(p, &h, 2);
      break;
    }
    case ElementType::kF16: {
      // v is a multiple of 2^-10 below 2: a normal float16.
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      uint16_t h = static_cast<uint16_t>((bits >> 16) & 0x8000);
      if (v != 0) {
        const int e = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
        h |= static_cast<uint16_t>((e << 10) | ((bits >> 13) & 0x3ff));
      }
      std::memcpy(p, &h, 2);
      break;
    }
    case ElementType::kI8: {
      const auto i = static_cast<int8_t>(v);
      std::memcpy(p, &i, 1);
      break;
    }
    default:
      FAIL() << "no writer for this type";
  }
}

// Values every type holds exactly: small multiples of 1/16 (integers for
// int8).
Weight make_weight(int64_t rows, int64_t cols, ElementType t, bool out_major, std::mt19937& rng) {
  Weight w;
  const int size = element_size(t);
  w.bytes.resize(static_cast<size_t>(rows * cols * size));
  w.values.resize(static_cast<size_t>(rows * cols));
  std::uniform_int_distribution<int> d(-24, 24);
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float v = t == ElementType::kI8 ? static_cast<float>(d(rng)) : d(rng) / 16.0f;
    w.values[static_cast<size_t>(i)] = v;
    put_cell(w.bytes.data() + i * size, t, v);
  }
  w.view.data = w.bytes.data();
  w.view.type = t;
  w.view.rows = rows;
  w.view.cols = cols;
  w.view.out_major = out_major;
  return w;
}

template <class T>
std::vector<T> make_x(int64_t n, int64_t in, std::mt19937& rng) {
  std::vector<T> x(static_cast<size_t>(n * in));
  std::uniform_real_distribution<float> d(-1, 1);
  for (T& v : x) v = d(rng);
  return x;
}

// The largest |got - want| over y, want summed in double; the sums of in
// products below 1.5 in size agree to a few roundings of T.
template <class T>
double worst(const std::vector<T>& x, int64_t n, int64_t in, const std::vector<Weight>& ws,
             const std::vector<T>& y, int64_t ldy) {
  double out = 0;
  int64_t column = 0;
  for (const Weight& w : ws) {
    const int64_t outs = w.view.outputs();
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t o = 0; o < outs; ++o) {
        double want = 0;
        for (int64_t k = 0; k < in; ++k) {
          const float c = w.view.out_major ? w.values[static_cast<size_t>(o * in + k)]
                                           : w.values[static_cast<size_t>(k * outs + o)];
          want += static_cast<double>(x[static_cast<size_t>(r * in + k)]) * c;
        }
        const double got = y[static_cast<size_t>(r * ldy + column + o)];
        out = std::max(out, std::fabs(got - want));
      }
    }
    column += outs;
  }
  return out;
}

struct Shape {
  int64_t n, in;
  std::vector<int64_t> outs;
};

template <class T>
void matches_a_plain_sum() {
  const std::vector<Shape> shapes = {
      {1, 1, {1}},         {3, 5, {7}},     {8, 16, {48}},       {13, 40, {50, 17}},
      {128, 64, {96, 16}}, {17, 300, {49}}, {24, 512, {33, 65}}, {6, 257, {8, 1, 95}},
      {31, 96, {200}},     {2, 1000, {3}},
  };
  const ElementType types[] = {ElementType::kBF16, ElementType::kF32, ElementType::kF16,
                               ElementType::kF64, ElementType::kI8};
  std::mt19937 rng(7);
  for (Isa isa : runnable()) {
    const UseIsa use(isa);
    for (const Shape& s : shapes) {
      for (ElementType t : types) {
        for (bool out_major : {true, false}) {
          std::vector<Weight> ws;
          std::vector<LinearWeight> views;
          int64_t total = 0;
          for (int64_t out : s.outs) {
            ws.push_back(out_major ? make_weight(out, s.in, t, true, rng)
                                   : make_weight(s.in, out, t, false, rng));
            total += out;
          }
          for (const Weight& w : ws) views.push_back(w.view);
          const std::vector<T> x = make_x<T>(s.n, s.in, rng);
          for (int threads : {1, 2, 5}) {
            const int64_t ldy = total + 3;
            std::vector<T> y(static_cast<size_t>(s.n * ldy), T(-7));
            ASSERT_TRUE(kernel::linear(x.data(), s.n, s.in, views.data(),
                                       static_cast<int>(views.size()), y.data(), ldy, threads));
            const double eps = std::is_same_v<T, float> ? 1e-6 : 1e-15;
            const double bound = eps * static_cast<double>(s.in) * 2.0;
            EXPECT_LE(worst(x, s.n, s.in, ws, y, ldy), bound)
                << kernel::isa_key(isa) << " n " << s.n << " in " << s.in << " type "
                << static_cast<int>(t) << (out_major ? " [out][in]" : " [in][out]") << " threads "
                << threads << (std::is_same_v<T, float> ? " float" : " double");
            // The padding columns of y are not written.
            for (int64_t r = 0; r < s.n; ++r) {
              for (int64_t c = total; c < ldy; ++c) {
                ASSERT_EQ(y[static_cast<size_t>(r * ldy + c)], T(-7));
              }
            }
          }
        }
      }
    }
  }
}

TEST(LinearKernel, MatchesAPlainSumOnEveryLayoutTypeAndEdgeInFloat) {
  matches_a_plain_sum<float>();
}
TEST(LinearKernel, MatchesAPlainSumOnEveryLayoutTypeAndEdgeInDouble) {
  matches_a_plain_sum<double>();
}

TEST(LinearKernel, TheResultDoesNotDependOnTheThreads) {
  std::mt19937 rng(11);
  const Weight w = make_weight(200, 700, ElementType::kBF16, true, rng);
  const std::vector<float> x = make_x<float>(37, 700, rng);
  std::vector<float> one(37 * 200), many(37 * 200);
  ASSERT_TRUE(kernel::linear(x.data(), 37, 700, &w.view, 1, one.data(), 200, 1));
  ASSERT_TRUE(kernel::linear(x.data(), 37, 700, &w.view, 1, many.data(), 200, 7));
  EXPECT_EQ(one, many);
  const std::vector<double> xd = make_x<double>(37, 700, rng);
  std::vector<double> one_d(37 * 200), many_d(37 * 200);
  ASSERT_TRUE(kernel::linear(xd.data(), 37, 700, &w.view, 1, one_d.data(), 200, 1));
  ASSERT_TRUE(kernel::linear(xd.data(), 37, 700, &w.view, 1, many_d.data(), 200, 7));
  EXPECT_EQ(one_d, many_d);
}

TEST(LinearKernel, FindsACellThatIsNotFinite) {
  std::mt19937 rng(5);
  for (Isa isa : runnable()) {
    const UseIsa use(isa);
    for (ElementType t : {ElementType::kBF16, ElementType::kF32, ElementType::kF64}) {
      for (bool out_major : {true, false}) {
        for (int64_t at : {int64_t{0}, int64_t{37}, int64_t{50 * 70 - 1}}) {
          Weight w =
              out_major ? make_weight(50, 70, t, true, rng) : make_weight(70, 50, t, false, rng);
          put_cell(w.bytes.data() + at * element_size(t), t, at == 37 ? std::nanf("") : INFINITY);
          const std::vector<float> x = make_x<float>(9, 70, rng);
          std::vector<float> y(9 * 50);
          EXPECT_FALSE(kernel::linear(x.data(), 9, 70, &w.view, 1, y.data(), 50, 2))
              << kernel::isa_key(isa) << " cell " << at;
          const std::vector<double> xd = make_x<double>(9, 70, rng);
          std::vector<double> yd(9 * 50);
          EXPECT_FALSE(kernel::linear(xd.data(), 9, 70, &w.view, 1, yd.data(), 50, 2))
              << kernel::isa_key(isa) << " cell " << at << " double";
        }
      }
    }
  }
  // A float64 past float32's range is not finite as a float, and is as a
  // double.
  Weight w = make_weight(4, 4, ElementType::kF64, true, rng);
  const double big = 1e300;
  std::memcpy(w.bytes.data() + 8 * 5, &big, 8);
  const std::vector<float> x = make_x<float>(2, 4, rng);
  std::vector<float> y(2 * 4);
  EXPECT_FALSE(kernel::linear(x.data(), 2, 4, &w.view, 1, y.data(), 4, 1));
  const std::vector<double> xd = make_x<double>(2, 4, rng);
  std::vector<double> yd(2 * 4);
  EXPECT_TRUE(kernel::linear(xd.data(), 2, 4, &w.view, 1, yd.data(), 4, 1));
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// GGUF's blocks (Q8_0: a float16 scale and 32 int8; Q4_0: a float16 scale
// and 32 nibbles), packed on every instruction set and edge of the panel:
// the product is that of the cells they decode to, exactly as ggml's
// dequantization gives them (decode_cells), in float and in double.
TEST(LinearKernel, QuantizedBlocksMultiplyAsTheCellsTheyDecodeTo) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> byte(0, 255);
  // Each type with its block's bytes and cells; the rows' lengths are
  // whole blocks.
  const std::tuple<ElementType, int, int64_t> types[] = {{ElementType::kQ8_0, 34, 32},
                                                         {ElementType::kQ4_0, 18, 32},
                                                         {ElementType::kQ5_0, 22, 32},
                                                         {ElementType::kQ6_K, 210, 256},
                                                         {ElementType::kQ4_K, 144, 256}};
  for (const auto& [type, block_bytes, block_cells] : types) {
    for (const auto& [outs, blocks_per_row] :
         {std::pair<int64_t, int64_t>{1, 1}, {37, 2}, {64, 16}, {50, 9}, {17, 25}}) {
      const int64_t in = blocks_per_row * block_cells;
      std::vector<unsigned char> blocks(static_cast<size_t>(outs * blocks_per_row * block_bytes));
      // Random bytes, the float16 scales (where the type keeps them) set to
      // 2^-7 .. 2^-4: finite and exact.
      std::vector<int> scales = {0};
      if (type == ElementType::kQ4_K) scales = {0, 2};
      if (type == ElementType::kQ6_K) scales = {208};
      for (size_t b = 0; b < blocks.size(); b += static_cast<size_t>(block_bytes)) {
        for (int i = 0; i < block_bytes; ++i) blocks[b + static_cast<size_t>(i)] = byte(rng);
        for (int at : scales) {
          const uint16_t scale = static_cast<uint16_t>(0x2000 + 0x400 * (byte(rng) % 4));
          std::memcpy(&blocks[b + static_cast<size_t>(at)], &scale, 2);
        }
      }
      std::vector<float> values(static_cast<size_t>(outs * in));
      std::vector<double> row(static_cast<size_t>(in));
      for (int64_t o = 0; o < outs; ++o) {
        decode_cells(blocks.data() + cells_bytes(type, static_cast<uint64_t>(o * in)), type, in,
                     row.data());
        for (int64_t k = 0; k < in; ++k) {
          values[static_cast<size_t>(o * in + k)] = static_cast<float>(row[static_cast<size_t>(k)]);
        }
      }
      LinearWeight quantized{blocks.data(), type, outs, in, true};
      LinearWeight plain{reinterpret_cast<const unsigned char*>(values.data()), ElementType::kF32,
                         outs, in, true};
      for (Isa isa : runnable()) {
        const UseIsa use(isa);
        const std::vector<float> x = make_x<float>(13, in, rng);
        std::vector<float> yq(static_cast<size_t>(13 * outs)), yp(yq.size());
        ASSERT_TRUE(kernel::linear(x.data(), 13, in, &quantized, 1, yq.data(), outs, 2));
        ASSERT_TRUE(kernel::linear(x.data(), 13, in, &plain, 1, yp.data(), outs, 2));
        EXPECT_EQ(yq, yp) << kernel::isa_key(isa) << " " << outs << "x" << in;
        const std::vector<double> xd = make_x<double>(5, in, rng);
        std::vector<double> dq(static_cast<size_t>(5 * outs)), dp(dq.size());
        ASSERT_TRUE(kernel::linear(xd.data(), 5, in, &quantized, 1, dq.data(), outs, 1));
        ASSERT_TRUE(kernel::linear(xd.data(), 5, in, &plain, 1, dp.data(), outs, 1));
        EXPECT_EQ(dq, dp) << kernel::isa_key(isa) << " " << outs << "x" << in;
      }
    }
  }
}

}  // namespace
}  // namespace attn
