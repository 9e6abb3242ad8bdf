// SPDX-License-Identifier: Apache-2.0
// LoadedNetwork: a network ready to execute — planned memory, prepared constants, one workload per layer.
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <vector>

#include "kiln/detail/mutex.hpp"
#include "kiln/runtime/network_plan.hpp"
#include "kiln/runtime/network_printer.hpp"
#include "kiln/runtime/zero_copy.hpp"

namespace kiln::detail {

/// A loaded network. Everything but the working memory of the synchronous path and the recorded
/// profile is immutable after load, so any number of working memories may execute it at once.
class LoadedNetwork {
 public:
  /// Plans, prepares and creates everything `graph` needs on the backends `pack` describes, whose
  /// contexts are `contexts` (in pack order). `consumed`, when given, is graph's network, which the
  /// caller gave up: each constant's data is released once the workloads that read it are made.
  static Expected<std::shared_ptr<LoadedNetwork>> load(const OptimizedGraph& graph, const PackDescription& pack,
                                                       std::span<void* const> contexts, LoadOptions options,
                                                       ErasedAllocator allocator, Network* consumed = nullptr);

  /// Runs one inference on `memory`, allocating it first if needed. Pre-imported tensors stand
  /// in for the bindings they were imported for.
  Status execute(WorkingMemory& memory, std::span<const InputBinding> inputs, std::span<const OutputBinding> outputs,
                 std::span<const ImportedId> imported_inputs = {},
                 std::span<const ImportedId> imported_outputs = {}) const;
  /// The synchronous path: one inference at a time on the network's own working memory.
  Status enqueue(std::span<const InputBinding> inputs, std::span<const OutputBinding> outputs,
                 std::span<const ImportedId> imported_inputs = {}, std::span<const ImportedId> imported_outputs = {}) {
    std::lock_guard lock(mutex_);
    return execute(own_memory_, inputs, outputs, imported_inputs, imported_outputs);
  }

  /// Checks and remembers user buffers for later inferences (zero-copy, so they must be aligned).
  template <class Binding>
  Expected<std::vector<ImportedId>> import(std::span<const Binding> bindings) const {
    const bool allowed = std::same_as<Binding, InputBinding> ? options_.import_inputs : options_.export_outputs;
    if (!allowed)
      return Status::error(ErrorCode::InvalidArgument, "pre-importing ",
                           std::same_as<Binding, InputBinding> ? "input" : "output", "s needs the network loaded with ",
                           std::same_as<Binding, InputBinding> ? "import_inputs" : "export_outputs");
    return zero_copy_.import(layout_, bindings);
  }
  template <class Binding>
  Status clear_imported(std::span<const ImportedId> ids) const {
    return zero_copy_.clear<Binding>(ids);
  }
  /// Frees the synchronous path's working memory unless an inference is using it.
  void release_own_memory() {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (lock.owns_lock()) release(own_memory_);
  }

  Status allocate(WorkingMemory& memory) const;
  void release(WorkingMemory& memory) const { memory = WorkingMemory{}; }

  bool async_execution() const noexcept { return options_.async_execution; }
  Profile profile() const {
    return profile_.snapshot([&](const StepTiming& t) {
      const Step& step = layout_.steps[t.step];
      return LayerTiming{layout_.layer_names[step.layer], layout_.layer_ops[step.layer], layout_.backend_of(step),
                         t.start_us, t.duration_us};
    });
  }
  double load_us() const noexcept { return profile_.load_us(); }
  Expected<TensorInfo> input_info(BindingId id) const { return binding_info(Step::Kind::Input, id); }
  Expected<TensorInfo> output_info(BindingId id) const { return binding_info(Step::Kind::Output, id); }
  const MemorySummary& memory_summary() const noexcept { return layout_.tensors.summary(); }
  NetworkPlan plan() const { return plan_of(layout_); }
  std::string to_text() const { return network_text(layout_); }
  std::string to_dot() const { return network_dot(layout_); }

 private:
  using Clock = std::chrono::steady_clock;
  static double micros(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double, std::micro>(to - from).count();
  }

  /// The step of compute layer `id`, its workload created with the context of the backend
  /// `graph` assigned it to.
  Expected<Step> make_compute_step(const Network& network, LayerId id, std::uint32_t position,
                                   const LayerAssignment& assignment, const PackDescription& pack,
                                   std::span<void* const> contexts);
  Expected<TensorInfo> binding_info(Step::Kind kind, BindingId id) const {
    if (const TensorInfo* info = layout_.binding_info(kind, id)) return *info;
    return layout_.unknown_binding(kind, id);
  }
  template <class Binding>
  Status check_bindings(std::span<const Binding> given, Step::Kind kind) const;
  template <bool Profiled>
  Status run_steps(WorkingMemory& memory, std::span<const InputBinding> inputs,
                   std::span<const OutputBinding> outputs) const;
  /// Shows the outputs of step `s` to the debug callback, read back to the host if they live on a device.
  Status report_outputs(const WorkingMemory& memory, std::size_t s) const;

  NetworkLayout layout_;
  ZeroCopy zero_copy_;
  LoadOptions options_;
  ErasedAllocator allocator_;
  Clock::time_point loaded_at_;
  mutable ProfileRecorder profile_;
  detail::Mutex mutex_;
  WorkingMemory own_memory_;
};

/// Fails when `backend` cannot do what `options` ask of every backend a network uses.
Status check_capabilities(const BackendDescription& backend, const LoadOptions& options);

}  // namespace kiln::detail

#if !KILN_COMPILED_LIBRARY || KILN_BUILDING_LIBRARY
#include "kiln/runtime/loaded_network_inl.hpp"
#endif
