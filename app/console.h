// The process's Console: data to stdout, diagnostics to stderr.
#pragma once

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "attn/file_io.h"
#include "attn/heatmap.h"
#include "commands/flags.h"
#include "commands/run.h"

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

// Whether stdout gets colour: --color always or never decide; auto colours
// a terminal that is not "dumb", unless NO_COLOR is set and not empty
// (no-color.org), and CLICOLOR_FORCE (set, not empty, not 0) colours a pipe
// too (so `... --color auto | less -R` can keep it).
inline bool use_color(ColorMode mode) {
  if (mode != ColorMode::kAuto) return mode == ColorMode::kAlways;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* force = std::getenv("CLICOLOR_FORCE");
  if (force && *force && std::string(force) != "0") return true;
  const char* term = std::getenv("TERM");
  return isatty(1) && !(term && std::string(term) == "dumb");
}

// Colour as use_color() says; the width from COLUMNS or the terminal.
inline TerminalStyle terminal_style(ColorMode mode) {
  TerminalStyle s;
  s.color = use_color(mode);
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
