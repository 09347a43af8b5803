// The process's Console: data to stdout, diagnostics to stderr.
#pragma once

#include "attn/file_io.h"
#include "attn/run.h"

namespace attn::cli {

class StdConsole : public Console {
 public:
  void out(std::string_view text) override { write_fd(1, text, "<stdout>"); }
  void warn(std::string_view line) override {
    std::string s = "attn: warning: ";
    s += line;
    s += '\n';
    write_fd(2, s, "<stderr>");
  }
  void info(std::string_view text) override { write_fd(2, text, "<stderr>"); }
};

}  // namespace attn::cli
