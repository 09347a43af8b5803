// Progress of long work (reading a large file, computing many heads,
// running a batch of inputs): the library reports "done of total" to a
// ProgressSink; the command-line front end draws it as a bar on a terminal
// and ignores it everywhere else. Reports are cheap and never print.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace attn {

enum class ProgressUnit { kItems, kBytes };

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // `done` of `total` units of `task` ("reading big.json", "computing");
  // total < 0 when unknown (stdin). done == total ends the task. Called
  // from the thread doing the work, possibly often.
  virtual void update(std::string_view task, int64_t done, int64_t total, ProgressUnit unit) = 0;
};

// What a single piece of work reports to: (done, total). May be empty.
using ProgressFn = std::function<void(int64_t done, int64_t total)>;

// A ProgressFn reporting to `sink` under the name `task`; empty when sink
// is null, so callers test `if (fn)` and pay nothing without a sink.
ProgressFn progress_task(ProgressSink* sink, std::string task,
                         ProgressUnit unit = ProgressUnit::kItems);

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
