// parallel_for: runs f(task) for task in [0, n) on up to `threads` threads.
// Tasks are handed out in order from an atomic counter; each task writes
// only its own outputs, so results do not depend on the thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace attn::kernel {

template <class F>
void parallel_for(int64_t n, int threads, F&& f) {
  threads = static_cast<int>(std::min<int64_t>(std::max(threads, 1), n));
  if (threads <= 1) {
    for (int64_t i = 0; i < n; ++i) f(i, 0);
    return;
  }
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  auto worker = [&](int id) {
    try {
      for (int64_t i = next++; i < n && !failed; i = next++) f(i, id);
    } catch (...) {
      if (!failed.exchange(true)) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

// The number of hardware threads (at least 1).
inline int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace attn::kernel
