#include "progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace attn {

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || seconds > 360000) return "--:--";
  const int64_t s = static_cast<int64_t>(std::ceil(seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%d:%02d:%02d", static_cast<int>(s / 3600),
                  static_cast<int>(s / 60 % 60), static_cast<int>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%d:%02d", static_cast<int>(s / 60), static_cast<int>(s % 60));
  }
  return buf;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  }
  return buf;
}

namespace {

std::string rate_text(double per_second, ProgressUnit unit) {
  if (unit == ProgressUnit::kBytes) return format_bytes(per_second) + "/s";
  char buf[32];
  std::snprintf(buf, sizeof buf, per_second >= 100 ? "%.0f/s" : "%.1f/s", per_second);
  return buf;
}

}  // namespace

std::string format_progress_line(std::string_view task, int64_t done, int64_t total,
                                 ProgressUnit unit, double seconds, int width) {
  const bool known = total > 0;
  done = std::max<int64_t>(done, 0);
  if (known) done = std::min(done, total);
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;

  // Everything after the bar: amount, rate, time left.
  std::string tail;
  if (known) {
    char pct[16];
    std::snprintf(pct, sizeof pct, "%3d%%",
                  static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total)));
    tail = unit == ProgressUnit::kBytes ? std::string(pct)
                                        : std::to_string(done) + "/" + std::to_string(total);
  } else {
    tail = unit == ProgressUnit::kBytes ? format_bytes(static_cast<double>(done))
                                        : std::to_string(done);
  }
  if (rate > 0) tail += "  " + rate_text(rate, unit);
  if (known) {
    tail += "  ETA " + (rate > 0 ? format_duration(static_cast<double>(total - done) / rate)
                                 : std::string("--:--"));
  }

  std::string name(task);
  const int fixed = static_cast<int>(tail.size()) + 2;  // two spaces before the tail
  int bar = known ? std::min(40, width - fixed - static_cast<int>(name.size()) - 3) : 0;
  if (bar < 10) bar = 0;  // too narrow: no bar rather than a useless one
  if (bar == 0) {
    // Cut the task name to fit; keep its end (the file name) readable.
    const int room = width - fixed;
    if (room < 4) return tail.substr(0, static_cast<size_t>(std::max(width, 0)));
    if (static_cast<int>(name.size()) > room) {
      name = "..." + name.substr(name.size() - static_cast<size_t>(room - 3));
    }
    return name + "  " + tail;
  }
  const int filled = static_cast<int>(static_cast<double>(bar) * static_cast<double>(done) /
                                      static_cast<double>(total));
  return name + " [" + std::string(static_cast<size_t>(filled), '#') +
         std::string(static_cast<size_t>(bar - filled), '.') + "]  " + tail;
}

}  // namespace attn

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
