#include "engine/worker_pool.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace zarrdirect {
namespace {

TEST(WorkerPool, RunsEveryWorkerIndexOnceWithTheFirstOnTheCaller) {
  WorkerPool pool;
  for (unsigned workers : {1u, 2u, 16u, 64u}) {
    std::vector<std::atomic<int>> runs(workers);
    std::thread::id first_thread;
    pool.run(workers, [&](unsigned w) {
      runs[w]++;
      if (w == 0) first_thread = std::this_thread::get_id();
    });
    for (unsigned w = 0; w < workers; ++w) EXPECT_EQ(runs[w].load(), 1) << "worker " << w << " of " << workers;
    EXPECT_EQ(first_thread, std::this_thread::get_id());
  }
}

TEST(WorkerPool, RequestsAboveTheCapAreClamped) {
  WorkerPool pool(3);
  EXPECT_EQ(pool.max_workers(), 3u);
  std::mutex mutex;
  std::set<unsigned> seen;
  pool.run(1000, [&](unsigned w) {
    std::lock_guard lock(mutex);
    seen.insert(w);
  });
  EXPECT_EQ(seen, (std::set<unsigned>{0, 1, 2}));
  EXPECT_LE(pool.threads(), 2u);
  EXPECT_EQ(WorkerPool::shared().max_workers(), kMaxReaderThreads);
}

TEST(WorkerPool, ZeroWorkersRunNothing) {
  WorkerPool pool;
  bool ran = false;
  pool.run(0, [&](unsigned) { ran = true; });
  EXPECT_FALSE(ran);
}

TEST(WorkerPool, ThreadsAreKeptAndReused) {
  WorkerPool pool;
  std::atomic<int> count{0};
  pool.run(8, [&](unsigned) { count++; });
  const std::size_t after_first = pool.threads();
  EXPECT_LE(after_first, 7u);
  for (int i = 0; i < 20; ++i) pool.run(8, [&](unsigned) { count++; });
  EXPECT_EQ(count.load(), 21 * 8);
  // Idle threads take the next call's jobs; a few more may start only while earlier ones are
  // still finishing their last job, never one set per call.
  EXPECT_LE(pool.threads(), 2 * after_first + 7);
}

TEST(WorkerPool, TheFirstExceptionReachesTheCallerAfterEveryTaskEnded) {
  WorkerPool pool;
  std::atomic<int> finished{0};
  EXPECT_THROW(pool.run(8,
                        [&](unsigned w) {
                          finished++;
                          if (w == 3) throw std::runtime_error("worker 3 failed");
                        }),
               std::runtime_error);
  EXPECT_EQ(finished.load(), 8);
  // The pool still works afterwards.
  std::atomic<int> again{0};
  pool.run(4, [&](unsigned) { again++; });
  EXPECT_EQ(again.load(), 4);
}

TEST(WorkerPool, ConcurrentAndNestedCallsComplete) {
  WorkerPool pool;
  std::atomic<int> inner_runs{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      // Every task waits for a call of its own: this would deadlock if jobs queued behind busy
      // threads instead of getting threads of their own.
      pool.run(6, [&](unsigned) { pool.run(3, [&](unsigned) { inner_runs++; }); });
    });
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(inner_runs.load(), 4 * 6 * 3);
}

TEST(WorkerPool, TasksRunInParallel) {
  // Four tasks that each wait until all four have started can only finish if they run at once.
  WorkerPool pool;
  std::atomic<int> started{0};
  pool.run(4, [&](unsigned) {
    started++;
    while (started.load() < 4) std::this_thread::yield();
  });
  EXPECT_EQ(started.load(), 4);
}

TEST(WorkerPool, TheSharedPoolWorksInAForkedChild) {
  // The parent's pool has threads; the child has none of them and must not wait for them.
  WorkerPool::shared().run(4, [](unsigned) {});
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(10);  // a hang ends the child with SIGALRM, which the parent sees
    std::atomic<int> runs{0};
    WorkerPool::shared().run(4, [&](unsigned) { runs++; });
    ::_exit(runs.load() == 4 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace zarrdirect
