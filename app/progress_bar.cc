#include "progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace attn::cli {

namespace {

// Work shorter than this never shows a bar; redraws are this far apart.
constexpr auto kShowAfter = std::chrono::milliseconds(1000);
constexpr auto kRedrawEvery = std::chrono::milliseconds(100);

int stderr_width() {
  winsize ws{};
  if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  if (const char* cols = std::getenv("COLUMNS")) {
    const int n = std::atoi(cols);
    if (n >= 20 && n <= 1000) return n;
  }
  return 80;
}

// The bar is a courtesy: a failed write to stderr is ignored.
void put(const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(2, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

TerminalProgress::TerminalProgress(std::chrono::milliseconds show_after)
    : start_(Clock::now()), task_start_(start_), show_after_(show_after) {}

TerminalProgress::~TerminalProgress() { erase(); }

void TerminalProgress::erase() {
  std::lock_guard<std::mutex> lock(mu_);
  if (shown_ == 0) return;
  put("\r" + std::string(shown_, ' ') + "\r");
  shown_ = 0;
}

void TerminalProgress::update(std::string_view task, int64_t done, int64_t total,
                              ProgressUnit unit) {
  const Clock::time_point now = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (task != task_) {
      task_ = task;
      task_start_ = now;
      task_first_done_ = done;
    }
    const bool finished = total >= 0 && done >= total;
    if (!finished) {
      if (now - start_ < show_after_) return;
      if (shown_ > 0 && now - last_draw_ < kRedrawEvery) return;
      last_draw_ = now;
      // The first report comes after the first unit of work, so the rate is
      // measured from there: the time `done` units would take at that rate.
      const double since_first = std::chrono::duration<double>(now - task_start_).count();
      const int64_t measured = done - task_first_done_;
      const double seconds =
          measured > 0 ? since_first * static_cast<double>(done) / static_cast<double>(measured)
                       : 0.0;
      // One column short of the edge: some terminals wrap on the last one.
      std::string line = format_progress_line(task, done, total, unit, seconds, stderr_width() - 1);
      const size_t len = line.size();
      if (len < shown_) line += std::string(shown_ - len, ' ');
      put("\r" + line);
      shown_ = std::max(shown_, len);
      return;
    }
  }
  erase();
}

std::unique_ptr<TerminalProgress> progress_bar(bool quiet) {
  if (quiet || !isatty(2)) return nullptr;
  const char* term = std::getenv("TERM");
  if (term && std::string(term) == "dumb") return nullptr;
  auto delay = kShowAfter;
  if (const char* ms = std::getenv("ATTN_PROGRESS_DELAY_MS")) {
    delay = std::chrono::milliseconds(std::max(0, std::atoi(ms)));
  }
  return std::make_unique<TerminalProgress>(delay);
}

}  // namespace attn::cli
