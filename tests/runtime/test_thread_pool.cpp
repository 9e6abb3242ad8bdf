// SPDX-License-Identifier: Apache-2.0
// NeonBackend's thread pool: every index once, back-to-back jobs, concurrent and nested callers.
#include <atomic>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <kiln/backends/neon/thread_pool.hpp>

using kiln::neon::ThreadPool;

namespace {
// Runs `jobs` jobs of 0 to 40 indices back to back; returns how many of them ran an index other
// than exactly once, or on a thread outside the pool, before parallel_for returned. (No Catch
// assertions here: Catch2 is not thread-safe, and a second thread runs this too.)
int wrong_jobs(ThreadPool& pool, int jobs, unsigned salt) {
  std::vector<std::atomic<int>> runs(40);
  int wrong = 0;
  for (int job = 0; job < jobs; ++job) {
    const std::size_t count = (static_cast<unsigned>(job) * 7919u + salt) % 41u;
    for (auto& run : runs) run.store(0, std::memory_order_relaxed);
    std::atomic<bool> thread_in_range{true};
    pool.parallel_for(count, [&](std::size_t i, unsigned thread) {
      if (thread >= pool.size()) thread_in_range = false;
      runs[i].fetch_add(1, std::memory_order_relaxed);
    });
    bool right = thread_in_range;
    for (std::size_t i = 0; i < runs.size(); ++i) right = right && runs[i].load() == (i < count ? 1 : 0);
    wrong += right ? 0 : 1;
  }
  return wrong;
}
}  // namespace

TEST_CASE("ThreadPool runs every index once, job after job", "[neon][threads]") {
  for (unsigned threads : {1u, 2u, 3u, 5u}) {
    CAPTURE(threads);
    ThreadPool pool(threads);
    CHECK(pool.size() == threads);
    CHECK(wrong_jobs(pool, 3000, threads) == 0);
  }
}

TEST_CASE("ThreadPool's results are complete when parallel_for returns", "[neon][threads]") {
  // Plain (non-atomic) writes, read by the caller after the join: ThreadSanitizer checks the
  // happens-before edge from every worker's last task to the caller.
  ThreadPool pool(4);
  std::vector<long> out(1000);
  for (int round = 0; round < 200; ++round) {
    pool.parallel_for(out.size(), [&](std::size_t i) { out[i] = static_cast<long>(i) * round; });
    long sum = 0;
    for (long v : out) sum += v;
    REQUIRE(sum == 999L * 1000 / 2 * round);
  }
}

TEST_CASE("ThreadPool serves concurrent and nested callers", "[neon][threads]") {
  ThreadPool pool(3);
  SECTION("two threads calling at once: whoever finds the pool busy runs its job itself") {
    int wrong_in_other = -1;
    std::thread other([&] { wrong_in_other = wrong_jobs(pool, 2000, 11); });
    CHECK(wrong_jobs(pool, 2000, 5) == 0);
    other.join();
    CHECK(wrong_in_other == 0);
  }
  SECTION("a task that calls parallel_for again") {
    std::vector<std::atomic<int>> runs(6 * 9);
    pool.parallel_for(6, [&](std::size_t outer) {
      pool.parallel_for(9, [&](std::size_t inner) { runs[outer * 9 + inner].fetch_add(1); });
    });
    for (auto& run : runs) CHECK(run.load() == 1);
  }
}

TEST_CASE("ThreadPool clamps its thread count", "[neon][threads]") {
  CHECK(ThreadPool(0).size() == 1);
  CHECK(ThreadPool::max_threads == 65536);
}
