// The table of cell types (io/element_types.h) and the dequantization of
// ggml's block types, held bit for bit to ggml's own floats: the files in
// tests/gguf/quant were written by tests/gguf/make_quant_cases.py through
// libggml (ggml_quantize_chunk, then the type's to_float).
#include "io/element_types.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include "attn/binary_array.h"
#include "io/ggml_blocks.h"
#include "test_util.h"

namespace attn {
namespace {

std::string file_bytes(const std::string& rel) {
  return test::read_text(test::source_path("tests/gguf/quant/" + rel));
}

std::vector<uint32_t> float_bits(const std::string& bytes) {
  std::vector<uint32_t> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

uint32_t bits(float f) {
  uint32_t b = 0;
  std::memcpy(&b, &f, 4);
  return b;
}

uint64_t bits(double d) {
  uint64_t b = 0;
  std::memcpy(&b, &d, 8);
  return b;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const unsigned char* u8(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

TEST(ElementTypes, RowsFollowTheEnumerationAndGgmlsSizes) {
  const auto& rows = element_type_table();
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(rows[i].type), i) << rows[i].name;
  }
  EXPECT_EQ(rows.back().type, ElementType::kIQ4_XS);
  // ggml_type_size and ggml_blck_size of ggml's own table.
  struct Size {
    ElementType type;
    int ggml;
    int64_t cells, bytes;
  };
  const Size sizes[] = {
      {ElementType::kF32, 0, 1, 4},       {ElementType::kF16, 1, 1, 2},
      {ElementType::kBF16, 30, 1, 2},     {ElementType::kF64, 28, 1, 8},
      {ElementType::kI8, 24, 1, 1},       {ElementType::kI64, 27, 1, 8},
      {ElementType::kQ4_0, 2, 32, 18},    {ElementType::kQ4_1, 3, 32, 20},
      {ElementType::kQ5_0, 6, 32, 22},    {ElementType::kQ5_1, 7, 32, 24},
      {ElementType::kQ8_0, 8, 32, 34},    {ElementType::kQ2_K, 10, 256, 84},
      {ElementType::kQ3_K, 11, 256, 110}, {ElementType::kQ4_K, 12, 256, 144},
      {ElementType::kQ5_K, 13, 256, 176}, {ElementType::kQ6_K, 14, 256, 210},
      {ElementType::kIQ4_NL, 20, 32, 18}, {ElementType::kIQ4_XS, 23, 256, 136},
  };
  for (const Size& s : sizes) {
    const ElementTraits& e = element_traits(s.type);
    EXPECT_EQ(e.ggml_type, s.ggml) << e.name;
    EXPECT_EQ(e.block_cells, s.cells) << e.name;
    EXPECT_EQ(e.block_bytes, s.bytes) << e.name;
    EXPECT_EQ(element_traits_of_ggml(static_cast<uint32_t>(s.ggml)), &e) << e.name;
    EXPECT_STREQ(ggml_type_name(static_cast<uint32_t>(s.ggml)), e.name);
  }
}

TEST(ElementTypes, GgmlTypesAttnDoesNotReadHaveTheirNamesOnly) {
  EXPECT_STREQ(ggml_type_name(16), "IQ2_XXS");
  EXPECT_EQ(element_traits_of_ggml(16), nullptr);
  EXPECT_STREQ(ggml_type_name(39), "MXFP4");
  EXPECT_EQ(element_traits_of_ggml(39), nullptr);
  EXPECT_EQ(ggml_type_name(4), nullptr);  // Q4_2, removed
  EXPECT_EQ(ggml_type_name(43), nullptr);
  EXPECT_EQ(ggml_type_name(0xFFFFFFFFu), nullptr);
}

TEST(ElementTypes, BlockTypesAreNoSafetensorsDtype) {
  ElementType t = ElementType::kF64;
  EXPECT_TRUE(safetensors_dtype("BF16", t));
  EXPECT_EQ(t, ElementType::kBF16);
  EXPECT_FALSE(safetensors_dtype("Q4_0", t));
  EXPECT_STREQ(safetensors_dtype_name(ElementType::kQ4_K), "Q4_K");
  EXPECT_TRUE(single_precision(ElementType::kQ8_0));
  EXPECT_FALSE(single_precision(ElementType::kF64));
}

TEST(ElementTypes, CellsBytesCountsWholeBlocks) {
  EXPECT_EQ(cells_bytes(ElementType::kF32, 10), 40u);
  EXPECT_EQ(cells_bytes(ElementType::kQ8_0, 64), 68u);
  EXPECT_EQ(cells_bytes(ElementType::kQ6_K, 512), 420u);
  EXPECT_EQ(block_cells(ElementType::kIQ4_NL), 32);
  EXPECT_EQ(element_size(ElementType::kQ4_K), 144);
}

// Every block of every type, as ggml's to_float gives it: the same bits,
// NaN payloads included, as floats and as doubles.
TEST(ElementTypes, EveryBlockTypeDequantizesAsGgmlBitForBit) {
  int types = 0;
  for (const ElementTraits& e : element_type_table()) {
    if (e.block_cells == 1) continue;
    ++types;
    const std::string name = lower(e.name);
    const std::string blocks = file_bytes(name + ".blocks");
    const std::vector<uint32_t> want = float_bits(file_bytes(name + ".f32"));
    ASSERT_EQ(blocks.size() % static_cast<size_t>(e.block_bytes), 0u) << name;
    const int64_t n = static_cast<int64_t>(blocks.size()) / e.block_bytes * e.block_cells;
    ASSERT_EQ(want.size(), static_cast<size_t>(n)) << name;
    ASSERT_GE(n / e.block_cells, 84) << name;

    std::vector<float> got(static_cast<size_t>(n));
    e.to_float(u8(blocks), got.data(), n);
    std::vector<double> wide(static_cast<size_t>(n));
    e.to_double(u8(blocks), wide.data(), n);
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<size_t>(i);
      float ref = 0;
      std::memcpy(&ref, &want[k], 4);
      if (bits(got[k]) != want[k] || bits(wide[k]) != bits(static_cast<double>(ref))) {
        if (++wrong <= 3) {
          ADD_FAILURE() << name << " cell " << i << " (block " << i / e.block_cells << "): ggml "
                        << ref << " (0x" << std::hex << want[k] << "), attn " << got[k] << " (0x"
                        << bits(got[k]) << std::dec << ")";
        }
      }
    }
    EXPECT_EQ(wrong, 0) << name;
  }
  EXPECT_EQ(types, 12);
}

TEST(ElementTypes, EveryHalfWidensAsGgmlBitForBit) {
  const std::vector<uint32_t> want = float_bits(file_bytes("f16.f32"));
  ASSERT_EQ(want.size(), 65536u);
  for (uint32_t h = 0; h < 65536; ++h) {
    ASSERT_EQ(bits(ggml::fp16_to_fp32(static_cast<uint16_t>(h))), want[h]) << std::hex << h;
    const unsigned char cell[2] = {static_cast<unsigned char>(h),
                                   static_cast<unsigned char>(h >> 8)};
    float f = 0;
    element_traits(ElementType::kF16).to_float(cell, &f, 1);
    ASSERT_EQ(bits(f), want[h]) << std::hex << h;
  }
}

// make_quant_cases.py checks that ggml's bf16 is the upper half of a
// float32 for every one of the 65536; so is attn's.
TEST(ElementTypes, EveryBfloat16IsTheUpperHalfOfAFloat) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const unsigned char cell[2] = {static_cast<unsigned char>(h),
                                   static_cast<unsigned char>(h >> 8)};
    float f = 0;
    element_traits(ElementType::kBF16).to_float(cell, &f, 1);
    ASSERT_EQ(bits(f), h << 16) << std::hex << h;
  }
}

TEST(ElementTypes, DecodeCellsEndsInsideABlock) {
  const std::string blocks = file_bytes("q8_0.blocks");
  std::vector<double> all(64), part(40);
  decode_cells(u8(blocks), ElementType::kQ8_0, 64, all.data());
  decode_cells(u8(blocks), ElementType::kQ8_0, 40, part.data());
  for (size_t i = 0; i < part.size(); ++i) EXPECT_EQ(bits(part[i]), bits(all[i])) << i;
  EXPECT_EQ(bits(decode_cell(u8(blocks), ElementType::kQ8_0)), bits(all[0]));
}

TEST(ElementTypes, ACellOfABlockTypeDecodesItsBlock) {
  const std::string blocks = file_bytes("q4_k.blocks");
  std::vector<double> all(512);
  decode_cells(u8(blocks), ElementType::kQ4_K, 512, all.data());
  BinaryArray a;
  a.type = ElementType::kQ4_K;
  a.shape = {2, 256};
  a.data = u8(blocks);
  for (int64_t i : {0, 1, 255, 256, 300, 511}) {
    EXPECT_EQ(bits(a.at(i)), bits(all[static_cast<size_t>(i)])) << i;
  }
  const Tensor<double> t = a.to_tensor("q.gguf:w", CellKind::kExtended);
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(bits(t.data()[i]), bits(all[i])) << i;
}

}  // namespace
}  // namespace attn
