// SPDX-License-Identifier: Apache-2.0
// LoadedNetwork: a network ready to execute — planned memory, prepared constants, one workload per layer.
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "kiln/memory/arena.hpp"
#include "kiln/memory/device_arena.hpp"
#include "kiln/optimizer/optimizer.hpp"
#include "kiln/runtime/arena_tensors.hpp"
#include "kiln/runtime/load_options.hpp"
#include "kiln/runtime/profile.hpp"

namespace kiln::detail {

/// A workload with its type erased into two function pointers: one indirect call per layer.
class ErasedWorkload {
 public:
  using RunFn = Status (*)(const void* state, std::span<const ConstTensor>, std::span<const Tensor>, void* context);

  ErasedWorkload() = default;
  template <class W, class Context>
  static ErasedWorkload make(W workload) {
    ErasedWorkload erased;
    erased.state_ = std::shared_ptr<const void>(std::make_shared<const W>(std::move(workload)));
    erased.run_ = [](const void* state, std::span<const ConstTensor> in, std::span<const Tensor> out, void* context) {
      const W& w = *static_cast<const W*>(state);
      Context& ctx = *static_cast<Context*>(context);
      if constexpr (std::same_as<decltype(w.run(in, out, ctx)), Status>) return w.run(in, out, ctx);
      else {
        w.run(in, out, ctx);
        return Status::ok();
      }
    };
    return erased;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, void* context) const {
    return run_(state_.get(), in, out, context);
  }

 private:
  std::shared_ptr<const void> state_;
  RunFn run_ = nullptr;
};

/// Where a tensor's bytes are: an offset in its memory kind's arena, or constant storage prepared at load.
struct TensorSlot {
  TensorInfo info;
  bool is_constant = false;
  std::uint8_t memory = 0;          ///< 0: host memory; k: the device memory kind device_kinds_[k - 1]
  std::uint64_t offset = 0;         ///< arena offset (intermediate tensors)
  const std::byte* data = nullptr;  ///< constant data
};

/// A device memory kind a loaded network uses, reached through the context of the backend that owns
/// it (see DeviceMemoryContext).
struct DeviceMemoryKind {
  std::string_view name;
  void* context = nullptr;
  Expected<DeviceArena> (*allocate)(void* context, std::uint64_t bytes) = nullptr;
  Status (*read)(void* context, const void* handle, void* host, std::uint64_t bytes) = nullptr;
  /// Wraps host memory for the device to read in place; nullptr when the context cannot.
  Expected<DeviceImport> (*import_host)(void* context, const void* host, std::uint64_t bytes) = nullptr;
  Status (*finish)(void* context) = nullptr;
  std::size_t alignment = 1;
  std::uint64_t arena_bytes = 0;

  template <class B>
  static DeviceMemoryKind of(typename B::context& context) {
    using Context = typename B::context;
    DeviceMemoryKind kind{B::memory::name, &context,
                          [](void* c, std::uint64_t bytes) { return static_cast<Context*>(c)->allocate_arena(bytes); },
                          [](void* c, const void* handle, void* host, std::uint64_t bytes) {
                            return static_cast<Context*>(c)->read(handle, host, bytes);
                          },
                          nullptr, [](void* c) { return static_cast<Context*>(c)->finish(); },
                          std::max<std::size_t>(B::alignment, context.arena_alignment())};
    if constexpr (requires(const void* host, std::uint64_t bytes) {
                    { context.import_host(host, bytes) } -> std::same_as<Expected<DeviceImport>>;
                  })
      kind.import_host = [](void* c, const void* host, std::uint64_t bytes) {
        return static_cast<Context*>(c)->import_host(host, bytes);
      };
    return kind;
  }
};

/// One entry of the execution loop.
struct Step {
  enum class Kind : std::uint8_t { Input, Output, Compute } kind = Kind::Compute;
  LayerId layer = 0;
  BindingId binding = 0;
  ErasedWorkload workload;
  void* context = nullptr;
  std::string_view backend;
  std::vector<std::size_t> inputs;  ///< indices into the tensor table
  std::vector<std::size_t> outputs;
  /// Input steps: every view that reads the input tensor (retargeted when importing).
  /// Output steps: the producer's view of the output tensor, when that producer may export.
  std::vector<std::pair<std::size_t, std::size_t>> zero_copy_views;  ///< (step, position)
  /// Host-to-device copies of a network input whose device can read host memory in place: the
  /// copy's device memory kind (1-based, as TensorSlot::memory) and the views that read its
  /// output, which an importing inference points at the user's buffer instead, skipping the copy.
  std::uint8_t import_kind = 0;
  std::vector<std::pair<std::size_t, std::size_t>> device_readers;  ///< (step, position)
  /// Steps on a backend with a DeviceTimingContext: how a profiled run brackets them.
  void (*begin_device_timing)(void* context) = nullptr;
  std::function<std::optional<DeviceSpan>()> (*end_device_timing)(void* context) = nullptr;
};

/// The per-inference state of a network: its arena and the tensor views bound into it. Allocated
/// on first use, released on request; one inference at a time uses it.
struct WorkingMemory {
  AlignedBuffer arena;
  std::vector<DeviceArena> device_arenas;        ///< per device memory kind
  std::vector<std::vector<ConstTensor>> inputs;  ///< per step
  std::vector<std::vector<Tensor>> outputs;      ///< per step
  std::vector<bool> exported;                    ///< per step: this inference's output went in place
  std::vector<bool> skipped;                     ///< per step: a copy this inference's import made unneeded
  std::vector<DeviceImport> device_imports;      ///< the user buffers wrapped for the last inference
  bool allocated = false;
};

/// A loaded network. Everything but the working memory of the synchronous path and the recorded
/// profile is immutable after load, so any number of working memories may execute it at once.
class LoadedNetwork {
 public:
  template <Backend... Bs>
  static Expected<std::shared_ptr<LoadedNetwork>> load(const OptimizedNetwork<Bs...>& optimized,
                                                       std::tuple<typename Bs::context...>& contexts,
                                                       LoadOptions options, detail::ErasedAllocator allocator);

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
  Expected<std::vector<ImportedId>> import(std::span<const Binding> bindings) const;
  /// Forgets pre-imported buffers; unknown ids are an error and nothing is forgotten then.
  template <class Binding>
  Status clear_imported(std::span<const ImportedId> ids) const;
  /// Frees the synchronous path's working memory unless an inference is using it.
  void release_own_memory() {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (lock.owns_lock()) release(own_memory_);
  }

  Status allocate(WorkingMemory& memory) const;
  void release(WorkingMemory& memory) const {
    memory.arena.release();
    memory.device_arenas.clear();
    memory.device_imports.clear();
    memory.inputs.clear();
    memory.outputs.clear();
    memory.exported.clear();
    memory.allocated = false;
  }

  bool async_execution() const noexcept { return options_.async_execution; }
  Profile profile() const {
    std::lock_guard lock(profile_mutex_);
    return profile_;
  }
  Expected<TensorInfo> input_info(BindingId id) const { return binding_info(Step::Kind::Input, id); }
  Expected<TensorInfo> output_info(BindingId id) const { return binding_info(Step::Kind::Output, id); }
  const MemorySummary& memory_summary() const noexcept { return memory_; }

  /// One line per step: layer, op, backend, and where each tensor it reads and writes lives.
  std::string to_text() const;
  /// The same as a Graphviz digraph: a node per layer, an edge per tensor labelled with its
  /// shape and arena offset.
  std::string to_dot() const;

 private:
  std::string tensor_label(std::size_t tensor) const {
    const TensorSlot& slot = tensors_[tensor];
    if (slot.is_constant) return detail::str_cat(slot.info.to_string(), " constant");
    if (slot.memory != 0)
      return detail::str_cat(slot.info.to_string(), " @", device_kinds_[slot.memory - 1].name, ':', slot.offset);
    return detail::str_cat(slot.info.to_string(), " @", slot.offset);
  }
  using Clock = std::chrono::steady_clock;

  Expected<TensorInfo> binding_info(Step::Kind kind, BindingId id) const;
  template <class Binding>
  Status check_bindings(std::span<const Binding> given, Step::Kind kind) const;
  template <bool Profiled>
  Status run_steps(WorkingMemory& memory, std::span<const InputBinding> inputs, std::span<const OutputBinding> outputs,
                   InferenceTiming* timing) const;
  void find_zero_copy_views();
  /// Points the device readers of `input`'s copies at `host` wrapped for their device, skipping the
  /// copies, or (host == nullptr, or the device cannot wrap it) back at the copies' outputs.
  Status import_to_devices(WorkingMemory& memory, const Step& input, const void* host) const;
  /// Shows the outputs of step `s` to the debug callback, read back to the host if they live on a device.
  Status report_outputs(const WorkingMemory& memory, std::size_t s) const;
  bool aligned(const void* p) const { return reinterpret_cast<std::uintptr_t>(p) % alignment_ == 0; }
  static double micros(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double, std::micro>(to - from).count();
  }

  std::vector<std::string> layer_names_;
  std::vector<std::string_view> layer_ops_;
  std::vector<TensorSlot> tensors_;
  std::vector<DeviceMemoryKind> device_kinds_;
  std::vector<AlignedBuffer> constants_;
  std::vector<Step> steps_;
  std::vector<BindingId> input_bindings_, output_bindings_;
  MemorySummary memory_;
  std::size_t alignment_ = 64;
  LoadOptions options_;
  detail::ErasedAllocator allocator_;
  Clock::time_point loaded_at_;

  template <class Binding>
  struct ImportTable {
    std::map<ImportedId, Binding> bindings;
    ImportedId next = 0;
  };
  template <class Binding>
  ImportTable<Binding>& imports() const {
    if constexpr (std::same_as<Binding, InputBinding>) return imported_inputs_;
    else return imported_outputs_;
  }
  template <class Binding>
  Expected<std::vector<Binding>> with_imported(std::span<const Binding> given, std::span<const ImportedId> ids) const;

  mutable std::mutex import_mutex_;
  mutable ImportTable<InputBinding> imported_inputs_;
  mutable ImportTable<OutputBinding> imported_outputs_;
  mutable std::mutex profile_mutex_;
  mutable Profile profile_;
  std::mutex mutex_;
  WorkingMemory own_memory_;
};

template <Backend... Bs>
Expected<std::shared_ptr<LoadedNetwork>> LoadedNetwork::load(const OptimizedNetwork<Bs...>& optimized,
                                                             std::tuple<typename Bs::context...>& contexts,
                                                             LoadOptions options, detail::ErasedAllocator allocator) {
  const auto load_start = Clock::now();
  const Network& network = optimized.network();
  auto loaded = std::make_shared<LoadedNetwork>();
  loaded->alignment_ = std::max({Bs::alignment...});
  loaded->allocator_ = allocator;
  for (const Layer& layer : network.layers()) {
    loaded->layer_names_.push_back(layer.name);
    loaded->layer_ops_.push_back(layer.op_name());
  }

  // Tensor table: every output of every executed layer. Constants get their storage now.
  std::vector<std::vector<std::size_t>> slot_of(network.num_layers());
  const auto order = optimized.execution_order();
  for (LayerId id : order) {
    const Layer& layer = network.layer(id);
    const auto* constant = layer.params_if<ops::Constant>();
    for (const TensorInfo& info : layer.outputs) {
      slot_of[id].push_back(loaded->tensors_.size());
      TensorSlot slot{info};
      if (constant) {
        AlignedBuffer storage(constant->data.size(), loaded->alignment_, allocator);
        if (!constant->data.empty()) {
          if (storage.data() == nullptr)
            return Status::error(ErrorCode::OutOfMemory, "cannot allocate ", constant->data.size(),
                                 " bytes for constant '", layer.name, "'");
          std::memcpy(storage.data(), constant->data.data(), constant->data.size());
        }
        slot.is_constant = true;
        slot.data = storage.data();
        loaded->memory_.constant_bytes += constant->data.size();
        loaded->constants_.push_back(std::move(storage));
      }
      loaded->tensors_.push_back(std::move(slot));
    }
  }
  // The others live in the arena.
  std::vector<BufferRequest> requests;
  std::vector<std::size_t> request_tensor;
  for (const ArenaTensor& tensor : arena_tensors(network)) {
    requests.push_back(tensor.request);
    request_tensor.push_back(slot_of[tensor.slot.layer][tensor.slot.index]);
  }

  for (const LayerId id : order) {
    const Layer& layer = network.layer(id);
    Step entry;
    entry.layer = id;
    for (const auto& input : layer.inputs) entry.inputs.push_back(slot_of[input->layer][input->index]);
    entry.outputs = slot_of[id];
    Status status = std::visit(
        [&]<class P>(const P& descriptor) -> Status {
          using Op = typename P::op;
          if constexpr (std::same_as<Op, ops::Input>) {
            entry.kind = Step::Kind::Input;
            entry.binding = descriptor.value.binding;
            loaded->input_bindings_.push_back(entry.binding);
          } else if constexpr (std::same_as<Op, ops::Output>) {
            entry.kind = Step::Kind::Output;
            entry.binding = descriptor.value.binding;
            loaded->output_bindings_.push_back(entry.binding);
          } else if constexpr (!ops::is_structural_v<Op>) {
            const LayerInputs inputs(network, layer);
            const WorkloadInfo<Op> info = inputs.info_for<Op>(layer, descriptor.value);
            Status capable;
            visit_backend<Bs...>(optimized.backend_index(id), [&]<class B>(std::type_identity<B>) {
              if constexpr (supports_v<Op, B>) {
                constexpr BackendCapabilities capabilities = capabilities_of<B>();
                if (options.async_execution && !capabilities.async_execution)
                  capable = Status::error(ErrorCode::Unsupported, "backend ", B::id,
                                          " cannot execute asynchronously; load without async_execution");
                if (options.import_inputs && !capabilities.import_host_memory)
                  capable = Status::error(ErrorCode::Unsupported, "backend ", B::id,
                                          " cannot read imported host memory; load without import_inputs");
                if (options.export_outputs && !capabilities.export_host_memory)
                  capable = Status::error(ErrorCode::Unsupported, "backend ", B::id,
                                          " cannot write exported host memory; load without export_outputs");
                if (options.profiling && !capabilities.profiling)
                  capable = Status::error(ErrorCode::Unsupported, "backend ", B::id,
                                          " cannot profile its workloads; load without profiling");
                auto& context = std::get<index_of_v<B, TypeList<Bs...>>>(contexts);  // by position: contexts may share a type
                std::size_t level = optimized.workload_level(id);
                for_each_workload_in_chain<Op, B>([&]<class W>(std::type_identity<W>) {
                  if (level-- != 0) return false;
                  // Workloads that prepare device state at load (programs, weights) are made by
                  // W::create(info, context), which may fail; the others by their constructor.
                  if constexpr (requires { { W::create(info, context) } -> std::same_as<Expected<W>>; }) {
                    Expected<W> made = W::create(info, context);
                    if (!made) {
                      if (capable) capable = made.status();
                      return true;
                    }
                    entry.workload = ErasedWorkload::make<W, typename B::context>(std::move(*made));
                  } else {
                    entry.workload = ErasedWorkload::make<W, typename B::context>(W(info));
                  }
                  return true;
                });
                entry.context = &context;
                entry.backend = B::id;
                if constexpr (DeviceTimingContext<typename B::context>) {
                  using Context = typename B::context;
                  entry.begin_device_timing = [](void* c) { static_cast<Context*>(c)->begin_device_timing(); };
                  entry.end_device_timing = [](void* c) { return static_cast<Context*>(c)->end_device_timing(); };
                }
                if constexpr (!has_host_memory_v<B>) {
                  const auto* copy = layer.params_if<ops::MemCopy>();
                  if (!copy || copy->direction != ops::CopyDirection::DeviceToHost) {
                    auto& kinds = loaded->device_kinds_;
                    const auto known = std::ranges::find(kinds, B::memory::name, &DeviceMemoryKind::name);
                    const auto memory = static_cast<std::uint8_t>(known - kinds.begin() + 1);
                    if (known == kinds.end()) kinds.push_back(DeviceMemoryKind::of<B>(context));
                    for (std::size_t t : entry.outputs) loaded->tensors_[t].memory = memory;
                  }
                }
              }
            });
            return capable;
          }
          return Status::ok();
        },
        layer.descriptor);
    if (!status) return status.with_context(layer.describe());
    if (!layer.is<ops::Constant>()) loaded->steps_.push_back(std::move(entry));
  }

  loaded->find_zero_copy_views();
  // One plan per memory kind: the host arena first, then each device kind's.
  loaded->memory_.strategy = options.memory_planner.name;
  for (std::uint8_t memory = 0; memory <= loaded->device_kinds_.size(); ++memory) {
    std::vector<BufferRequest> kind_requests;
    std::vector<std::size_t> kind_tensors;
    for (std::size_t r = 0; r < requests.size(); ++r)
      if (loaded->tensors_[request_tensor[r]].memory == memory) {
        kind_requests.push_back(requests[r]);
        kind_tensors.push_back(request_tensor[r]);
      }
    const std::size_t alignment = memory == 0 ? loaded->alignment_ : loaded->device_kinds_[memory - 1].alignment;
    const MemoryPlan plan = options.memory_planner.plan(kind_requests, alignment);
    if (auto valid = validate_plan(kind_requests, plan, alignment); !valid)
      return valid.with_context(detail::str_cat("memory plan of strategy '", options.memory_planner.name, "' for ",
                                                memory == 0 ? HostMemory::name : loaded->device_kinds_[memory - 1].name,
                                                " memory"));
    for (std::size_t r = 0; r < kind_requests.size(); ++r) loaded->tensors_[kind_tensors[r]].offset = plan.offsets[r];
    if (memory == 0) {
      loaded->memory_.tensors = kind_requests.size();
      loaded->memory_.arena_bytes = plan.arena_size;
      loaded->memory_.lower_bound_bytes = plan.lower_bound;
      loaded->memory_.unplanned_bytes = plan_memory<OneBlockPerTensor>(kind_requests, alignment).arena_size;
    } else {
      loaded->device_kinds_[memory - 1].arena_bytes = plan.arena_size;
      loaded->memory_.device_tensors += kind_requests.size();
      loaded->memory_.device_arena_bytes += plan.arena_size;
      loaded->memory_.device_lower_bound_bytes += plan.lower_bound;
    }
  }
  loaded->options_ = std::move(options);
  loaded->loaded_at_ = Clock::now();
  loaded->profile_.load_us = micros(load_start, loaded->loaded_at_);
  return loaded;
}

inline Status LoadedNetwork::allocate(WorkingMemory& memory) const {
  if (memory.allocated) return Status::ok();
  memory.arena = AlignedBuffer(memory_.arena_bytes, alignment_, allocator_);
  if (memory_.arena_bytes != 0 && memory.arena.data() == nullptr)
    return Status::error(ErrorCode::OutOfMemory, "cannot allocate the ", memory_.arena_bytes, "-byte arena");
  memory.device_arenas.clear();
  for (const DeviceMemoryKind& kind : device_kinds_) {
    auto arena = kind.allocate(kind.context, kind.arena_bytes);
    if (!arena) return arena.status().with_context(detail::str_cat("the ", kind.arena_bytes, "-byte ", kind.name, " arena"));
    memory.device_arenas.push_back(std::move(*arena));
  }
  // Device views are made once per tensor, not once per reader.
  std::vector<void*> device_views(tensors_.size(), nullptr);
  for (std::size_t t = 0; t < tensors_.size(); ++t) {
    const TensorSlot& slot = tensors_[t];
    if (slot.is_constant || slot.memory == 0) continue;
    auto view = memory.device_arenas[slot.memory - 1].view(slot.offset, slot.info.num_bytes());
    if (!view) return view.status();
    device_views[t] = *view;
  }
  auto address = [&](std::size_t t) -> void* {
    const TensorSlot& slot = tensors_[t];
    if (slot.is_constant) return const_cast<std::byte*>(slot.data);
    return slot.memory == 0 ? memory.arena.data() + slot.offset : device_views[t];
  };
  memory.inputs.assign(steps_.size(), {});
  memory.outputs.assign(steps_.size(), {});
  memory.exported.assign(steps_.size(), false);
  memory.skipped.assign(steps_.size(), false);
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    for (std::size_t t : steps_[s].inputs) memory.inputs[s].push_back({tensors_[t].info, address(t)});
    for (std::size_t t : steps_[s].outputs) memory.outputs[s].push_back({tensors_[t].info, address(t)});
  }
  memory.allocated = true;
  return Status::ok();
}

inline Status LoadedNetwork::import_to_devices(WorkingMemory& memory, const Step& input, const void* host) const {
  for (const auto& [copy_step, position] : input.zero_copy_views) {
    const Step& copy = steps_[copy_step];
    if (copy.import_kind == 0) continue;
    const void* handle = memory.outputs[copy_step][0].data;
    memory.skipped[copy_step] = false;
    const std::uint64_t bytes = memory.outputs[copy_step][0].info.num_bytes();
    if (host != nullptr && bytes != 0) {
      const DeviceMemoryKind& kind = device_kinds_[copy.import_kind - 1];
      auto imported = kind.import_host(kind.context, host, bytes);
      if (!imported) return imported.status();
      handle = imported->handle;
      memory.device_imports.push_back(std::move(*imported));
      memory.skipped[copy_step] = true;
    }
    for (const auto& [reader, slot] : copy.device_readers) memory.inputs[reader][slot].data = handle;
  }
  return Status::ok();
}

inline Status LoadedNetwork::report_outputs(const WorkingMemory& memory, std::size_t s) const {
  const Step& step = steps_[s];
  for (std::uint32_t i = 0; i < memory.outputs[s].size(); ++i) {
    Tensor tensor = memory.outputs[s][i];
    std::vector<std::byte> host_copy;
    if (const std::uint8_t kind = tensors_[step.outputs[i]].memory; kind != 0) {
      host_copy.resize(tensor.info.num_bytes());
      const DeviceMemoryKind& device = device_kinds_[kind - 1];
      if (auto status = device.read(device.context, tensor.data, host_copy.data(), host_copy.size()); !status)
        return status.with_context(detail::str_cat("reading output ", i, " of layer '", layer_names_[step.layer],
                                                   "' for the debug callback"));
      tensor.data = host_copy.data();
    }
    options_.debug_callback(DebugEvent{step.layer, layer_names_[step.layer], layer_ops_[step.layer], step.backend, i,
                                       {tensor.info, tensor.data}});
  }
  return Status::ok();
}

inline void LoadedNetwork::find_zero_copy_views() {
  auto readers_of = [&](std::size_t tensor) {
    std::vector<std::pair<std::size_t, std::size_t>> views;
    for (std::size_t s = 0; s < steps_.size(); ++s)
      for (std::size_t k = 0; k < steps_[s].inputs.size(); ++k)
        if (steps_[s].inputs[k] == tensor) views.emplace_back(s, k);
    return views;
  };
  for (Step& step : steps_) {
    if (step.kind == Step::Kind::Input) {
      step.zero_copy_views = readers_of(step.outputs[0]);
      // A copy of this input to a device that reads host memory in place can be skipped.
      for (const auto& [reader, position] : step.zero_copy_views) {
        Step& copy = steps_[reader];
        if (copy.kind != Step::Kind::Compute || layer_ops_[copy.layer] != ops::MemCopy::name) continue;
        const std::uint8_t kind = tensors_[copy.outputs[0]].memory;
        if (kind == 0 || device_kinds_[kind - 1].import_host == nullptr) continue;
        copy.import_kind = kind;
        copy.device_readers = readers_of(copy.outputs[0]);
      }
    }
    if (step.kind == Step::Kind::Output) {
      // Exportable: an intermediate tensor whose only reader is this output.
      const std::size_t tensor = step.inputs[0];
      std::size_t readers = 0;
      for (const Step& other : steps_) readers += static_cast<std::size_t>(std::ranges::count(other.inputs, tensor));
      for (std::size_t s = 0; s < steps_.size() && readers == 1; ++s)
        if (steps_[s].kind == Step::Kind::Compute)
          for (std::size_t k = 0; k < steps_[s].outputs.size(); ++k)
            if (steps_[s].outputs[k] == tensor) step.zero_copy_views.emplace_back(s, k);
    }
  }
}

inline std::string LoadedNetwork::to_text() const {
  std::string text = detail::str_cat("memory: ", memory_.strategy, ", arena ", memory_.arena_bytes, " bytes (lower bound ",
                                     memory_.lower_bound_bytes, "), constants ", memory_.constant_bytes, " bytes");
  for (const DeviceMemoryKind& kind : device_kinds_)
    text += detail::str_cat(", ", kind.name, " arena ", kind.arena_bytes, " bytes");
  text += '\n';
  for (const Step& step : steps_) {
    text += detail::str_cat(layer_names_[step.layer], " (", layer_ops_[step.layer], ")");
    if (!step.backend.empty()) text += detail::str_cat(" on ", step.backend);
    if (step.kind != Step::Kind::Compute) text += detail::str_cat(" binding ", step.binding);
    for (std::size_t t : step.inputs) text += detail::str_cat("\n  in  ", tensor_label(t));
    for (std::size_t t : step.outputs) text += detail::str_cat("\n  out ", tensor_label(t));
    text += '\n';
  }
  return text;
}

inline std::string LoadedNetwork::to_dot() const {
  std::string dot = "digraph kiln {\n  node [shape=box, fontname=\"monospace\"];\n";
  std::vector<std::size_t> producer(tensors_.size(), steps_.size());
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    const Step& step = steps_[s];
    dot += detail::str_cat("  step", s, " [label=\"", layer_names_[step.layer], "\\n", layer_ops_[step.layer],
                           step.backend.empty() ? std::string() : detail::str_cat("\\n", step.backend), "\"];\n");
    for (std::size_t t : step.outputs) producer[t] = s;
  }
  for (std::size_t s = 0; s < steps_.size(); ++s)
    for (std::size_t t : steps_[s].inputs) {
      if (producer[t] == steps_.size()) {  // a constant: drawn as its own node
        dot += detail::str_cat("  tensor", t, " [shape=note, label=\"", tensor_label(t), "\"];\n  tensor", t, " -> step", s,
                               ";\n");
        continue;
      }
      dot += detail::str_cat("  step", producer[t], " -> step", s, " [label=\"", tensor_label(t), "\"];\n");
    }
  return dot + "}\n";
}

inline Expected<TensorInfo> LoadedNetwork::binding_info(Step::Kind kind, BindingId id) const {
  for (const Step& step : steps_)
    if (step.kind == kind && step.binding == id)
      return tensors_[kind == Step::Kind::Input ? step.outputs[0] : step.inputs[0]].info;
  const auto& known = kind == Step::Kind::Input ? input_bindings_ : output_bindings_;
  return Status::error(ErrorCode::NotFound, kind == Step::Kind::Input ? "input" : "output", " binding ", id,
                       " does not exist; this network has ", kind == Step::Kind::Input ? "inputs " : "outputs ",
                       detail::list_to_string<BindingId>(known));
}

template <class Binding>
Status LoadedNetwork::check_bindings(std::span<const Binding> given, Step::Kind kind) const {
  const bool is_input = kind == Step::Kind::Input;
  const std::string_view what = is_input ? "input" : "output";
  const auto& expected = is_input ? input_bindings_ : output_bindings_;
  for (std::size_t i = 0; i < given.size(); ++i) {
    auto info = binding_info(kind, given[i].id);
    if (!info) return info.status();
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
  for (BindingId id : expected) {
    bool found = false;
    for (const auto& binding : given) found = found || binding.id == id;
    if (!found) return Status::error(ErrorCode::InvalidArgument, what, " binding ", id, " is missing");
  }
  return Status::ok();
}

template <bool Profiled>
Status LoadedNetwork::run_steps(WorkingMemory& memory, std::span<const InputBinding> inputs,
                                std::span<const OutputBinding> outputs, InferenceTiming* timing) const {
  const auto start = Clock::now();
  memory.device_imports.clear();  // the last inference's wrapped buffers; the device is done with them
  // Profiled device steps: which timing entry each fills in once the device has finished.
  std::vector<std::pair<std::size_t, std::function<std::optional<DeviceSpan>()>>> device_timings;
  // Point every exporting producer at the user's buffer, or back at the arena (the output step's
  // own view) when the buffer is misaligned.
  if (options_.export_outputs)
    for (std::size_t s = 0; s < steps_.size(); ++s) {
      const Step& step = steps_[s];
      if (step.kind != Step::Kind::Output || step.zero_copy_views.empty()) continue;
      void* target = const_cast<void*>(memory.inputs[s][0].data);  // the arena, which is writable
      memory.exported[s] = false;
      for (const OutputBinding& b : outputs)
        if (b.id == step.binding && aligned(b.tensor.data)) {
          target = b.tensor.data;
          memory.exported[s] = true;
        }
      const auto [producer, position] = step.zero_copy_views.front();
      memory.outputs[producer][position].data = target;
    }
  Status result = [&]() -> Status {
  for (std::size_t s = 0; s < steps_.size(); ++s) {
      const Step& step = steps_[s];
      switch (step.kind) {
        case Step::Kind::Input:
          for (const InputBinding& b : inputs) {
            if (b.id != step.binding) continue;
            const bool import = options_.import_inputs && aligned(b.tensor.data);
            // Readers see the user's buffer (import) or the arena copy; neither is ever written.
            if (options_.import_inputs) {
              const void* source = import ? b.tensor.data : memory.outputs[s][0].data;
              for (const auto& [reader, position] : step.zero_copy_views) memory.inputs[reader][position].data = source;
              if (auto status = import_to_devices(memory, step, import ? b.tensor.data : nullptr); !status)
                return status.with_context(detail::str_cat("importing input binding ", b.id));
            }
            if (!import && b.tensor.info.num_bytes() != 0)
              std::memcpy(memory.outputs[s][0].data, b.tensor.data, b.tensor.info.num_bytes());
          }
          break;
        case Step::Kind::Output:
          for (const OutputBinding& b : outputs)
            if (b.id == step.binding && !memory.exported[s] && b.tensor.info.num_bytes() != 0)
              std::memcpy(b.tensor.data, memory.inputs[s][0].data, b.tensor.info.num_bytes());
          break;
        case Step::Kind::Compute: {
          if (memory.skipped[s]) break;
          const auto layer_start = Profiled ? Clock::now() : Clock::time_point{};
          if (Profiled && step.begin_device_timing) step.begin_device_timing(step.context);
          Status status = step.workload.run(memory.inputs[s], memory.outputs[s], step.context);
          if (Profiled && step.end_device_timing) device_timings.emplace_back(timing->layers.size(), step.end_device_timing(step.context));
          if (!status) return status.with_context(detail::str_cat("layer '", layer_names_[step.layer], "'"));
          if constexpr (Profiled)
            timing->layers.push_back({layer_names_[step.layer], layer_ops_[step.layer], step.backend,
                                      micros(start, layer_start), micros(layer_start, Clock::now())});
          if (options_.debug_callback)
            if (auto status = report_outputs(memory, s); !status) return status;
          break;
        }
      }
    }
    return Status::ok();
  }();
  // Every inference ends with its devices idle, failed or not: a device may still be reading host
  // memory (an input's write, never waited for when nothing is read back), which the caller may
  // free or reuse as soon as this returns.
  for (const DeviceMemoryKind& kind : device_kinds_)
    if (auto finished = kind.finish(kind.context); !finished && result) result = finished.with_context("finishing the inference");
  if (!result) return result;
  // The inference has waited for its device results, so the device's own times are known: a
  // device layer lasted from its first command's start to its last command's end.
  for (auto& [index, query] : device_timings)
    if (const std::optional<DeviceSpan> span = query()) {
      timing->layers[index].start_us += span->enqueue_to_start_us;
      timing->layers[index].duration_us = span->duration_us;
    }
  return Status::ok();
}

template <class Binding>
Expected<std::vector<ImportedId>> LoadedNetwork::import(std::span<const Binding> bindings) const {
  constexpr bool is_input = std::same_as<Binding, InputBinding>;
  constexpr std::string_view what = is_input ? "input" : "output";
  if (!(is_input ? options_.import_inputs : options_.export_outputs))
    return Status::error(ErrorCode::InvalidArgument, "pre-importing ", what, "s needs the network loaded with ",
                         is_input ? "import_inputs" : "export_outputs");
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    auto info = binding_info(is_input ? Step::Kind::Input : Step::Kind::Output, bindings[i].id);
    if (!info) return info.status();
    const auto& tensor = bindings[i].tensor;
    if (tensor.info.type != info->type || tensor.info.shape != info->shape)
      return Status::error(ErrorCode::InvalidArgument, what, " binding ", bindings[i].id, " expects ", info->to_string(),
                           " but the buffer is ", tensor.info.to_string());
    if (!aligned(tensor.data) || (tensor.data == nullptr && info->num_bytes() != 0))
      return Status::error(ErrorCode::InvalidArgument, "pre-imported ", what, " binding ", bindings[i].id,
                           " needs a non-null buffer aligned to ", alignment_, " bytes");
  }
  std::lock_guard lock(import_mutex_);
  auto& table = imports<Binding>();
  std::vector<ImportedId> ids;
  for (const Binding& binding : bindings) {
    ids.push_back(table.next++);
    table.bindings.emplace(ids.back(), binding);
  }
  return ids;
}

template <class Binding>
Status LoadedNetwork::clear_imported(std::span<const ImportedId> ids) const {
  constexpr std::string_view what = std::same_as<Binding, InputBinding> ? "input" : "output";
  std::lock_guard lock(import_mutex_);
  auto& table = imports<Binding>();
  for (ImportedId id : ids)
    if (table.bindings.count(id) == 0)
      return Status::error(ErrorCode::NotFound, "pre-imported ", what, ' ', id, " does not exist (never imported, or cleared)");
  for (ImportedId id : ids) table.bindings.erase(id);
  return Status::ok();
}

template <class Binding>
Expected<std::vector<Binding>> LoadedNetwork::with_imported(std::span<const Binding> given,
                                                            std::span<const ImportedId> ids) const {
  std::vector<Binding> all(given.begin(), given.end());
  std::lock_guard lock(import_mutex_);
  const auto& table = imports<Binding>();
  for (ImportedId id : ids) {
    auto it = table.bindings.find(id);
    if (it == table.bindings.end())
      return Status::error(ErrorCode::NotFound, "pre-imported ", std::same_as<Binding, InputBinding> ? "input " : "output ",
                           id, " does not exist (never imported, or cleared)");
    all.push_back(it->second);
  }
  return all;
}

inline Status LoadedNetwork::execute(WorkingMemory& memory, std::span<const InputBinding> given_inputs,
                                     std::span<const OutputBinding> given_outputs,
                                     std::span<const ImportedId> imported_inputs,
                                     std::span<const ImportedId> imported_outputs) const {
  // Merged lists are built only when pre-imported ids are given: no allocation per inference otherwise.
  std::vector<InputBinding> merged_inputs;
  std::vector<OutputBinding> merged_outputs;
  std::span<const InputBinding> inputs = given_inputs;
  std::span<const OutputBinding> outputs = given_outputs;
  if (!imported_inputs.empty()) {
    auto all = with_imported(given_inputs, imported_inputs);
    if (!all) return all.status();
    merged_inputs = std::move(*all);
    inputs = merged_inputs;
  }
  if (!imported_outputs.empty()) {
    auto all = with_imported(given_outputs, imported_outputs);
    if (!all) return all.status();
    merged_outputs = std::move(*all);
    outputs = merged_outputs;
  }
  if (auto s = check_bindings(inputs, Step::Kind::Input); !s) return s;
  if (auto s = check_bindings(outputs, Step::Kind::Output); !s) return s;
  if (auto s = allocate(memory); !s) return s;
  if (!options_.profiling) return run_steps<false>(memory, inputs, outputs, nullptr);
  InferenceTiming timing;
  const auto start = Clock::now();
  timing.start_us = micros(loaded_at_, start);
  Status status = run_steps<true>(memory, inputs, outputs, &timing);
  timing.duration_us = micros(start, Clock::now());
  std::lock_guard lock(profile_mutex_);
  profile_.inferences.push_back(std::move(timing));
  return status;
}

}  // namespace kiln::detail
