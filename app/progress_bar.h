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
#include "commands/progress_text.h"

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
