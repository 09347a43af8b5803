// The text of the program's progress bar: a task's line, durations and
// sizes for people.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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
