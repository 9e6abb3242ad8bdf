// SPDX-License-Identifier: Apache-2.0
// ThreadPool: the NeonBackend's intra-op parallelism, a fixed set of workers that split index ranges.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::neon {

/// A small pool for `parallel_for`: `threads - 1` workers plus the calling thread. One thread spawns
/// nothing. Tasks are indices; which thread runs which index never changes a result, because every
/// kernel computes each output from the same sequence of operations wherever it runs.
///
/// \code
/// ThreadPool pool(2);
/// pool.parallel_for(rows, [&](std::size_t row) { compute(row); });  // returns when all rows are done
/// \endcode
/// Concurrent callers are safe: the caller that finds the pool busy runs its indices itself.
class ThreadPool {
 public:
  explicit ThreadPool(unsigned threads) {
    for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Threads that run tasks, the caller included.
  unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }

  template <class F>
  void parallel_for(std::size_t count, F&& task) {
    std::unique_lock busy(run_mutex_, std::try_to_lock);
    if (workers_.empty() || count <= 1 || !busy.owns_lock()) {
      for (std::size_t i = 0; i < count; ++i) task(i);
      return;
    }
    {
      std::lock_guard lock(mutex_);
      job_ = {[](void* f, std::size_t i) { (*static_cast<std::remove_reference_t<F>*>(f))(i); }, &task, count};
      next_.store(0, std::memory_order_relaxed);
      pending_ = workers_.size();
      ++generation_;
    }
    wake_.notify_all();
    run_indices();
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
  }

 private:
  struct Job {
    void (*call)(void*, std::size_t) = nullptr;
    void* task = nullptr;
    std::size_t count = 0;
  };

  void run_indices() {
    for (std::size_t i = next_.fetch_add(1, std::memory_order_relaxed); i < job_.count;
         i = next_.fetch_add(1, std::memory_order_relaxed))
      job_.call(job_.task, i);
  }

  void work() {
    std::size_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
      }
      run_indices();
      std::lock_guard lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one parallel_for at a time
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  Job job_;
  std::atomic<std::size_t> next_{0};
  std::size_t pending_ = 0;
  std::size_t generation_ = 0;
  bool stopping_ = false;
};

}  // namespace kiln::neon
