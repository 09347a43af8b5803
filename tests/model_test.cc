// Real-model files read by the library: every float kind of a binary
// array's cells, safetensors files (their tensors, metadata, byte budget and
// every prefix refused), .npz members stored and deflated, and the panels
// of a stack of attention weights [layers][batch][heads][q][k]. The
// program on the tiny models of data/models (attn run --checkpoint DIR
// --layer N against PyTorch's layer outputs): model_cli_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "attn/binary_array.h"
#include "attn/error.h"
#include "attn/heatmap.h"
#include "attn/npy.h"
#include "attn/npz.h"
#include "attn/safetensors.h"
#include "model_util.h"
#include "test_util.h"

namespace attn {
namespace {

using test::load_npy5;
using test::max_diff;
using test::model;
using test::Piece;
using test::read_text;
using test::safetensors_bytes;
using test::source_path;

std::string le16(std::initializer_list<uint16_t> v) {
  std::string s;
  for (uint16_t x : v) {
    s += static_cast<char>(x & 0xff);
    s += static_cast<char>(x >> 8);
  }
  return s;
}

TEST(BinaryCells, DecodeEveryFloatKind) {
  auto cell = [](ElementType t, std::string bytes) {
    return decode_cell(reinterpret_cast<const unsigned char*>(bytes.data()), t);
  };
  EXPECT_EQ(cell(ElementType::kBF16, le16({0x3F80})), 1.0);
  EXPECT_EQ(cell(ElementType::kBF16, le16({0xC040})), -3.0);
  EXPECT_EQ(cell(ElementType::kF16, le16({0x3C00})), 1.0);
  EXPECT_EQ(cell(ElementType::kF16, le16({0x0001})), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(cell(ElementType::kF16, le16({0x7BFF})), 65504.0);
  EXPECT_TRUE(std::isinf(cell(ElementType::kF16, le16({0xFC00}))));
  EXPECT_TRUE(std::isnan(cell(ElementType::kF16, le16({0x7E00}))));
  EXPECT_EQ(cell(ElementType::kF8E4M3, std::string(1, '\x38')), 1.0);
  EXPECT_EQ(cell(ElementType::kF8E4M3, std::string(1, '\x7E')), 448.0);  // its largest
  EXPECT_TRUE(std::isnan(cell(ElementType::kF8E4M3, std::string(1, '\x7F'))));
  EXPECT_EQ(cell(ElementType::kF8E5M2, std::string(1, '\x3C')), 1.0);
  EXPECT_EQ(cell(ElementType::kI8, std::string(1, '\xFF')), -1.0);
  EXPECT_EQ(cell(ElementType::kI16, le16({0x8000})), -32768.0);
  EXPECT_EQ(cell(ElementType::kU16, le16({0x8000})), 32768.0);
  EXPECT_EQ(cell(ElementType::kBool, std::string(1, '\x02')), 1.0);
}

TEST(Safetensors, ReadsTensorsAndMetadataInDataOrder) {
  const std::string bytes = safetensors_bytes(
      {{"w", "BF16", {2}, le16({0x3F80, 0x4000})}, {"b", "F16", {1, 1}, le16({0x3C00})}},
      "\"__metadata__\":{\"format\":\"pt\"}");
  const SafetensorsFile f = SafetensorsFile::from_bytes(bytes, "m.safetensors");
  ASSERT_EQ(f.tensors().size(), 2u);
  EXPECT_EQ(f.tensors()[0].name, "w");
  EXPECT_EQ(f.metadata().at("format"), "pt");
  const Tensor<double> w = f.read(f.get("w"), CellKind::kFinite);
  EXPECT_EQ(w.shape(), (Shape{2}));
  EXPECT_EQ(w[0], 1.0);
  EXPECT_EQ(w[1], 2.0);
  EXPECT_EQ(f.view(f.get("b")).at(0), 1.0);
  EXPECT_EQ(f.read(f.get("b"), CellKind::kFinite).shape(), (Shape{1, 1}));
}

TEST(Safetensors, TensorOverTheByteBudgetIsRefusedBeforeReading) {
  const SafetensorsFile f = SafetensorsFile::from_bytes(
      safetensors_bytes({{"w", "BF16", {4}, le16({1, 2, 3, 4})}}), "m.safetensors");
  const std::string e = test::error_of([&] { f.read(f.get("w"), CellKind::kFinite, 7); });
  EXPECT_NE(e.find("m.safetensors:w: 8 bytes, more than --max-input-bytes 7"), std::string::npos)
      << e;
}

TEST(Safetensors, EveryPrefixOfAFileIsRefusedCleanly) {
  const std::string bytes = safetensors_bytes(
      {{"a", "F32", {2}, std::string(8, '\0')}, {"b", "I64", {1}, std::string(8, '\1')}});
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      SafetensorsFile::from_bytes(bytes.substr(0, n), "cut.safetensors");
      ADD_FAILURE() << "a prefix of " << n << " bytes was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("cut.safetensors", 0), 0u) << e.what();
    }
  }
}

TEST(Npz, StoredAndDeflatedMembersReadAsNumPyWroteThem) {
  const NpzArchive a = NpzArchive::open(model("tiny-llama/attentions.npz"));
  ASSERT_EQ(a.members().size(), 1u);
  EXPECT_EQ(a.members()[0].name, "attentions");
  EXPECT_EQ(a.members()[0].method, 8);  // np.savez_compressed
  const Tensor<double> from_npz =
      view_npy(a.member("attentions"), "npz", 5).to_tensor("npz", CellKind::kFinite);
  EXPECT_EQ(max_diff(from_npz, load_npy5(model("tiny-llama/attentions.npy"))), 0.0);
  // np.savez stores members as they are: they are views of the archive.
  const NpzArchive stored = NpzArchive::open(source_path("tests/bad/npz_two_arrays.npz"));
  EXPECT_EQ(stored.members()[1].method, 0);
  const Tensor<double> b = parse_npy(stored.member("b").view(), "b", CellKind::kFinite).values;
  EXPECT_EQ(b.values(), Values<double>(4, 1.0));
}

BinaryArray array_of(const Tensor<double>& t, std::string& bytes) {
  bytes.assign(static_cast<size_t>(t.size()) * 8, '\0');
  std::memcpy(bytes.data(), t.data(), bytes.size());
  BinaryArray a;
  a.type = ElementType::kF64;
  a.shape = t.shape();
  a.data = reinterpret_cast<const unsigned char*>(bytes.data());
  return a;
}

TEST(Stack, PanelsAreTheChosenSlicesAndTheirBlockMeans) {
  // [2 layers][2 batch][3 heads][5][5], cell = its own flat index.
  Tensor<double> t(Shape{2, 2, 3, 5, 5});
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>(i);
  std::string bytes;
  const BinaryArray a = array_of(t, bytes);
  StackChoice c;
  c.layer = 1;
  c.batch = 1;
  c.head = 2;
  HeatmapData d = heatmap_from_stack(a, c, "s");
  ASSERT_EQ(d.rows, 5);
  const int64_t at = ((1 * 2 + 1) * 3 + 2) * 25;
  for (int64_t i = 0; i < 25; ++i) EXPECT_EQ(d.values[i], static_cast<double>(at + i));
  // The model view of batch 0: 2 layers × 3 heads, each reduced 2×2 (5 → 3).
  c = StackChoice();
  c.max_side = 3;
  d = heatmap_from_stack(a, c, "s");
  EXPECT_EQ(d.batch, 2);
  EXPECT_EQ(d.heads, 3);
  EXPECT_EQ(d.rows, 3);
  EXPECT_TRUE(d.head_average);
  const int64_t base = (1 * 2 * 3 + 1) * 25;  // layer 1, batch 0, head 1
  const double* p = d.values + (1 * 3 + 1) * 9;
  EXPECT_EQ(p[0], base + (0 + 1 + 5 + 6) / 4.0);
  EXPECT_EQ(p[2], base + (4 + 9) / 2.0);  // the edge block holds 2 cells
  EXPECT_EQ(p[8], base + 24.0);           // the corner holds one
  c.reduce = Reduce::kMax;
  d = heatmap_from_stack(a, c, "s");
  EXPECT_EQ(d.values[(1 * 3 + 1) * 9], base + 6.0);
  c.head = 3;
  EXPECT_NE(test::error_of([&] {
              heatmap_from_stack(a, c, "s");
            }).find("--head 3: out of range; the stack has 3 heads (0 to 2)"),
            std::string::npos);
}

}  // namespace
}  // namespace attn
