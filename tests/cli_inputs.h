// Inputs of the program's tests of limits and files (limits_cli_test.cc,
// files_cli_test.cc): the blog example and CSVs made to a size.
#pragma once

#include <string>

#include "test_util.h"

namespace attn::test {

inline std::string sweet() { return source_path("data/examples/sweet.json"); }

// A CSV of n one-feature rows: small on disk, n x n weights.
inline std::string rows_csv(const std::string& name, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += std::to_string(i % 5) + "\n";
  return write_temp(name, s);
}

}  // namespace attn::test
