// SPDX-License-Identifier: Apache-2.0
// The tensors of a network that live in the planned arena, with their lifetimes in execution steps.
#pragma once

#include <vector>

#include "kiln/graph/network.hpp"
#include "kiln/memory/memory_plan.hpp"

namespace kiln {

/// A tensor that needs arena memory: which layer output it is, and its size and lifetime.
struct ArenaTensor {
  OutputSlot slot;
  BufferRequest request;
};

/// Every output of an executed layer except constants, alive from the step that produces it
/// (its position in the execution order) to the last step that reads it — or to the end of the
/// inference when a host-to-device MemCopy reads it, since a device may still be reading it after
/// that step returned (its transfer is enqueued, not waited for). The network's shapes
/// must be inferred. Usable in constant expressions, so a network known at compile time can be
/// planned by the compiler.
constexpr std::vector<ArenaTensor> arena_tensors(const Network& network) {
  const auto order = network.execution_order();
  std::vector<std::uint32_t> step_of(network.num_layers(), 0);
  for (std::uint32_t step = 0; step < order.size(); ++step) step_of[order[step]] = step;
  std::vector<ArenaTensor> tensors;
  std::vector<std::vector<std::size_t>> index_of(network.num_layers());
  for (std::uint32_t step = 0; step < order.size(); ++step) {
    const Layer& layer = network.layer(order[step]);
    if (layer.is<ops::Constant>()) continue;
    for (std::uint32_t i = 0; i < layer.outputs.size(); ++i) {
      index_of[order[step]].push_back(tensors.size());
      tensors.push_back({{order[step], i}, {layer.outputs[i].num_bytes(), step, step}});
    }
  }
  const auto last_step = static_cast<std::uint32_t>(order.size() - 1);
  for (std::uint32_t step = 0; step < order.size(); ++step) {
    const auto* copy = network.layer(order[step]).params_if<ops::MemCopy>();
    const bool read_asynchronously = copy && copy->direction == ops::CopyDirection::HostToDevice;
    for (const auto& input : network.layer(order[step]).inputs) {
      if (network.layer(input->layer).is<ops::Constant>()) continue;
      BufferRequest& request = tensors[index_of[input->layer][input->index]].request;
      request.last_use = std::max(request.last_use, read_asynchronously ? last_step : step);
    }
  }
  return tensors;
}

}  // namespace kiln
