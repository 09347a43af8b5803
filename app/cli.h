// The whole attn program as a function, so that main() stays one line and
// the flag fuzzer (tests/fuzz/fuzz_flags.cc) runs exactly what a user runs.
#pragma once

namespace attn::cli {

// Parses argv, runs the command and returns the exit code (0 success,
// 1 --check mismatch, 2 usage, 3 input, 4 file, 70 internal error); every
// error has been printed as one line on stderr by then.
int run_program(int argc, char** argv);

}  // namespace attn::cli
