// SPDX-License-Identifier: Apache-2.0
// What every NeonBackend workload shares: the backend tag, its options and context (the thread pool).
#pragma once

#include <algorithm>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include <xsimd/xsimd.hpp>

#include "kiln/backends/neon/thread_pool.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"

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
/// the compile target (`-march`) allows. Layers it has no kernel for run its RefBackend fallback's.
struct NeonBackend {
  using fallback = RefBackend;
  static constexpr std::string_view id = "CpuAcc";
  static constexpr std::size_t alignment = 64;
  using memory = HostMemory;
  using context = neon::Context;
  using options = neon::Options;
  /// The instruction set the kernels were compiled for (xsimd's best for the compile target).
  using arch = xsimd::default_arch;
  static bool available() noexcept { return xsimd::available_architectures().best >= arch::version(); }
};

namespace neon {

/// Base of the Neon workloads: keeps the parameters; Float32 only.
template <class Op>
using Float32Kernel = ref::Float32Kernel<Op, NeonBackend>;

/// Fails unless the layer is Float32 and its inputs from `first` on (weights, bias, statistics)
/// are constants, which Neon workloads pack or fold at load; otherwise the Ref workload
/// NeonBackend inherits runs the layer.
template <class Op>
Status require_float32_constants(const WorkloadInfo<Op>& info, std::size_t first) {
  if (auto s = ref::require_float32(info, NeonBackend::id); !s) return s;
  for (std::size_t i = first; i < info.inputs.size(); ++i)
    if (info.constants[i] == nullptr)
      return Status::error(ErrorCode::Unsupported, NeonBackend::id, " prepares the weights of ", Op::name,
                           " at load, so input ", i, " must be a constant");
  return Status::ok();
}

using ref::floats;

}  // namespace neon
}  // namespace kiln
