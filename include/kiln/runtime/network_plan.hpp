// SPDX-License-Identifier: Apache-2.0
// NetworkPlan: a loaded network's execution order and memory plan as plain data, which `kiln
// compile` writes into a header (docs/firmware.md) and tools print.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kiln/runtime/network_layout.hpp"

namespace kiln {

/// One tensor of a loaded network: output `producer` of a layer, a constant (the output of a
/// Constant layer) or a tensor at `offset` of its memory's arena.
struct PlannedTensor {
  TensorInfo info;
  OutputSlot producer;
  bool is_constant = false;
  bool in_host_memory = true;
  std::uint64_t offset = 0;
};

/// One step of a loaded network's execution, in order: a copy in from the caller's input, a
/// layer's workload, or a copy out to the caller's output.
struct PlannedStep {
  enum class Kind : std::uint8_t { Input, Output, Compute } kind = Kind::Compute;
  LayerId layer = 0;
  BindingId binding = 0;             ///< Input and Output steps
  std::string_view backend;          ///< Compute steps: the id of the backend that runs it
  std::vector<std::size_t> inputs;   ///< indices into NetworkPlan::tensors
  std::vector<std::size_t> outputs;  ///< indices into NetworkPlan::tensors
  std::uint64_t scratch_offset = 0;  ///< its scratch in its memory's arena, when it has some
  std::uint64_t scratch_bytes = 0;
  bool scratch_in_host_memory = true;
  std::uint64_t kept_bytes = 0;  ///< what its workload computed at load and keeps (KeptMemory)
};

/// The steps of a loaded network and where its tensors live.
struct NetworkPlan {
  std::vector<PlannedTensor> tensors;
  std::vector<PlannedStep> steps;
  std::uint64_t arena_bytes = 0;        ///< host memory
  std::uint64_t lower_bound_bytes = 0;  ///< host memory
  std::size_t alignment = 1;            ///< of every host arena offset
};

namespace detail {

inline NetworkPlan plan_of(const NetworkLayout& layout) {
  NetworkPlan plan;
  const TensorTable& table = layout.tensors;
  plan.arena_bytes = table.summary().arena_bytes;
  plan.lower_bound_bytes = table.summary().lower_bound_bytes;
  plan.alignment = table.alignment();
  plan.tensors.resize(table.size());
  for (std::size_t s = 0; s < table.size(); ++s)
    plan.tensors[s] = {table[s].info, {}, table[s].is_constant, table[s].memory == 0, table[s].offset};
  for (LayerId layer = 0; layer < layout.layer_names.size(); ++layer)
    for (std::uint32_t i = 0;; ++i) {
      const std::size_t slot = table.slot_of_or_none({layer, i});
      if (slot == no_slot) break;
      plan.tensors[slot].producer = {layer, i};
    }
  static_assert(int(PlannedStep::Kind::Input) == int(Step::Kind::Input) &&
                int(PlannedStep::Kind::Output) == int(Step::Kind::Output) &&
                int(PlannedStep::Kind::Compute) == int(Step::Kind::Compute));
  for (const Step& step : layout.steps) {
    PlannedStep& planned = plan.steps.emplace_back();
    planned.kind = static_cast<PlannedStep::Kind>(step.kind);
    planned.layer = step.layer;
    planned.binding = step.binding;
    planned.backend = layout.backend_of(step);
    planned.inputs = step.inputs;
    planned.outputs = step.outputs;
    planned.kept_bytes = step.kept_bytes;
    if (step.scratch != no_scratch) {
      const ScratchSlot& scratch = table.scratch(step.scratch);
      planned.scratch_offset = scratch.offset;
      planned.scratch_bytes = scratch.bytes;
      planned.scratch_in_host_memory = scratch.memory == 0;
    }
  }
  return plan;
}

}  // namespace detail
}  // namespace kiln
