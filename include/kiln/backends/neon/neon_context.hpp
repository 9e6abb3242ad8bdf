// SPDX-License-Identifier: Apache-2.0
// NeonBackend's options and context (the thread pool), shared by every instruction set.
#pragma once

#include <algorithm>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include <xsimd/xsimd.hpp>

#include "kiln/backends/neon/thread_pool.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln::neon {

/// NeonBackend's per-runtime settings (`BackendOptions<...>::get<NeonBackend>()`).
struct Options {
  /// Threads for intra-op parallelism, the calling thread included; 0 means every hardware thread.
  /// 1 spawns nothing. Results are bit-identical for every thread count.
  unsigned threads = 0;
  /// Layers with less work than this (multiply-adds, or elements) run on the calling thread.
  /// Workers spin between a network's layers, so handing them work costs about a microsecond:
  /// 2^16 (a microsecond of multiply-adds) took DS-CNN 0.068 -> 0.051 ms and ShuffleNet-v2 0.99 ->
  /// 0.89 ms at 2 threads against 2^18 and changed no larger network; 2^15 gave part of it back,
  /// and 2^21 kept most layers of MobileNet-v3-small, MnasNet and RegNet on one thread
  /// (docs/benchmarks.md, issue 15). 0 splits every layer that can be split.
  std::size_t min_parallel_work = std::size_t{1} << 16;
};

/// NeonBackend's per-runtime state: the thread pool, started on first use.
class Context : public ref::Context {
 public:
  /// Resolves the options once, so that no kernel asks the system for its thread count per call.
  void configure(const Options& options) {
    options_ = options;
    if (options_.threads == 0) options_.threads = hardware_threads();
  }

  /// The threads parallel work is split over (what `Options::threads` resolved to).
  unsigned threads() const noexcept { return options_.threads; }

  /// Runs task(i) — or task(i, thread), thread in [0, threads()) — for every i in [0, count) on
  /// the pool; returns when all are done. `cost` is the work of one task in multiply-adds (or
  /// elements); less than Options::min_parallel_work in all runs on the calling thread (thread 0).
  template <class F>
  void parallel_for(std::size_t count, F&& task, std::size_t cost) {
    if (threads() == 1 || count <= 1 || count * cost < options_.min_parallel_work) {
      for (std::size_t i = 0; i < count; ++i) run_task(task, i, 0);
      return;
    }
    std::call_once(*started_, [&] { pool_ = std::make_unique<ThreadPool>(threads()); });
    pool_->parallel_for(count, std::forward<F>(task));
  }

 private:
  static unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

  Options options_{.threads = hardware_threads()};
  std::unique_ptr<std::once_flag> started_ = std::make_unique<std::once_flag>();
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace kiln::neon
