// The program's exit codes (docs/cli.md, "Exit codes"): the one place they
// are numbered. The library's errors carry a kind, not a number; the
// program maps the kind here.
#pragma once

#include "attn/error.h"

namespace attn {

enum ExitCode : int {
  kExitSuccess = 0,
  kExitCheckFailed = 1,  // --check (or attn diff --check) ran and found a difference
  kExitUsage = 2,        // a bad flag, a missing argument, conflicting options
  kExitInput = 3,        // invalid input data: parse error, bad shape, unknown key
  kExitFile = 4,         // cannot open, read or write a file
  kExitInternal = 70,    // a bug, or out of memory
};

inline ExitCode exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUsage:
      return kExitUsage;
    case ErrorKind::kInput:
      return kExitInput;
    case ErrorKind::kFile:
      return kExitFile;
    case ErrorKind::kInternal:
      break;
  }
  return kExitInternal;
}

}  // namespace attn
