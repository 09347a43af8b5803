// The process's Console: data to stdout, diagnostics to stderr.
#pragma once

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "attn/file_io.h"
#include "attn/heatmap.h"
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
  void error(std::string_view line) override {
    std::string s = "attn: error: ";
    for (char c : line) s += c == '\n' || c == '\r' ? ' ' : c;
    s += '\n';
    write_fd(2, s, "<stderr>");
  }
};

// Colour when stdout is a terminal that is not "dumb" and NO_COLOR is unset
// or empty (no-color.org); the width from COLUMNS or the terminal.
inline TerminalStyle terminal_style() {
  TerminalStyle s;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  s.color = isatty(1) && !(no_color && *no_color) && !(term && std::string(term) == "dumb");
  if (const char* cols = std::getenv("COLUMNS")) {
    const int n = std::atoi(cols);
    if (n >= 20 && n <= 1000) {
      s.width = n;
      return s;
    }
  }
  winsize ws{};
  if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) s.width = ws.ws_col;
  return s;
}

}  // namespace attn::cli
