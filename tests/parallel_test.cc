// parallel_for and the threads it keeps between calls (base/parallel.cc).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "base/parallel.h"

namespace attn::kernel {
namespace {

// Runs n tasks on `threads` threads; each task records the thread id it
// ran on. Every task must run exactly once, on an id below `threads`.
void expect_each_task_once(int64_t n, int threads) {
  std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
  std::vector<int> id_of(static_cast<size_t>(n), -1);
  parallel_for(n, threads, [&](int64_t i, int id) {
    ++runs[static_cast<size_t>(i)];
    id_of[static_cast<size_t>(i)] = id;
  });
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(runs[static_cast<size_t>(i)].load(), 1) << "task " << i;
    ASSERT_GE(id_of[static_cast<size_t>(i)], 0);
    ASSERT_LT(id_of[static_cast<size_t>(i)], threads);
  }
}

TEST(Parallel, EveryTaskRunsOnceWhateverTheThreadCount) {
  for (int threads : {1, 2, 3, 4, 2, 8, 1, 3}) expect_each_task_once(1000, threads);
  expect_each_task_once(1, 4);  // fewer tasks than threads
  expect_each_task_once(0, 4);
}

TEST(Parallel, ManyCallsInARowReuseTheThreads) {
  // The calls of one run come microseconds apart; alternate the sizes so
  // workers that sit one call out must not take the next one's tasks twice.
  for (int rep = 0; rep < 2000; ++rep) {
    std::atomic<int64_t> sum{0};
    const int threads = rep % 3 == 0 ? 4 : 2;
    parallel_for(64, threads, [&](int64_t i, int) { sum += i; });
    ASSERT_EQ(sum.load(), 64 * 63 / 2) << "call " << rep;
  }
}

TEST(Parallel, AnExceptionReachesTheCallerAndThePoolGoesOn) {
  EXPECT_THROW(parallel_for(100, 2,
                            [](int64_t i, int) {
                              if (i == 37) throw std::runtime_error("task 37");
                            }),
               std::runtime_error);
  expect_each_task_once(500, 2);
}

TEST(Parallel, ACallInsideATaskRunsOnItsThread) {
  std::atomic<int64_t> inner{0};
  parallel_for(8, 2, [&](int64_t, int) {
    parallel_for(10, 2, [&](int64_t j, int id) {
      EXPECT_EQ(id, 0);  // serial: no second level of threads
      inner += j;
    });
  });
  EXPECT_EQ(inner.load(), 8 * 45);
}

TEST(Parallel, CallsFromTwoThreadsOfTheProgramBothFinish) {
  // One gets the pool; the other starts threads of its own.
  auto work = [](int64_t* out) {
    for (int rep = 0; rep < 200; ++rep) {
      std::vector<int64_t> v(300, 0);
      parallel_for(300, 2, [&](int64_t i, int) { v[static_cast<size_t>(i)] = i; });
      *out += std::accumulate(v.begin(), v.end(), int64_t{0});
    }
  };
  int64_t a = 0, b = 0;
  std::thread other(work, &b);
  work(&a);
  other.join();
  EXPECT_EQ(a, 200 * (300 * 299 / 2));
  EXPECT_EQ(b, a);
}

TEST(Parallel, AForkedChildComputesAndExits) {
  expect_each_task_once(100, 2);  // the pool's workers exist in this process
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);  // a hang ends the child with SIGALRM, which fails the test
    std::atomic<int64_t> sum{0};
    parallel_for(1000, 2, [&](int64_t i, int) { sum += i; });
    std::exit(sum.load() == 1000 * 999 / 2 ? 0 : 1);  // static destructors run
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child hung or crashed";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace attn::kernel
