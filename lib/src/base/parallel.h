// parallel_for: runs f(task) for task in [0, n) on up to `threads` threads.
// Tasks are handed out in order from an atomic counter; each task writes
// only its own outputs, so results do not depend on the thread count.
//
// The threads are kept between calls (parallel.cc): a run makes four or
// five calls, and starting and joining a thread per call cost tens of µs
// each, 7% of a 512-token run on two threads. A call made from inside a
// task runs its tasks on the calling thread; a call made while another
// thread of the program has the pool starts threads of its own, as before.
//
// Exported to the program (app/): a private header, not installed, that
// changes with the program (tests/floors_test.cc holds the rule).
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <type_traits>

namespace attn::kernel {

namespace pool {

using TaskFn = void (*)(void* f, int64_t task, int thread);

// Runs fn(f, i, id) for i in [0, n) on `threads` threads (at least 2, at
// most n), the calling one with id 0; rethrows the first exception a task
// threw, once every thread has stopped taking tasks.
void run_parallel(int64_t n, int threads, TaskFn fn, void* f);

// Whether this thread is running a task of run_parallel.
bool in_parallel_task();

}  // namespace pool

template <class F>
void parallel_for(int64_t n, int threads, F&& f) {
  threads = static_cast<int>(std::min<int64_t>(std::max(threads, 1), n));
  if (threads <= 1 || pool::in_parallel_task()) {
    for (int64_t i = 0; i < n; ++i) f(i, 0);
    return;
  }
  using Fn = std::remove_reference_t<F>;
  pool::run_parallel(
      n, threads, [](void* p, int64_t i, int id) { (*static_cast<Fn*>(p))(i, id); },
      const_cast<void*>(static_cast<const void*>(&f)));
}

// The number of hardware threads (at least 1), read once: glibc reads
// /sys/devices/system/cpu/online on every hardware_concurrency() call, and
// the forward pass asks before each of its products.
inline int hardware_threads() {
  static const int threads = [] {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
  }();
  return threads;
}

}  // namespace attn::kernel
