// SPDX-License-Identifier: Apache-2.0
// NeonBackend: the backend tag, its options and context (the thread pool), shared by every instruction set.
#pragma once

#include <algorithm>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include <xsimd/xsimd.hpp>

#include "kiln/backends/neon/thread_pool.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"

#ifndef KILN_NEON_DISPATCH
#define KILN_NEON_DISPATCH 0
#endif

namespace kiln {

namespace neon {

/// NeonBackend's per-runtime settings (`BackendOptions<...>::get<NeonBackend>()`).
struct Options {
  /// Threads for intra-op parallelism, the calling thread included; 0 means every hardware thread.
  /// 1 spawns nothing. Results are bit-identical for every thread count.
  unsigned threads = 0;
  /// Layers with less work than this (multiply-adds, or elements) run on the calling thread: about
  /// 100 us of work on one core, since waking the workers costs tens of microseconds. 0 splits
  /// every layer that can be split.
  std::size_t min_parallel_work = std::size_t{1} << 21;
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

  /// Runs task(i) for every i in [0, count) on the pool; returns when all are done. `cost` is
  /// the work of one task in multiply-adds (or elements); less than Options::min_parallel_work in
  /// all runs on the calling thread.
  template <class F>
  void parallel_for(std::size_t count, F&& task, std::size_t cost) {
    if (threads() == 1 || count <= 1 || count * cost < options_.min_parallel_work) {
      for (std::size_t i = 0; i < count; ++i) task(i);
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

}  // namespace neon

/// The SIMD CPU backend, written once with xsimd: NEON on Arm, SSE/AVX2/AVX-512 on x86, whichever
/// the compile target (`-march`) allows, or with KILN_NEON_DISPATCH the best of several that the
/// CPU running it has (docs/decisions/0009). Layers it has no kernel for run its RefBackend fallback's.
struct NeonBackend {
  using fallback = RefBackend;
  static constexpr std::string_view id = "CpuAcc";
  static constexpr std::size_t alignment = 64;
  using memory = HostMemory;
  using context = neon::Context;
  using options = neon::Options;
  /// Whether this machine runs the kernels: those of the compile target's instruction set, or in
  /// the dispatching build (KILN_NEON_DISPATCH) the best set compiled in that the CPU has.
  static bool available() noexcept {
#if KILN_NEON_DISPATCH
    return true;  // the SSE2 / NEON kernels are always compiled in
#else
    return xsimd::available_architectures().best >= xsimd::default_arch::version();
#endif
  }
};

}  // namespace kiln
