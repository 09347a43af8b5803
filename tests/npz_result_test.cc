// The .npz writer and NumPy's string arrays, through the library: what a
// result saved as .npz is made of. The result itself (-o FILE.npz, read
// back by attn heatmap and attn diff): npz_result_cli_test.cc.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "attn/error.h"
#include "attn/npy.h"
#include "attn/npz.h"
#include "test_util.h"

namespace attn {
namespace {

using test::read_text;
using test::temp_dir;

TEST(NpyStrings, RoundTripUnicodeAndEmptyStrings) {
  const std::vector<std::string> labels = {"The", "Ġcat", "▁sat", "它", "sweet😀", ""};
  const std::string bytes = format_npy_strings(labels, false);
  EXPECT_NE(bytes.find("'descr': '<U6'"), std::string::npos);  // the longest has 6 code points
  EXPECT_EQ(bytes.size() % 4, 0u);
  EXPECT_EQ(parse_npy_strings(bytes, "l.npy"), labels);
  const std::string scalar = format_npy_strings({"a title"}, true);
  EXPECT_NE(scalar.find("'shape': ()"), std::string::npos);
  EXPECT_EQ(parse_npy_strings(scalar, "t.npy"), std::vector<std::string>{"a title"});
}

TEST(NpyStrings, OtherArraysAndBadCodePointsAreRefused) {
  auto error_of = [](const std::string& bytes) {
    try {
      parse_npy_strings(bytes, "s.npy");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of(format_npy(Tensor<double>({2}, Values<double>{1, 2}), DType::kF64)),
            "s.npy: expected a string array ('<U…'), got '<f8'");
  std::string bad = format_npy_strings({"ab"}, false);
  bad[bad.size() - 2] = '\x11';  // the second code point becomes 0x110062
  EXPECT_EQ(error_of(bad), "s.npy[0]: invalid code point 1114210 in a string");
  std::string cut = format_npy_strings({"abc"}, false);
  cut.resize(cut.size() - 4);
  EXPECT_EQ(error_of(cut),
            "s.npy: the header declares shape (1,) of '<U3' but 8 bytes of data follow it");
}

TEST(NpzWriter, ArchivesReadBackMemberByMember) {
  const std::string a = format_npy(Tensor<double>({2}, Values<double>{0.5, -1}), DType::kF64);
  const std::string b = format_npy_strings({"x", "y"}, false);
  const std::string bytes = format_npz({{"a", a}, {"labels", b}});
  EXPECT_EQ(bytes, format_npz({{"a", a}, {"labels", b}}));  // no clock in it
  const NpzArchive z = NpzArchive::from_bytes(FileBytes::from_string(bytes), "z.npz");
  ASSERT_EQ(z.members().size(), 2u);
  EXPECT_EQ(z.members()[0].name, "a");
  EXPECT_EQ(std::string(z.member("a").view()), a);
  EXPECT_EQ(std::string(z.member("labels").view()), b);
}

}  // namespace
}  // namespace attn
