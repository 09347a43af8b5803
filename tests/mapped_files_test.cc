// Memory-mapped inputs cut short while they are read (another program
// truncates or rewrites the file): an input error naming the file, not
// SIGBUS. Through the program: Files.ATruncatedSafetensorsGivesExitThree-
// NamingTheFile in files_cli_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "attn/binary_array.h"
#include "attn/error.h"
#include "attn/file_io.h"
#include "attn/npy.h"
#include "attn/safetensors.h"
#include "test_util.h"

namespace attn {
namespace {

using test::temp_dir;
using test::write_safetensors;

TEST(MappedFiles, ATensorCutShortWhileReadIsAnInputErrorNotSigbus) {
  const int64_t n = 1 << 18;  // 2 MiB of cells: many pages past the cut
  const std::string path = write_safetensors("cut.safetensors", n);
  const SafetensorsFile f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.view(f.get("w")).keep.mapped());
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);  // another program cuts the file
  const std::string e = test::error_of([&] { f.read(f.get("w"), CellKind::kFinite); });
  EXPECT_EQ(e, path +
                   ":w: the file was cut short while attn read it (another program truncated or "
                   "rewrote it); run again once the file is complete");
  // Reading again keeps failing: the zero pages are not data.
  EXPECT_EQ(test::error_of([&] { f.read(f.get("w"), CellKind::kFinite); }), e);
}

TEST(MappedFiles, ANpyViewCutShortIsAnInputError) {
  const std::string path = temp_dir() + "/cut.npy";
  Tensor<double> t(Shape{512, 512});
  for (int64_t i = 0; i < t.size(); ++i) t[i] = 1.0;
  std::ofstream(path, std::ios::binary) << format_npy(t, DType::kF64);
  const BinaryArray a = view_npy(map_file(path), path, 4);
  ASSERT_EQ(::truncate(path.c_str(), 8192), 0);
  const std::string e = test::error_of([&] { a.to_tensor(path, CellKind::kFinite); });
  EXPECT_NE(e.find("the file was cut short while attn read it"), std::string::npos) << e;
}

}  // namespace
}  // namespace attn
