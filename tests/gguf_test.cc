// The GGUF reader: what ggml's own writer wrote (tests/gguf/quant/types.gguf,
// made by tests/gguf/make_quant_cases.py through libggml), and every
// refusal of a hostile header, with its exact message, on files built here.
#include "io/gguf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attn/error.h"
#include "io/element_types.h"
#include "test_util.h"

namespace attn {
namespace {

using Type = GgufValue::Type;

std::string le(uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}
std::string u32(uint32_t v) { return le(v, 4); }
std::string u64(uint64_t v) { return le(v, 8); }
std::string str(const std::string& s) { return u64(s.size()) + s; }

// A GGUF file built field by field: keys, tensors (their data placed at
// the next multiple of the alignment unless an offset is given), and the
// header's counts and version as given.
struct Builder {
  uint32_t version = 3;
  uint64_t alignment = 32;
  std::string kv, infos, data;
  uint64_t n_kv = 0, n_tensors = 0;

  Builder& key(const std::string& name, Type t, const std::string& value) {
    kv += str(name) + u32(static_cast<uint32_t>(t)) + value;
    ++n_kv;
    return *this;
  }
  Builder& tensor(const std::string& name, const std::vector<uint64_t>& ne, uint32_t type,
                  const std::string& bytes, int64_t offset = -1) {
    while (data.size() % alignment) data += '\0';
    const uint64_t at = offset >= 0 ? static_cast<uint64_t>(offset) : data.size();
    if (offset < 0) data += bytes;
    infos += str(name) + u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) infos += u64(d);
    infos += u32(type) + u64(at);
    ++n_tensors;
    return *this;
  }
  std::string bytes() const {
    std::string s = "GGUF" + u32(version) + u64(n_tensors) + u64(n_kv) + kv + infos;
    if (n_tensors) {
      while (s.size() % alignment) s += '\0';
      s += data;
    }
    return s;
  }
};

GgufFile parse(const std::string& bytes) {
  return GgufFile::parse(FileBytes::from_string(bytes), "t.gguf");
}

std::string error_of(const std::string& bytes) {
  return test::error_of([&] { parse(bytes); });
}

std::string f32s(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

GgufFile types_file() { return GgufFile::open(test::source_path("tests/gguf/quant/types.gguf")); }

TEST(Gguf, ReadsEveryValueTypeGgmlsWriterWrites) {
  const GgufFile f = types_file();
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.get("test.u8").as_int(), 200);
  EXPECT_EQ(f.get("test.i8").as_int(), -100);
  EXPECT_EQ(f.get("test.u16").as_int(), 60000);
  EXPECT_EQ(f.get("test.i16").as_int(), -30000);
  EXPECT_EQ(f.get("test.u32").as_int(), 4000000000);
  EXPECT_EQ(f.get("test.i32").as_int(), -2000000000);
  EXPECT_EQ(f.get("test.f32").as_number(), static_cast<double>(0.1f));
  EXPECT_TRUE(f.get("test.f32").is_float());
  EXPECT_TRUE(f.get("test.bool").as_bool());
  EXPECT_EQ(f.get("test.string").as_string(), "h\xC3\xA9llo");
  EXPECT_EQ(f.get("test.u64").as_int(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(f.get("test.i64").as_int(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f.get("test.f64").as_number(), 0.1);
  EXPECT_EQ(f.get("test.u32").type(), Type::kU32);
  EXPECT_TRUE(f.get("test.u32").is_integer());
  EXPECT_FALSE(f.get("test.bool").is_integer());

  EXPECT_EQ(f.get("test.array.u8").numbers(), (std::vector<double>{0, 255}));
  EXPECT_EQ(f.get("test.array.i8").numbers(), (std::vector<double>{-128, 127}));
  EXPECT_EQ(f.get("test.array.u32").numbers(), (std::vector<double>{0, 4294967295.0}));
  EXPECT_EQ(f.get("test.array.f32").numbers(), (std::vector<double>{1.5, -0.25}));
  EXPECT_EQ(f.get("test.array.bool").numbers(), (std::vector<double>{1, 0}));
  EXPECT_EQ(f.get("test.array.f64").numbers(), (std::vector<double>{2.5, -1e300}));
  const GgufValue& i64 = f.get("test.array.i64");
  EXPECT_EQ(i64.element_type(), Type::kI64);
  EXPECT_EQ(i64.size(), 2u);
  EXPECT_EQ(i64.at(0).as_int(), -(int64_t{1} << 53));
  EXPECT_EQ(i64.at(1).place(), f.name() + ": test.array.i64[1]");
  EXPECT_EQ(f.get("test.array.u64").at(1).as_int(), int64_t{1} << 53);
  EXPECT_TRUE(f.get("test.array.bool").at(0).as_bool());
  const GgufValue& words = f.get("test.array.str");
  EXPECT_EQ(words.strings(),
            (std::vector<std::string>{"<s>", "\xE2\x96\x81the", "", "\xE5\xAE\x83"}));
  EXPECT_EQ(words.at(3).as_string(), "\xE5\xAE\x83");
  EXPECT_EQ(words.describe(), "an array of 4 strings");
  EXPECT_EQ(f.get("test.array.i16").describe(), "an array of 2 i16");
  // In the order of the file, as ggml wrote them.
  EXPECT_EQ(f.metadata()[0].first, "test.u8");
  EXPECT_EQ(f.metadata().back().first, "test.array.str");
}

TEST(Gguf, ReadsEveryTensorTypeGgmlsWriterWrites) {
  const GgufFile f = types_file();
  ASSERT_EQ(f.tensors().size(), 15u);
  EXPECT_EQ(f.data_offset() % 32, 0u);
  for (const char* name : {"f32", "f16", "bf16"}) {
    const GgufTensor& t = f.tensor(name);
    EXPECT_EQ(t.shape, (Shape{2, 256})) << name;
    const Tensor<double> v = f.read(t, CellKind::kFinite);
    for (int64_t i = 0; i < 512; ++i) ASSERT_EQ(v.data()[i], (i - 256) / 8.0) << name << " " << i;
  }
  int blocks = 0;
  for (const ElementTraits& e : element_type_table()) {
    if (e.block_cells == 1) continue;
    std::string name = e.name;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const GgufTensor& t = f.tensor(name);
    EXPECT_EQ(t.type, e.type) << name;
    EXPECT_EQ(t.shape, (Shape{2, 256})) << name;
    EXPECT_EQ(t.bytes, static_cast<uint64_t>(512 / e.block_cells * e.block_bytes)) << name;
    EXPECT_EQ(t.offset % 32, 0u) << name;
    const std::string ref = test::read_text(test::source_path("tests/gguf/quant/" + name + ".f32"));
    const Tensor<double> v = f.read(t, CellKind::kExtended);
    for (size_t i = 0; i < 512; ++i) {
      float want = 0;
      std::memcpy(&want, ref.data() + 4 * i, 4);
      ASSERT_TRUE(v.data()[i] == want || (std::isnan(v.data()[i]) && std::isnan(want)))
          << name << " " << i;
    }
    ++blocks;
  }
  EXPECT_EQ(blocks, 12);
}

TEST(Gguf, ReadsVersion2AndItsAlignment) {
  Builder b;
  b.version = 2;
  b.alignment = 64;
  b.key("general.alignment", Type::kU32, u32(64));
  b.tensor("a", {2}, 0, f32s({1, 2})).tensor("b", {3}, 0, f32s({3, 4, 5}));
  const GgufFile f = parse(b.bytes());
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  EXPECT_EQ(f.tensor("b").offset, 64u);
  EXPECT_EQ(f.read(f.tensor("b"), CellKind::kFinite).data()[2], 5.0);
}

TEST(Gguf, ShapesAreGgmlsDimensionsReversed) {
  Builder b;
  std::vector<float> cells(24);
  for (size_t i = 0; i < cells.size(); ++i) cells[i] = static_cast<float>(i);
  b.tensor("w", {4, 3, 2}, 0, f32s(cells));
  const GgufFile f = parse(b.bytes());
  EXPECT_EQ(f.tensor("w").shape, (Shape{2, 3, 4}));
  EXPECT_EQ(f.view(f.tensor("w")).at(5), 5.0);  // [0][1][1]: ne0 is the fastest
}

TEST(Gguf, ReadsNestedArrays) {
  // [[1, 2], [3]] of u32, and [[["a"]]].
  const std::string inner = u32(static_cast<uint32_t>(Type::kU32));
  const std::string value = u32(static_cast<uint32_t>(Type::kArray)) + u64(2) + inner + u64(2) +
                            u32(1) + u32(2) + inner + u64(1) + u32(3);
  const std::string deep = u32(static_cast<uint32_t>(Type::kArray)) + u64(1) +
                           u32(static_cast<uint32_t>(Type::kArray)) + u64(1) +
                           u32(static_cast<uint32_t>(Type::kString)) + u64(1) + str("a");
  Builder b;
  b.key("nested", Type::kArray, value).key("deep", Type::kArray, deep);
  const GgufFile f = parse(b.bytes());
  const GgufValue& v = f.get("nested");
  EXPECT_EQ(v.element_type(), Type::kArray);
  EXPECT_EQ(v.describe(), "an array of 2 arrays");
  EXPECT_EQ(v.at(0).numbers(), (std::vector<double>{1, 2}));
  EXPECT_EQ(v.at(1).at(0).as_int(), 3);
  EXPECT_EQ(v.at(1).at(0).place(), "t.gguf: nested[1][0]");
  EXPECT_EQ(f.get("deep").at(0).at(0).strings(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(test::error_of([&] { v.numbers(); }),
            "t.gguf: nested: expected an array of numbers, got an array of 2 arrays");
}

TEST(Gguf, AccessorsOfAnotherTypeNameTheKey) {
  Builder b;
  b.key("s", Type::kString, str("x")).key("n", Type::kU32, u32(1));
  const GgufFile f = parse(b.bytes());
  EXPECT_EQ(test::error_of([&] { f.get("s").as_int(); }),
            "t.gguf: s: expected an integer, got a string");
  EXPECT_EQ(test::error_of([&] { f.get("n").as_string(); }),
            "t.gguf: n: expected a string, got a u32");
  EXPECT_EQ(test::error_of([&] { f.get("n").as_bool(); }), "t.gguf: n: expected a bool, got a u32");
  EXPECT_EQ(test::error_of([&] { f.get("n").strings(); }),
            "t.gguf: n: expected an array of strings, got a u32");
  EXPECT_EQ(test::error_of([&] { f.get("n").at(0); }), "t.gguf: n: expected an array, got a u32");
  EXPECT_EQ(test::error_of([&] { f.get("nope"); }), "t.gguf: no metadata key \"nope\"");
  EXPECT_EQ(f.find("nope"), nullptr);
  EXPECT_EQ(f.get("n").as_number(), 1.0);
}

TEST(Gguf, AnAbsentTensorSuggestsTheNearest) {
  Builder b;
  b.tensor("token_embd.weight", {2}, 0, f32s({1, 2}));
  const GgufFile f = parse(b.bytes());
  EXPECT_EQ(f.find_tensor("token_embd"), nullptr);
  EXPECT_EQ(test::error_of([&] { f.tensor("token_emb.weight"); }),
            "t.gguf: no tensor \"token_emb.weight\" (the file holds 1 tensor); did you mean "
            "\"token_embd.weight\"?");
}

TEST(Gguf, ReadIsBoundedByBytesAndElements) {
  Builder b;
  b.tensor("w", {4}, 0, f32s({1, 2, 3, 4}));
  const GgufFile f = parse(b.bytes());
  EXPECT_EQ(test::error_of([&] { f.read(f.tensor("w"), CellKind::kFinite, 15); }),
            "t.gguf:w: 16 bytes, more than --max-input-bytes 15; raise --max-input-bytes");
  EXPECT_EQ(test::error_of([&] { f.read(f.tensor("w"), CellKind::kFinite, 100, 3); }),
            "t.gguf:w: shape [4] holds 4 elements, more than --max-elements 3; raise "
            "--max-elements");
}

TEST(Gguf, AFileThatCannotBeOpenedIsAFileError) {
  try {
    GgufFile::open("/nonexistent/m.gguf");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kFile);
  }
}

// --- refusals -------------------------------------------------------------

TEST(Gguf, RefusesWhatIsNoGgufOfAVersionAttnReads) {
  EXPECT_EQ(error_of("GGU"), "t.gguf: not a GGUF file: it does not start with \"GGUF\"");
  EXPECT_EQ(error_of("{\"a\": 1}"), "t.gguf: not a GGUF file: it does not start with \"GGUF\"");
  EXPECT_EQ(error_of("GGUF" + u32(1) + u32(0) + u32(0)),
            "t.gguf: GGUF version 1, which attn does not read (versions 2 and 3 only); convert "
            "the model again with a current llama.cpp");
  EXPECT_EQ(error_of("GGUF" + std::string("\0\0\0\3", 4) + u64(0) + u64(0)),
            "t.gguf: a big-endian GGUF file (its version reads as 50331648); attn reads "
            "little-endian files only");
  EXPECT_EQ(error_of("GGUF" + u32(4) + u64(0) + u64(0)),
            "t.gguf: GGUF version 4, which attn does not read (versions 2 and 3 only)");
  EXPECT_EQ(error_of("GGUF" + u32(0) + u64(0) + u64(0)),
            "t.gguf: GGUF version 0, which attn does not read (versions 2 and 3 only)");
  EXPECT_EQ(error_of("GGUF" + u32(3) + u64(0)),
            "t.gguf: truncated: the count of metadata keys needs 8 bytes at byte 16, but the "
            "file ends at byte 16");
}

TEST(Gguf, RefusesCountsTheBytesCannotHold) {
  EXPECT_EQ(error_of("GGUF" + u32(3) + u64(0) + u64(3) + std::string(20, 'x')),
            "t.gguf: the header counts 3 metadata keys, more than the 20 bytes after it can hold");
  EXPECT_EQ(error_of("GGUF" + u32(3) + u64(uint64_t{1} << 62) + u64(0)),
            "t.gguf: the header counts 4611686018427387904 tensors, more than the 0 bytes "
            "after it can hold");
}

TEST(Gguf, RefusesStringsAndArraysPastTheirLimits) {
  Builder b;
  b.key("k", Type::kString, u64(uint64_t{1} << 40));
  EXPECT_EQ(error_of(b.bytes()),
            "t.gguf: k: a string is 1099511627776 bytes long, more than attn's limit of 16777216");
  Builder c;
  c.key("k", Type::kString, u64(10) + "abc");
  EXPECT_EQ(error_of(c.bytes()),
            "t.gguf: k: truncated: a string needs 10 bytes at byte 45, but the file ends at "
            "byte 48");
  Builder d;
  d.key("k", Type::kArray, u32(0) + u64(uint64_t{1} << 30));
  EXPECT_EQ(error_of(d.bytes()),
            "t.gguf: k: an array of 1073741824 elements, more than attn's limit of 16777216");
  Builder e;
  e.key("k", Type::kArray, u32(4) + u64(1000) + u32(1));
  EXPECT_EQ(error_of(e.bytes()),
            "t.gguf: k: truncated: an array of 1000 u32 needs at least 4000 bytes at byte 49, "
            "but the file ends at byte 53");
  Builder f;
  std::string nest;
  // Eight arrays of one array, the last holding an empty array of u8:
  // nine arrays nested.
  for (int i = 0; i < 8; ++i) nest += u32(static_cast<uint32_t>(Type::kArray)) + u64(1);
  f.key("k", Type::kArray, nest + u32(0) + u64(0));
  EXPECT_EQ(error_of(f.bytes()),
            "t.gguf: k[0][0][0][0][0][0][0][0]: arrays nested more than 8 "
            "deep, attn's limit");
}

TEST(Gguf, RefusesBadValues) {
  EXPECT_EQ(error_of(Builder().key("k", static_cast<Type>(13), u32(0)).bytes()),
            "t.gguf: k: unknown value type 13 (GGUF's types are 0 to 12)");
  EXPECT_EQ(error_of(Builder().key("k", Type::kU64, u64(~uint64_t{0})).bytes()),
            "t.gguf: k: the u64 18446744073709551615 is larger than attn reads (2^63 - 1)");
  EXPECT_EQ(
      error_of(Builder().key("k", Type::kArray, u32(10) + u64(1) + u64(~uint64_t{0})).bytes()),
      "t.gguf: k[0]: the u64 18446744073709551615 is larger than attn reads (2^63 - 1)");
  EXPECT_EQ(error_of(Builder().key("k", Type::kBool, std::string(1, '\2')).bytes()),
            "t.gguf: k: a bool holds the byte 2; bools are 0 or 1");
  EXPECT_EQ(error_of(Builder().key("k", Type::kU8, "x").key("k", Type::kU8, "y").bytes()),
            "t.gguf: key \"k\" appears twice");
  EXPECT_EQ(error_of(Builder().key("", Type::kU8, "x").bytes()), "t.gguf: key 0 has an empty name");
  EXPECT_EQ(error_of(Builder().key("k", Type::kU32, "x").bytes()),
            "t.gguf: k: truncated: a u32 needs 4 bytes at byte 37, but the file ends at byte 38");
}

TEST(Gguf, RefusesABadAlignment) {
  EXPECT_EQ(error_of(Builder().key("general.alignment", Type::kU64, u64(32)).bytes()),
            "t.gguf: general.alignment: must be a u32, got a u64");
  EXPECT_EQ(error_of(Builder().key("general.alignment", Type::kU32, u32(48)).bytes()),
            "t.gguf: general.alignment: 48 is not a power of two");
  EXPECT_EQ(error_of(Builder().key("general.alignment", Type::kU32, u32(0)).bytes()),
            "t.gguf: general.alignment: 0 is not a power of two");
}

TEST(Gguf, RefusesBadTensorInfo) {
  const std::string four = f32s({1, 2, 3, 4});
  EXPECT_EQ(error_of(Builder().tensor("w", {1, 1, 1, 1, 4}, 0, four).bytes()),
            "t.gguf: tensor \"w\": 5 dimensions; GGUF tensors have 1 to 4");
  EXPECT_EQ(error_of(Builder().tensor("w", {}, 0, four).bytes()),
            "t.gguf: tensor \"w\": 0 dimensions; GGUF tensors have 1 to 4");
  EXPECT_EQ(error_of(Builder().tensor("w", {4, 0}, 0, four).bytes()),
            "t.gguf: tensor \"w\": dimension 1 is 0; every one must be at least 1");
  EXPECT_EQ(
      error_of(Builder().tensor("w", {uint64_t{1} << 32, uint64_t{1} << 32}, 0, four).bytes()),
      "t.gguf: tensor \"w\": its dimensions hold more than 2^63 - 1 cells");
  EXPECT_EQ(error_of(Builder().tensor("w", {256}, 16, four).bytes()),
            "t.gguf: tensor \"w\": IQ2_XXS (type 16) is not one attn reads; attn reads F32, F16, "
            "BF16, F64, I8, I16, I32, I64, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, "
            "Q6_K, IQ4_NL and IQ4_XS");
  EXPECT_EQ(error_of(Builder().tensor("w", {4}, 99, four).bytes()),
            "t.gguf: tensor \"w\": type 99 is not a ggml type");
  EXPECT_EQ(
      error_of(Builder().tensor("w", {100}, 12, four).bytes()),
      "t.gguf: tensor \"w\": rows of 100 cells are not whole blocks of Q4_K (256 cells each)");
  EXPECT_EQ(error_of(Builder().tensor("w", {4}, 0, four, 8).bytes()),
            "t.gguf: tensor \"w\": offset 8 is not a multiple of the alignment 32");
  EXPECT_EQ(error_of(Builder().tensor("w", {4}, 0, four).tensor("w", {4}, 0, four).bytes()),
            "t.gguf: tensor \"w\" appears twice");
  EXPECT_EQ(error_of(Builder().tensor("", {4}, 0, four).bytes()),
            "t.gguf: tensor 0 has an empty name");
}

TEST(Gguf, RefusesTensorsPastTheDataOrOverlapping) {
  Builder b;
  b.tensor("w", {4}, 0, f32s({1, 2}));
  EXPECT_EQ(error_of(b.bytes()),
            "t.gguf: tensor \"w\": its 16 bytes at offset 0 of the data reach past the end of the "
            "file (the data section holds 8 bytes)");
  Builder c;
  c.tensor("a", {16}, 0, std::string(64, '\0')).tensor("b", {4}, 0, "", 32);
  EXPECT_EQ(error_of(c.bytes()),
            "t.gguf: tensor \"b\": bytes 32 to 48 of the data overlap tensor \"a\" (bytes 0 to "
            "64)");
}

}  // namespace
}  // namespace attn
