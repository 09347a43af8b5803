// Python for the tests that check attn's text against Python's own (repr(),
// the emitted PyTorch programs): shared by escape_test.cc (the library) and
// escape_cli_test.cc (the program).
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn::test {

inline bool python_available() {
  return std::system("/usr/bin/python3 -c '' >/dev/null 2>&1") == 0;
}

// Runs a Python script with arguments under /usr/bin/python3.
inline Run python(const std::string& script, const std::vector<std::string>& args = {}) {
  static int n = 0;
  const std::string base = temp_dir() + "/py" + std::to_string(n++);
  const std::string file = write_temp("py" + std::to_string(n) + ".py", script);
  std::string cmd = "/usr/bin/python3 " + quote(file);
  for (const std::string& a : args) cmd += " " + quote(a);
  return run_redirected(cmd, base + ".out", base + ".err");
}

}  // namespace attn::test
