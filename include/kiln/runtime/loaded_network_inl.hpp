// SPDX-License-Identifier: Apache-2.0
// LoadedNetwork's definitions (see loaded_network.hpp): loading, and one inference — bindings checked,
// inputs in, every step, outputs out, the devices idle at the end.
#pragma once

#include <cstring>

#include "kiln/runtime/loaded_network.hpp"

namespace kiln::detail {

/// Fails when `backend` cannot do what `options` ask of every backend a network uses.
KILN_INLINE Status check_capabilities(const BackendDescription& backend, const LoadOptions& options) {
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

KILN_INLINE Expected<std::shared_ptr<LoadedNetwork>> LoadedNetwork::load(const OptimizedGraph& graph,
                                                                         const PackDescription& pack,
                                                                         std::span<void* const> contexts,
                                                                         LoadOptions options, ErasedAllocator allocator,
                                                                         Network* consumed) {
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
  layout.tensors.add_outputs(network, alignment);

  const auto order = network.execution_order();
  ConstantReads reads(network, consumed);
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
    reads.made(layer, step);
    layout.steps.push_back(std::move(step));
  }

  if (auto status = layout.tensors.load_constants(network, reads, allocator); !status) return status;
  const LoadOptions& chosen = loaded->options_;
  if (chosen.import_inputs || chosen.export_outputs) loaded->zero_copy_.find_views(layout);
  if (auto status = layout.tensors.plan(network, chosen.memory_planner); !status) return status;
  loaded->loaded_at_ = Clock::now();
  loaded->profile_.reset(micros(load_start, loaded->loaded_at_), layout.steps.size(),
                         chosen.profiling ? chosen.profile_history : 0);
  return loaded;
}

KILN_INLINE Expected<Step> LoadedNetwork::make_compute_step(const Network& network, LayerId id, std::uint32_t position,
                                                            const LayerAssignment& assignment,
                                                            const PackDescription& pack,
                                                            std::span<void* const> contexts) {
  const Layer& layer = network.layer(id);
  const BackendDescription& backend = pack.backends[assignment.backend];
  if (auto status = check_capabilities(backend, options_); !status) return status;
  Step step{.kind = Step::Kind::Compute, .layer = id, .backend = assignment.backend};
  step.context = backend.chain[assignment.level].context(contexts[assignment.backend]);
  const LayerInputs inputs(network, layer);
  KeptMemory kept;
  LayerInfo info = inputs.info_of(layer);
  info.kept = &kept;
  auto workload = assignment.workload->create(info, step.context);
  if (!workload) return workload.status();
  step.workload = std::move(*workload);
  step.kept_bytes = kept.bytes();

  // A device backend's outputs live in its memory, except what a copy to the host writes.
  std::uint8_t memory = 0;
  const auto* copy = layer.params_if<ops::MemCopy>();
  if (!backend.host_memory) {
    memory = layout_.tensors.device_kind(backend, contexts[assignment.backend]);
    if (!copy || copy->direction != ops::CopyDirection::DeviceToHost)
      for (std::uint32_t i = 0; i < layer.outputs.size(); ++i)
        layout_.tensors.place_in(layout_.tensors.slot_of({id, i}), memory);
  }
  if (const ScratchSize& scratch = step.workload.scratch(); scratch.bytes != 0) {
    const std::size_t alignment =
        memory == 0 ? layout_.tensors.alignment() : layout_.tensors.device_kinds()[memory - 1].alignment;
    if (alignment % scratch.alignment != 0)
      return Status::error(ErrorCode::Unsupported, "its workload asks for scratch aligned to ", scratch.alignment,
                           " bytes, more than the ", alignment, " its memory kind's arena guarantees");
    step.scratch = layout_.tensors.add_scratch(memory, scratch.bytes, position);
  }
  return step;
}

KILN_INLINE Status LoadedNetwork::allocate(WorkingMemory& memory) const {
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

KILN_INLINE Status LoadedNetwork::execute(WorkingMemory& memory, std::span<const InputBinding> given_inputs,
                                          std::span<const OutputBinding> given_outputs,
                                          std::span<const ImportedId> imported_inputs,
                                          std::span<const ImportedId> imported_outputs) const {
  // Merged lists are built only when pre-imported ids are given: no allocation per inference otherwise.
  std::vector<InputBinding> merged_inputs;
  std::vector<OutputBinding> merged_outputs;
  std::span<const InputBinding> inputs = given_inputs;
  std::span<const OutputBinding> outputs = given_outputs;
  if (!imported_inputs.empty()) {
    auto all = zero_copy_.with_imported(given_inputs, imported_inputs);
    if (!all) return all.status();
    merged_inputs = std::move(*all);
    inputs = merged_inputs;
  }
  if (!imported_outputs.empty()) {
    auto all = zero_copy_.with_imported(given_outputs, imported_outputs);
    if (!all) return all.status();
    merged_outputs = std::move(*all);
    outputs = merged_outputs;
  }
  if (auto s = check_bindings(inputs, Step::Kind::Input); !s) return s;
  if (auto s = check_bindings(outputs, Step::Kind::Output); !s) return s;
  if (auto s = allocate(memory); !s) return s;
  if (!options_.profiling) return run_steps<false>(memory, inputs, outputs);
  const auto start = Clock::now();
  memory.timing.start_us = micros(loaded_at_, start);
  memory.timing.steps.clear();
  Status status = run_steps<true>(memory, inputs, outputs);
  memory.timing.duration_us = micros(start, Clock::now());
  profile_.record(memory.timing);
  return status;
}

template <bool Profiled>
Status LoadedNetwork::run_steps(WorkingMemory& memory, std::span<const InputBinding> inputs,
                                std::span<const OutputBinding> outputs) const {
  const auto start = Clock::now();
  memory.device_imports.clear();  // the last inference's wrapped buffers; the device is done with them
  memory.device_timings.clear();
  if (options_.export_outputs) zero_copy_.bind_outputs(layout_, memory, outputs);
  const std::size_t alignment = layout_.tensors.alignment();
  Status result = [&]() -> Status {
    for (std::size_t s = 0; s < layout_.steps.size(); ++s) {
      const Step& step = layout_.steps[s];
      switch (step.kind) {
        case Step::Kind::Input:
          for (const InputBinding& b : inputs) {
            if (b.id != step.binding) continue;
            const bool import =
                options_.import_inputs && reinterpret_cast<std::uintptr_t>(b.tensor.data) % alignment == 0;
            if (options_.import_inputs)
              if (auto status = zero_copy_.bind_input(layout_, memory, s, b.tensor.data, import); !status)
                return status.with_context(str_cat("importing input binding ", b.id));
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
          const BackendInstance& backend = layout_.backends[step.backend];
          const auto layer_start = Profiled ? Clock::now() : Clock::time_point{};
          const bool device_timed = Profiled && backend.hooks->begin_device_timing != nullptr;
          if (device_timed) backend.hooks->begin_device_timing(backend.context);
          Status status = step.workload.run(memory.inputs[s], memory.outputs[s], step.context, memory.scratch[s]);
          if (device_timed)
            memory.device_timings.emplace_back(memory.timing.steps.size(),
                                               backend.hooks->end_device_timing(backend.context));
          if (!status) return status.with_context(str_cat("layer '", layout_.layer_names[step.layer], "'"));
          if constexpr (Profiled)
            memory.timing.steps.push_back(
                {static_cast<std::uint32_t>(s), micros(start, layer_start), micros(layer_start, Clock::now())});
          if (options_.debug_callback)
            if (auto reported = report_outputs(memory, s); !reported) return reported;
          break;
        }
      }
    }
    return Status::ok();
  }();
  // Every inference ends with its devices idle, failed or not: a device may still be reading host
  // memory (an input's write, never waited for when nothing is read back), which the caller may
  // free or reuse as soon as this returns.
  for (const DeviceMemoryKind& kind : layout_.tensors.device_kinds())
    if (auto finished = kind.hooks->finish(kind.context); !finished && result)
      result = finished.with_context("finishing the inference");
  if (!result) return result;
  // The inference has waited for its device results, so the device's own times are known: a
  // device layer lasted from its first command's start to its last command's end.
  for (auto& [index, query] : memory.device_timings)
    if (const std::optional<DeviceSpan> span = query()) {
      memory.timing.steps[index].start_us += span->enqueue_to_start_us;
      memory.timing.steps[index].duration_us = span->duration_us;
    }
  return Status::ok();
}

KILN_INLINE Status LoadedNetwork::report_outputs(const WorkingMemory& memory, std::size_t s) const {
  const Step& step = layout_.steps[s];
  for (std::uint32_t i = 0; i < memory.outputs[s].size(); ++i) {
    Tensor tensor = memory.outputs[s][i];
    std::vector<std::byte> host_copy;
    if (const std::uint8_t kind = layout_.tensors[step.outputs[i]].memory; kind != 0) {
      host_copy.resize(tensor.info.num_bytes());
      const DeviceMemoryKind& device = layout_.tensors.device_kinds()[kind - 1];
      if (auto status = device.hooks->read(device.context, tensor.data, host_copy.data(), host_copy.size()); !status)
        return status.with_context(
            str_cat("reading output ", i, " of layer '", layout_.layer_names[step.layer], "' for the debug callback"));
      tensor.data = host_copy.data();
    }
    options_.debug_callback(DebugEvent{step.layer,
                                       layout_.layer_names[step.layer],
                                       layout_.layer_ops[step.layer],
                                       layout_.backend_of(step),
                                       i,
                                       {tensor.info, tensor.data}});
  }
  return Status::ok();
}

}  // namespace kiln::detail
