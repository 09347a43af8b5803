// The progress bar of the command line: draws the library's progress
// reports on stderr, only when stderr is a terminal, only once the work has
// taken more than a second, at most ten times a second, and erases itself
// when a task ends or the bar is destroyed (so errors and results start on a
// clean line).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "attn/progress.h"

namespace attn {

// The bar line for a task that has run for `seconds`, at most `width`
// columns (no newline, no terminal codes):
//   "reading big.json [#######.............]  35%  41.2 MiB/s  ETA 0:03"
//   "computing [###.......]  3/8  1.5/s  ETA 0:04"
//   "reading <stdin>  12.0 MiB  6.0 MiB/s"            (total unknown)
// The bar is dropped, then the task name cut, when the width is short.
std::string format_progress_line(std::string_view task, int64_t done, int64_t total,
                                 ProgressUnit unit, double seconds, int width);

// "0:07", "12:30", "1:02:03": a duration for people, seconds rounded up.
std::string format_duration(double seconds);

// "512 B", "3.0 KiB", "41.2 MiB", "1.5 GiB".
std::string format_bytes(double bytes);

}  // namespace attn

namespace attn::cli {

class TerminalProgress : public ProgressSink {
 public:
  explicit TerminalProgress(std::chrono::milliseconds show_after);
  ~TerminalProgress() override;
  void update(std::string_view task, int64_t done, int64_t total, ProgressUnit unit) override;
  void erase();

 private:
  using Clock = std::chrono::steady_clock;
  std::mutex mu_;
  Clock::time_point start_, task_start_, last_draw_;
  std::chrono::milliseconds show_after_;
  std::string task_;
  int64_t task_first_done_ = 0;  // done at the task's first report
  size_t shown_ = 0;             // columns of the line on screen (0: none)
};

// A bar for the process when stderr is a terminal and `quiet` is false;
// otherwise null (nothing is drawn, reports cost nothing). The bar waits a
// second before it shows; ATTN_PROGRESS_DELAY_MS changes that (tests use 0).
std::unique_ptr<TerminalProgress> progress_bar(bool quiet);

}  // namespace attn::cli
