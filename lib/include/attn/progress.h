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

}  // namespace attn
