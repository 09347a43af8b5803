// The threads behind parallel_for: a pool started on first use and kept
// until the program ends. One call at a time has it; the caller works as
// thread 0 and the first threads - 1 workers join it. Between calls the
// workers spin for a short while (the calls of one run come within
// microseconds of each other) and then sleep on a condition variable.
//
// The pool is never destroyed and its threads are detached: joining them
// from a static destructor would hang in a child of fork(), which has the
// pool's memory but not its threads. A child does not use the pool (it
// starts threads of its own), and at exit the sleeping workers simply end
// with the process.
#include "base/parallel.h"

#if defined(__unix__)
#include <pthread.h>
#endif

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <vector>

namespace attn::kernel::pool {

namespace {

thread_local bool t_in_task = false;

// Set in the child of a fork(): the pool's workers stayed in the parent.
std::atomic<bool> g_forked{false};

// One call's tasks, shared by the threads taking part.
struct Job {
  int64_t n = 0;
  TaskFn fn = nullptr;
  void* f = nullptr;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;  // the first exception, written once (failed guards it)

  void work(int id) {
    t_in_task = true;
    try {
      for (int64_t i = next++; i < n && !failed; i = next++) fn(f, i, id);
    } catch (...) {
      if (!failed.exchange(true)) error = std::current_exception();
    }
    t_in_task = false;
  }
};

class Pool {
 public:
  static Pool& get() {
    static Pool* pool = new Pool;  // never destroyed: see the top of the file
    return *pool;
  }

  // Runs `job` on this thread and threads - 1 workers; false when another
  // thread has the pool, or in the child of a fork.
  bool try_run(Job& job, int threads) {
    if (g_forked) return false;
    std::unique_lock<std::mutex> use(use_, std::try_to_lock);
    if (!use.owns_lock()) return false;
    while (workers_ < threads - 1) {
      const int id = workers_ + 1;
      std::thread([this, id] { loop(id); }).detach();  // counted once it exists
      workers_ = id;
    }
    {
      std::lock_guard<std::mutex> lock(m_);
      job_ = &job;
      joining_ = threads - 1;
      running_ = threads - 1;
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    job.work(0);
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [this] { return running_ == 0; });
    job_ = nullptr;
    return true;
  }

 private:
  Pool() {
#if defined(__unix__)
    pthread_atfork(nullptr, nullptr, [] { g_forked = true; });
#endif
  }

  void loop(int id) {
    uint64_t seen = 0;
    for (;;) {
      // Spin first: the next call of the same run is usually this close.
      for (int spin = 0; spin < 2000 && generation_.load() == seen; ++spin) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
      Job* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(m_);
        wake_.wait(lock, [&] { return generation_.load() != seen; });
        seen = generation_.load();
        if (id > joining_) continue;  // this call wants fewer threads
        job = job_;
      }
      job->work(id);
      {
        std::lock_guard<std::mutex> lock(m_);
        --running_;
      }
      done_.notify_one();
    }
  }

  std::mutex use_;  // held by the call that has the pool
  std::mutex m_;    // guards the fields below
  std::condition_variable wake_, done_;
  int workers_ = 0;  // started so far; worker k has thread id k
  std::atomic<uint64_t> generation_{0};
  Job* job_ = nullptr;
  int joining_ = 0;  // workers 1..joining_ take part in the current call
  int running_ = 0;  // of those, the ones not done yet
};

}  // namespace

bool in_parallel_task() { return t_in_task; }

void run_parallel(int64_t n, int threads, TaskFn fn, void* f) {
  Job job;
  job.n = n;
  job.fn = fn;
  job.f = f;
  if (!Pool::get().try_run(job, threads)) {
    // Another thread of the program has the pool: threads of our own.
    std::vector<std::thread> own;
    for (int t = 1; t < threads; ++t) own.emplace_back([&job, t] { job.work(t); });
    job.work(0);
    for (std::thread& t : own) t.join();
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace attn::kernel::pool
