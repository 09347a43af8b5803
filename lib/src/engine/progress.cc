#include "attn/progress.h"

#include <utility>

namespace attn {

ProgressFn progress_task(ProgressSink* sink, std::string task, ProgressUnit unit) {
  if (!sink) return {};
  return [sink, task = std::move(task), unit](int64_t done, int64_t total) {
    sink->update(task, done, total, unit);
  };
}

}  // namespace attn
