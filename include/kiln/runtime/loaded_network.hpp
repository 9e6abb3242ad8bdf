// SPDX-License-Identifier: Apache-2.0
// LoadedNetwork: a network ready to execute — planned memory, prepared constants, one workload per layer.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "kiln/runtime/network_printer.hpp"
#include "kiln/runtime/zero_copy.hpp"

namespace kiln::detail {

/// A loaded network. Everything but the working memory of the synchronous path and the recorded
/// profile is immutable after load, so any number of working memories may execute it at once.
class LoadedNetwork {
 public:
  /// Plans, prepares and creates everything `graph` needs on the backends `pack` describes, whose
  /// contexts are `contexts` (in pack order).
  static Expected<std::shared_ptr<LoadedNetwork>> load(const OptimizedGraph& graph, const PackDescription& pack,
                                                       std::span<void* const> contexts, LoadOptions options,
                                                       ErasedAllocator allocator);

  /// Runs one inference on `memory`, allocating it first if needed. Pre-imported tensors stand
  /// in for the bindings they were imported for.
  Status execute(WorkingMemory& memory, std::span<const InputBinding> inputs, std::span<const OutputBinding> outputs,
                 std::span<const ImportedId> imported_inputs = {}, std::span<const ImportedId> imported_outputs = {}) const;
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
      return Status::error(ErrorCode::InvalidArgument, "pre-importing ", std::same_as<Binding, InputBinding> ? "input" : "output",
                           "s needs the network loaded with ", std::same_as<Binding, InputBinding> ? "import_inputs" : "export_outputs");
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
  Status run_steps(WorkingMemory& memory, std::span<const InputBinding> inputs, std::span<const OutputBinding> outputs) const;
  /// Shows the outputs of step `s` to the debug callback, read back to the host if they live on a device.
  Status report_outputs(const WorkingMemory& memory, std::size_t s) const;

  NetworkLayout layout_;
  ZeroCopy zero_copy_;
  LoadOptions options_;
  ErasedAllocator allocator_;
  Clock::time_point loaded_at_;
  mutable ProfileRecorder profile_;
  std::mutex mutex_;
  WorkingMemory own_memory_;
};

/// Fails when `backend` cannot do what `options` ask of every backend a network uses.
inline Status check_capabilities(const BackendDescription& backend, const LoadOptions& options) {
  const BackendCapabilities& can = backend.capabilities;
  auto refuse = [&](std::string_view what, std::string_view option) {
    return Status::error(ErrorCode::Unsupported, "backend ", backend.id, " cannot ", what, "; load without ", option);
  };
  if (options.async_execution && !can.async_execution) return refuse("execute asynchronously", "async_execution");
  if (options.import_inputs && !can.import_host_memory) return refuse("read imported host memory", "import_inputs");
  if (options.export_outputs && !can.export_host_memory) return refuse("write exported host memory", "export_outputs");
  if (options.profiling && !can.profiling) return refuse("profile its workloads", "profiling");
  return Status::ok();
}

inline Expected<std::shared_ptr<LoadedNetwork>> LoadedNetwork::load(const OptimizedGraph& graph,
                                                                    const PackDescription& pack,
                                                                    std::span<void* const> contexts,
                                                                    LoadOptions options, ErasedAllocator allocator) {
  const auto load_start = Clock::now();
  const Network& network = graph.network;
  auto loaded = std::make_shared<LoadedNetwork>();
  NetworkLayout& layout = loaded->layout_;
  loaded->allocator_ = allocator;
  loaded->options_ = std::move(options);
  std::size_t alignment = 1;
  for (std::size_t b = 0; b < pack.backends.size(); ++b) {
    layout.backends.push_back({pack.backends[b].id, &pack.backends[b].hooks, contexts[b]});
    alignment = std::max(alignment, pack.backends[b].alignment);
  }
  for (const Layer& layer : network.layers()) {
    layout.layer_names.push_back(layer.name);
    layout.layer_ops.push_back(layer.op_name());
  }
  if (auto status = layout.tensors.add_outputs(network, alignment, allocator); !status) return status;

  const auto order = network.execution_order();
  for (std::uint32_t position = 0; position < order.size(); ++position) {
    const LayerId id = order[position];
    const Layer& layer = network.layer(id);
    Step step;
    if (const auto* input = layer.params_if<ops::Input>()) {
      step = {.kind = Step::Kind::Input, .layer = id, .binding = input->binding};
      layout.input_bindings.push_back(input->binding);
    } else if (const auto* output = layer.params_if<ops::Output>()) {
      step = {.kind = Step::Kind::Output, .layer = id, .binding = output->binding};
      layout.output_bindings.push_back(output->binding);
    } else if (layer.is<ops::Constant>()) {
      continue;
    } else {
      auto made = loaded->make_compute_step(network, id, position, graph.assignments[id], pack, contexts);
      if (!made) return made.status().with_context(layer.describe());
      step = std::move(*made);
    }
    for (const auto& input : layer.inputs) step.inputs.push_back(layout.tensors.slot_of(*input));
    for (std::uint32_t i = 0; i < layer.outputs.size(); ++i) step.outputs.push_back(layout.tensors.slot_of({id, i}));
    layout.steps.push_back(std::move(step));
  }

  const LoadOptions& chosen = loaded->options_;
  if (chosen.import_inputs || chosen.export_outputs) loaded->zero_copy_.find_views(layout);
  if (auto status = layout.tensors.plan(network, chosen.memory_planner); !status) return status;
  loaded->loaded_at_ = Clock::now();
  loaded->profile_.reset(micros(load_start, loaded->loaded_at_), layout.steps.size(),
                         chosen.profiling ? chosen.profile_history : 0);
  return loaded;
}

inline Expected<Step> LoadedNetwork::make_compute_step(const Network& network, LayerId id, std::uint32_t position,
                                                       const LayerAssignment& assignment, const PackDescription& pack,
                                                       std::span<void* const> contexts) {
  const Layer& layer = network.layer(id);
  const BackendDescription& backend = pack.backends[assignment.backend];
  if (auto status = check_capabilities(backend, options_); !status) return status;
  Step step{.kind = Step::Kind::Compute, .layer = id, .backend = assignment.backend};
  step.context = backend.chain[assignment.level].context(contexts[assignment.backend]);
  const LayerInputs inputs(network, layer);
  auto workload = assignment.workload->create(inputs.info_of(layer), step.context);
  if (!workload) return workload.status();
  step.workload = std::move(*workload);

  // A device backend's outputs live in its memory, except what a copy to the host writes.
  std::uint8_t memory = 0;
  const auto* copy = layer.params_if<ops::MemCopy>();
  if (!backend.host_memory) {
    memory = layout_.tensors.device_kind(backend, contexts[assignment.backend]);
    if (!copy || copy->direction != ops::CopyDirection::DeviceToHost)
      for (std::uint32_t i = 0; i < layer.outputs.size(); ++i) layout_.tensors.place_in(layout_.tensors.slot_of({id, i}), memory);
  }
  if (const ScratchSize& scratch = step.workload.scratch(); scratch.bytes != 0) {
    const std::size_t alignment = memory == 0 ? layout_.tensors.alignment() : layout_.tensors.device_kinds()[memory - 1].alignment;
    if (alignment % scratch.alignment != 0)
      return Status::error(ErrorCode::Unsupported, "its workload asks for scratch aligned to ", scratch.alignment,
                           " bytes, more than the ", alignment, " its memory kind's arena guarantees");
    step.scratch = layout_.tensors.add_scratch(memory, scratch.bytes, position);
  }
  return step;
}

inline Status LoadedNetwork::allocate(WorkingMemory& memory) const {
  if (memory.allocated) return Status::ok();
  if (auto status = layout_.tensors.allocate(memory, layout_.steps, allocator_); !status) return status;
  if (options_.profiling) memory.timing.steps.reserve(layout_.steps.size());
  return Status::ok();
}

template <class Binding>
Status LoadedNetwork::check_bindings(std::span<const Binding> given, Step::Kind kind) const {
  const std::string_view what = kind == Step::Kind::Input ? "input" : "output";
  for (std::size_t i = 0; i < given.size(); ++i) {
    const TensorInfo* info = layout_.binding_info(kind, given[i].id);
    if (info == nullptr) return layout_.unknown_binding(kind, given[i].id);
    for (std::size_t j = 0; j < i; ++j)
      if (given[j].id == given[i].id)
        return Status::error(ErrorCode::InvalidArgument, what, " binding ", given[i].id, " is given twice");
    const auto& tensor = given[i].tensor;
    if (tensor.info.type != info->type || tensor.info.shape != info->shape)
      return Status::error(ErrorCode::InvalidArgument, what, " binding ", given[i].id, " expects ", info->to_string(),
                           " but the buffer is ", tensor.info.to_string());
    if (tensor.data == nullptr && info->num_bytes() != 0)
      return Status::error(ErrorCode::InvalidArgument, what, " binding ", given[i].id, " has a null data pointer");
  }
  for (BindingId id : kind == Step::Kind::Input ? layout_.input_bindings : layout_.output_bindings)
    if (std::ranges::find(given, id, &Binding::id) == given.end())
      return Status::error(ErrorCode::InvalidArgument, what, " binding ", id, " is missing");
  return Status::ok();
}

}  // namespace kiln::detail

#include "kiln/runtime/execution.hpp"
