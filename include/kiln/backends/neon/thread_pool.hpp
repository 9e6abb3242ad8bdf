// SPDX-License-Identifier: Apache-2.0
// ThreadPool: the NeonBackend's intra-op parallelism, a fixed set of workers that split index ranges.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace kiln::neon {

/// Runs task(index, thread) where the task takes the thread too (to pick its slice of the
/// workload's scratch: the caller is thread 0, workers 1 to threads - 1), else task(index).
template <class F>
void run_task(F& task, std::size_t index, unsigned thread) {
  if constexpr (std::is_invocable_v<F&, std::size_t, unsigned>)
    task(index, thread);
  else
    task(index);
}

/// A small pool for `parallel_for`: `threads - 1` workers plus the calling thread. One thread spawns
/// nothing. Tasks are indices; which thread runs which index never changes a result, because every
/// kernel computes each output from the same sequence of operations wherever it runs.
///
/// \code
/// ThreadPool pool(2);
/// pool.parallel_for(rows, [&](std::size_t row) { compute(row); });  // returns when all rows are done
/// pool.parallel_for(rows, [&](std::size_t row, unsigned thread) { compute(row, scratch[thread]); });
/// \endcode
/// Concurrent callers are safe: the caller that finds the pool busy runs its indices itself.
/// Between jobs the workers spin for a short while before they sleep, because a network's layers
/// follow each other within microseconds and waking a sleeping thread costs tens of them. Before
/// their first job they sleep at once, and a pool being destroyed stops their spinning: a runtime
/// that is made and dropped (a test's, a loaded-then-unloaded network's) burns no core meanwhile,
/// which under emulation, where each spin is a sched_yield, took most of the op tests' time.
class ThreadPool {
 public:
  /// `threads` is clamped to [1, max_threads].
  explicit ThreadPool(unsigned threads) : ranges_(std::clamp(threads, 1u, max_threads)) {
    for (unsigned i = 1; i < ranges_.size(); ++i) workers_.emplace_back([this, i] { work(i); });
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      stopping_.store(true, std::memory_order_relaxed);
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The most threads a pool runs, the caller included (the count of workers inside a job has 16 bits).
  static constexpr unsigned max_threads = 0x10000;

  /// Threads that run tasks, the caller included.
  unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }

  template <class F>
  void parallel_for(std::size_t count, F&& task) {
    std::unique_lock busy(run_mutex_, std::try_to_lock);
    if (workers_.empty() || count <= 1 || !busy.owns_lock()) {
      for (std::size_t i = 0; i < count; ++i) run_task(task, i, 0);
      return;
    }
    // No worker is inside a job now (the last one closed with none inside), so the job and its
    // ranges can be rewritten; opening the next generation publishes them.
    job_ = {[](void* f, std::size_t i, unsigned thread) {
              run_task(*static_cast<std::remove_reference_t<F>*>(f), i, thread);
            },
            &task};
    for (std::size_t t = 0; t < ranges_.size(); ++t) {
      ranges_[t].next.store(count * t / ranges_.size(), std::memory_order_relaxed);
      ranges_[t].end = count * (t + 1) / ranges_.size();
    }
    state_.store(generation(state_.load(std::memory_order_relaxed)) + generation_step + open_bit,
                 std::memory_order_release);
    notify(wake_);
    run_indices(0);
    // Every index is claimed now. Closing the job keeps late workers out of it, so the caller waits
    // only for those still running a task: a worker whose core is busy with another process no
    // longer holds up every layer until it is scheduled.
    const std::uint64_t closed = state_.fetch_and(~open_bit, std::memory_order_acq_rel) & ~open_bit;
    if (inside(closed) == 0) return;
    auto none_inside = [&] { return inside(state_.load(std::memory_order_acquire)) == 0; };
    if (!spin_until(none_inside)) {
      std::unique_lock lock(mutex_);
      done_.wait(lock, none_inside);
    }
  }

 private:
  struct alignas(64) Range {  // one cache line each: threads claim indices without false sharing
    std::atomic<std::size_t> next{0};
    std::size_t end = 0;
  };
  struct Job {
    void (*call)(void*, std::size_t, unsigned) = nullptr;
    void* task = nullptr;
  };

  // state_ packs the job's generation, whether it is open to workers, and how many workers are
  // inside it, so that a worker joins only an open job of the generation it read, in one step.
  static constexpr std::uint64_t inside_mask = 0xffff;
  static constexpr std::uint64_t open_bit = inside_mask + 1;
  static constexpr std::uint64_t generation_step = open_bit << 1;
  static std::uint64_t generation(std::uint64_t state) { return state & ~(generation_step - 1); }
  static std::uint64_t inside(std::uint64_t state) { return state & inside_mask; }

  // Taking the mutex before notifying means a thread that checked its condition under the mutex
  // is already waiting, so the notification cannot be lost.
  void notify(std::condition_variable& cv) {
    { std::lock_guard lock(mutex_); }
    cv.notify_all();
  }

  template <class Ready>
  static bool spin_until(Ready ready) {
    for (int i = 0; i < 20000; ++i) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#else
      std::this_thread::yield();
#endif
    }
    return ready();
  }

  // Thread `self` runs its own contiguous range first, then helps with the others'. Contiguous
  // ranges give each thread the same part of every layer, so a layer mostly reads what the same
  // core wrote in the layer before, from its own cache.
  void run_indices(std::size_t self) {
    for (std::size_t k = 0; k < ranges_.size(); ++k) {
      Range& range = ranges_[(self + k) % ranges_.size()];
      for (std::size_t i = range.next.fetch_add(1, std::memory_order_relaxed); i < range.end;
           i = range.next.fetch_add(1, std::memory_order_relaxed))
        job_.call(job_.task, i, static_cast<unsigned>(self));
    }
  }

  void work(std::size_t self) {
    std::uint64_t seen = 0;
    for (bool worked = false;; worked = true) {
      auto new_job = [&] {
        return stopping_.load(std::memory_order_relaxed) || generation(state_.load(std::memory_order_acquire)) != seen;
      };
      if (!worked || !spin_until(new_job)) {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, new_job);
      }
      if (stopping_.load(std::memory_order_relaxed)) return;
      // A job that closed before this worker came is done without it; a failed exchange rereads
      // the state, which may be a newer job's.
      for (std::uint64_t state = state_.load(std::memory_order_acquire);;) {
        seen = generation(state);
        if ((state & open_bit) == 0) break;
        if (state_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
          run_indices(self);
          const std::uint64_t left = state_.fetch_sub(1, std::memory_order_acq_rel) - 1;
          if (inside(left) == 0 && (left & open_bit) == 0) notify(done_);
          break;
        }
      }
    }
  }

  std::vector<Range> ranges_;  // declared before workers_, which use it from their first moment
  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one parallel_for at a time
  std::mutex mutex_;      // guards sleeping and stopping
  std::condition_variable wake_, done_;
  Job job_;
  std::atomic<std::uint64_t> state_{0};
  std::atomic<bool> stopping_{false};  // set under mutex_, read while spinning too
};

}  // namespace kiln::neon
