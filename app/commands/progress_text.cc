#include "commands/progress_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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
