// SPDX-License-Identifier: Apache-2.0
// How a loaded network runs one inference: bindings checked, inputs in, every step, outputs out, the
// devices idle at the end.
#pragma once

#include <cstring>

#include "kiln/runtime/loaded_network.hpp"

namespace kiln::detail {

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
            const bool import = options_.import_inputs && reinterpret_cast<std::uintptr_t>(b.tensor.data) % alignment == 0;
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
            memory.device_timings.emplace_back(memory.timing.steps.size(), backend.hooks->end_device_timing(backend.context));
          if (!status) return status.with_context(str_cat("layer '", layout_.layer_names[step.layer], "'"));
          if constexpr (Profiled)
            memory.timing.steps.push_back({static_cast<std::uint32_t>(s), micros(start, layer_start), micros(layer_start, Clock::now())});
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

inline Status LoadedNetwork::report_outputs(const WorkingMemory& memory, std::size_t s) const {
  const Step& step = layout_.steps[s];
  for (std::uint32_t i = 0; i < memory.outputs[s].size(); ++i) {
    Tensor tensor = memory.outputs[s][i];
    std::vector<std::byte> host_copy;
    if (const std::uint8_t kind = layout_.tensors[step.outputs[i]].memory; kind != 0) {
      host_copy.resize(tensor.info.num_bytes());
      const DeviceMemoryKind& device = layout_.tensors.device_kinds()[kind - 1];
      if (auto status = device.hooks->read(device.context, tensor.data, host_copy.data(), host_copy.size()); !status)
        return status.with_context(str_cat("reading output ", i, " of layer '", layout_.layer_names[step.layer],
                                           "' for the debug callback"));
      tensor.data = host_copy.data();
    }
    options_.debug_callback(DebugEvent{step.layer, layout_.layer_names[step.layer], layout_.layer_ops[step.layer],
                                       layout_.backend_of(step), i, {tensor.info, tensor.data}});
  }
  return Status::ok();
}

}  // namespace kiln::detail
