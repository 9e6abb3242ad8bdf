// SPDX-License-Identifier: Apache-2.0
// Backend assignment's definitions (see assign_backends.hpp).
#pragma once

#include "kiln/optimizer/assign_backends.hpp"

namespace kiln::detail {

KILN_INLINE Expected<std::vector<std::size_t>> preference_order(std::span<const BackendDescription> backends,
                                                                std::span<const std::string_view> preferences) {
  std::vector<std::size_t> order;
  if (preferences.empty()) {
    for (std::size_t i = 0; i < backends.size(); ++i) order.push_back(i);
    return order;
  }
  for (std::string_view id : preferences) {
    std::size_t found = backends.size();
    for (std::size_t i = 0; i < backends.size(); ++i)
      if (backends[i].id == id) found = i;
    if (found == backends.size()) {
      std::string known;
      for (const BackendDescription& b : backends) known += str_cat(known.empty() ? "" : ", ", b.id);
      return Status::error(ErrorCode::NotFound, "backend '", id, "' is not compiled into this runtime; it has ", known);
    }
    order.push_back(found);
  }
  return order;
}

KILN_INLINE Expected<LayerAssignment> find_workload(std::span<const BackendDescription> backends, std::size_t index,
                                                    std::size_t op, std::string_view op_name, const LayerInfo& layer) {
  const BackendDescription& backend = backends[index];
  if (!backend.available()) return Status::error(ErrorCode::Unsupported, backend.id, ": not available on this machine");
  const DataType type = layer.data_type();
  bool implements_op = false;
  std::string passed_over, refusals;
  for (std::size_t level = 0; level < backend.chain.size(); ++level) {
    bool has_type = false;
    const auto entries = backend.chain[level].entries(op);
    for (const WorkloadEntry& entry : entries) {
      implements_op = true;
      if (entry.data_type != type) continue;
      has_type = true;
      if (Status supported = entry.is_supported(layer); !supported) {
        refusals += str_cat(refusals.empty() ? "" : "; ", entry.backend, ": ", supported.message());
        passed_over += str_cat(passed_over.empty() ? "" : "; ", entry.backend, ": ", supported.message());
        continue;
      }
      return LayerAssignment{static_cast<std::uint8_t>(index), static_cast<std::uint8_t>(level), &entry, passed_over};
    }
    if (!has_type)
      passed_over += str_cat(passed_over.empty() ? "" : "; ", backend.chain[level].id, ": no ",
                             entries.empty() ? op_name : to_string(type), " workload");
  }
  if (!refusals.empty()) return Status::error(ErrorCode::Unsupported, refusals);
  if (!implements_op) return Status::error(ErrorCode::Unsupported, backend.id, ": no ", op_name, " workload");
  return Status::error(ErrorCode::Unsupported, backend.id, ": no ", to_string(type), " workload");
}

KILN_INLINE Expected<LayerAssignment> assign_layer(const Network& network, const Layer& layer,
                                                   const PackDescription& pack,
                                                   std::span<const std::size_t> preferences) {
  const std::size_t op = layer.descriptor.index();
  if (!pack.ops[op])
    return Status::error(ErrorCode::Unsupported, layer.describe(), ": ", layer.op_name(),
                         " is not in this program's OpSet; add kiln::ops::", layer.op_name(), " to it");
  const LayerInputs inputs(network, layer);
  const LayerInfo info = inputs.info_of(layer);
  std::string reasons;
  for (std::size_t index : preferences) {
    Expected<LayerAssignment> found = find_workload(pack.backends, index, op, layer.op_name(), info);
    if (!found) {
      reasons += str_cat(reasons.empty() ? "" : "; ", found.status().message());
      continue;
    }
    const std::string_view owner = found->workload->backend;
    if (found->level != 0)
      for (std::size_t other : preferences)
        if (pack.backends[other].id == owner && pack.backends[other].available()) {
          found->backend = static_cast<std::uint8_t>(other);
          found->level = 0;
        }
    if (!found->passed_over.empty()) reasons += str_cat(reasons.empty() ? "" : "; ", found->passed_over);
    found->passed_over = std::move(reasons);
    return found;
  }
  return Status::error(ErrorCode::Unsupported, layer.describe(), " ", to_string(info.data_type()),
                       " cannot run on any backend: ", reasons);
}

KILN_INLINE Status insert_mem_copies(Network& network, std::vector<LayerAssignment>& assignments,
                                     const PackDescription& pack) {
  const std::size_t host = pack.backends.size();  // stands for "host memory" where a backend index would be
  auto memory_of = [&](std::size_t backend) {
    return backend == host || pack.backends[backend].host_memory ? HostMemory::name : pack.backends[backend].memory;
  };
  // Which backend's memory a layer's output lives in (host for network inputs and for what a
  // device-to-host copy writes).
  auto producer_side = [&](OutputSlot slot) -> std::size_t {
    const std::uint8_t backend = assignments[slot.layer].backend;
    if (backend == LayerAssignment::no_backend) return host;
    const auto* copy = network.layer(slot.layer).params_if<ops::MemCopy>();
    return copy && copy->direction == ops::CopyDirection::DeviceToHost ? host : backend;
  };
  struct Made {
    OutputSlot source;
    std::string_view memory;
    OutputSlot copy;
  };
  std::vector<Made> made;
  auto add_copy = [&](OutputSlot source, std::size_t backend, ops::CopyDirection direction) -> Expected<OutputSlot> {
    const std::string_view target =
        direction == ops::CopyDirection::DeviceToHost ? HostMemory::name : memory_of(backend);
    for (const Made& m : made)
      if (m.source == source && m.memory == target) return m.copy;
    const Layer& producer = network.layer(source.layer);
    const std::string name = str_cat(
        producer.name, producer.outputs.size() > 1 ? str_cat(':', source.index) : std::string(), " to ", target);
    const LayerId id = network.add_layer<ops::MemCopy>({direction}, 1, name);
    if (auto s = network.connect(source, id, 0); !s) return s;
    const Layer& copy = network.layer(id);  // its outputs are inferred once every copy is in
    const LayerInputs inputs(network, copy);
    auto found =
        find_workload(pack.backends, backend, ops::op_index_v<ops::MemCopy>, ops::MemCopy::name, inputs.info_of(copy));
    if (!found) return found.status().with_context(copy.describe());
    assignments.push_back(std::move(*found));
    made.push_back({source, target, {id, 0}});
    return OutputSlot{id, 0};
  };

  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  for (LayerId id : order) {
    if (network.layer(id).is<ops::Input>() || network.layer(id).is<ops::Constant>()) continue;
    const std::size_t consumer = network.layer(id).is<ops::Output>() ? host : assignments[id].backend;
    for (std::size_t k = 0; k < network.layer(id).inputs.size(); ++k) {
      const OutputSlot source = *network.layer(id).inputs[k];
      if (network.layer(source.layer).is<ops::Constant>()) continue;
      const std::size_t producer = producer_side(source);
      if (memory_of(producer) == memory_of(consumer)) continue;
      OutputSlot feed = source;
      if (memory_of(producer) != HostMemory::name) {
        auto to_host = add_copy(feed, producer, ops::CopyDirection::DeviceToHost);
        if (!to_host) return to_host.status();
        feed = *to_host;
      }
      if (memory_of(consumer) != HostMemory::name) {
        auto to_device = add_copy(feed, consumer, ops::CopyDirection::HostToDevice);
        if (!to_device) return to_device.status();
        feed = *to_device;
      }
      if (auto s = network.connect(feed, id, k); !s) return s;
    }
  }
  if (made.empty()) return Status::ok();
  return network.infer_shapes();
}

}  // namespace kiln::detail
