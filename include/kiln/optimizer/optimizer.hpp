// SPDX-License-Identifier: Apache-2.0
// optimize<Backends...>: validates a Network and gives every layer to the first backend that can run it.
#pragma once

#include <array>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "kiln/backends/backend_pack.hpp"
#include "kiln/graph/network.hpp"
#include "kiln/optimizer/passes/fold_batch_norm.hpp"
#include "kiln/optimizer/passes/fuse_activations.hpp"

namespace kiln {

/// How optimize() chooses backends.
struct OptimizerOptions {
  /// Backend ids in order of preference; empty means the order of the Runtime's backend pack.
  /// Every id must name a backend of the pack; backends not listed are not used.
  std::vector<std::string_view> backend_preferences;
  /// Fold a BatchNormalization that follows a convolution into its weights and bias.
  bool fold_batch_norms = true;
  /// Fuse an Activation into the convolution, dense or elementwise layer before it.
  bool fuse_activations = true;
};

/// The inputs of a layer as a workload sees them at load time: their infos, and the data of those
/// that come from Constant layers.
struct LayerInputs {
  std::vector<TensorInfo> infos;
  std::vector<const void*> constants;

  LayerInputs(const Network& network, const Layer& layer) {
    for (const auto& input : layer.inputs) {
      infos.push_back(network.tensor_info(*input));
      const auto* constant = network.layer(input->layer).params_if<ops::Constant>();
      constants.push_back(constant ? static_cast<const void*>(constant->data.data()) : nullptr);
    }
  }
  template <class Op>
  WorkloadInfo<Op> info_for(const Layer& layer, const typename Op::Params& params) const {
    return {params, infos, layer.outputs, constants};
  }
};

template <Backend... Bs>
class OptimizedNetwork;
namespace detail {
template <Backend... Bs>
Status insert_mem_copies(Network& network, OptimizedNetwork<Bs...>& result);
}  // namespace detail

/// A validated network whose every compute layer has been given one backend of the pack.
template <Backend... Bs>
class OptimizedNetwork {
 public:
  static constexpr std::size_t no_backend = std::numeric_limits<std::size_t>::max();

  const Network& network() const noexcept { return network_; }
  std::span<const LayerId> execution_order() const noexcept { return network_.execution_order(); }
  /// Index into Bs... of the backend that runs `layer`; no_backend for Input, Output and Constant.
  std::size_t backend_index(LayerId layer) const { return backend_of_[layer]; }
  /// Which workload of that backend's fallback chain runs `layer` (0: the first it has).
  std::size_t workload_level(LayerId layer) const { return workload_level_[layer]; }
  /// BackendId of the backend that runs `layer`, or "" for Input, Output and Constant.
  std::string_view backend_id(LayerId layer) const {
    return backend_of_[layer] == no_backend ? std::string_view{} : detail::backend_ids<Bs...>[backend_of_[layer]];
  }

  /// One line per executed layer: "conv1 (Convolution2d) Float32 [1, 112, 112, 32] -> CpuRef".
  std::string to_string() const {
    std::string text;
    for (LayerId id : execution_order()) {
      const Layer& layer = network_.layer(id);
      text += detail::str_cat(layer.name, " (", layer.op_name());
      if (const auto fused = passes::fused_activation(layer))
        text += detail::str_cat(" + ", ops::to_string(fused->function));
      if (const auto* copy = layer.params_if<ops::MemCopy>()) text += detail::str_cat(' ', ops::to_string(copy->direction));
      text += ')';
      for (const TensorInfo& info : layer.outputs) text += detail::str_cat(' ', info.to_string());
      if (backend_of_[id] != no_backend) text += detail::str_cat(" -> ", backend_id(id));
      text += '\n';
    }
    return text;
  }

 private:
  template <Backend... Cs>
  friend Expected<OptimizedNetwork<Cs...>> optimize(Network network, const OptimizerOptions& options);
  template <Backend... Cs>
  friend Status detail::insert_mem_copies(Network& network, OptimizedNetwork<Cs...>& result);

  Network network_;
  std::vector<std::size_t> backend_of_;
  std::vector<std::size_t> workload_level_;
};

namespace detail {

/// Which workload of B's chain runs `layer` (0: B's own or the first it inherits; 1: the next
/// in its fallback chain...), or why none of them can.
template <Backend B, class Op>
Expected<std::size_t> backend_can_run(const WorkloadInfo<Op>& info) {
  if constexpr (!supports_v<Op, B>) {
    return Status::error(ErrorCode::Unsupported, B::id, " does not implement ", Op::name);
  } else {
    if (!B::available()) return Status::error(ErrorCode::Unsupported, B::id, " is not available on this machine");
    Status first_refusal;
    std::size_t level = 0;
    const bool found = for_each_workload_in_chain<Op, B>([&]<class W>(std::type_identity<W>) {
      Status status = workload_supports<Op, W>(info);
      if (status) return true;
      if (first_refusal) first_refusal = status;
      ++level;
      return false;
    });
    if (!found) return first_refusal;
    return level;
  }
}

template <Backend... Bs>
Expected<std::vector<std::size_t>> preference_order(const OptimizerOptions& options) {
  std::vector<std::size_t> order;
  if (options.backend_preferences.empty()) {
    for (std::size_t i = 0; i < sizeof...(Bs); ++i) order.push_back(i);
    return order;
  }
  for (std::string_view id : options.backend_preferences) {
    std::size_t found = sizeof...(Bs);
    for (std::size_t i = 0; i < sizeof...(Bs); ++i)
      if (backend_ids<Bs...>[i] == id) found = i;
    if (found == sizeof...(Bs)) {
      std::string known;
      for (std::string_view b : backend_ids<Bs...>) known += detail::str_cat(known.empty() ? "" : ", ", b);
      return Status::error(ErrorCode::NotFound, "backend '", id, "' is not compiled into this runtime; it has ", known);
    }
    order.push_back(found);
  }
  return order;
}

template <Backend... Bs>
inline constexpr std::array<std::string_view, sizeof...(Bs)> memory_names{Bs::memory::name...};
template <Backend... Bs>
inline constexpr std::array<bool, sizeof...(Bs)> host_memory{has_host_memory_v<Bs>...};

/// Inserts a MemCopy wherever a layer reads a tensor that lives in another memory kind (network
/// inputs and outputs live in host memory; constants are handed to workloads at load and never
/// copied). A copy runs on the device backend on the far side of the host; one copy serves every
/// reader in its memory kind, and device-to-device traffic between two kinds goes through the host.
template <Backend... Bs>
Status insert_mem_copies(Network& network, OptimizedNetwork<Bs...>& result) {
  constexpr std::size_t host = sizeof...(Bs);  // stands for "host memory" where a backend index would be
  auto memory_of = [](std::size_t backend) {
    return backend == host || host_memory<Bs...>[backend] ? HostMemory::name : memory_names<Bs...>[backend];
  };
  // Which backend's memory a layer's output `index` lives in (host for network inputs and for
  // what a device-to-host copy writes).
  auto producer_side = [&](OutputSlot slot) {
    const Layer& layer = network.layer(slot.layer);
    const std::size_t backend = result.backend_of_[slot.layer];
    if (backend == OptimizedNetwork<Bs...>::no_backend) return host;
    if (const auto* copy = layer.params_if<ops::MemCopy>(); copy && copy->direction == ops::CopyDirection::DeviceToHost)
      return host;
    return backend;
  };
  struct Made {
    OutputSlot source;
    std::string_view memory;
    OutputSlot copy;
  };
  std::vector<Made> made;
  auto add_copy = [&](OutputSlot source, std::size_t backend, ops::CopyDirection direction) -> Expected<OutputSlot> {
    const std::string_view target = direction == ops::CopyDirection::DeviceToHost ? HostMemory::name : memory_of(backend);
    for (const Made& m : made)
      if (m.source == source && m.memory == target) return m.copy;
    const Layer& producer = network.layer(source.layer);
    const std::string name = detail::str_cat(
        producer.name, producer.outputs.size() > 1 ? detail::str_cat(':', source.index) : std::string(), " to ", target);
    const ops::MemCopy::Params params{direction};
    const LayerId id = network.add_layer<ops::MemCopy>(params, 1, name);
    if (auto s = network.connect(source, id, 0); !s) return s;
    const LayerInputs inputs(network, network.layer(id));
    Expected<std::size_t> level = Status::error(ErrorCode::Unsupported, "unreachable");
    visit_backend<Bs...>(backend, [&]<class B>(std::type_identity<B>) {
      level = backend_can_run<B, ops::MemCopy>(inputs.info_for<ops::MemCopy>(network.layer(id), params));
    });
    if (!level) return level.status().with_context(network.layer(id).describe());
    result.backend_of_.push_back(backend);
    result.workload_level_.push_back(*level);
    made.push_back({source, target, {id, 0}});
    return OutputSlot{id, 0};
  };

  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  for (LayerId id : order) {
    if (network.layer(id).is<ops::Input>() || network.layer(id).is<ops::Constant>()) continue;
    const std::size_t consumer = network.layer(id).is<ops::Output>() ? host : result.backend_of_[id];
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

}  // namespace detail

/// Validates `network` (see Network::infer_shapes) and assigns each compute layer to the first
/// backend, in preference order, that implements its op, is available, and accepts its tensor
/// infos. Fails naming the layer, with every backend's reason, when none can run it. Then inserts
/// a MemCopy wherever a tensor crosses between memory kinds (host and a device backend's).
/// \tparam Bs the Runtime's backends, most preferred first.
template <Backend... Bs>
Expected<OptimizedNetwork<Bs...>> optimize(Network network, const OptimizerOptions& options = {}) {
  static_assert(detail::check_backend_pack<Bs...>());
  if (!network.shapes_inferred())
    if (auto status = network.infer_shapes(); !status) return status;
  // Each pass reads the execution order, so the network is re-inferred after one that changed it.
  if (options.fold_batch_norms && passes::fold_batch_norms(network) != 0)
    if (auto status = network.infer_shapes(); !status) return status;
  if (options.fuse_activations && passes::fuse_activations(network) != 0)
    if (auto status = network.infer_shapes(); !status) return status;
  auto preferences = detail::preference_order<Bs...>(options);
  if (!preferences) return preferences.status();

  OptimizedNetwork<Bs...> result;
  result.backend_of_.assign(network.num_layers(), OptimizedNetwork<Bs...>::no_backend);
  result.workload_level_.assign(network.num_layers(), 0);
  for (LayerId id : network.execution_order()) {
    const Layer& layer = network.layer(id);
    Status failure = std::visit(
        [&]<class P>(const P& descriptor) -> Status {
          using Op = typename P::op;
          if constexpr (ops::is_structural_v<Op>) {
            return Status::ok();
          } else {
            const LayerInputs inputs(network, layer);
            const WorkloadInfo<Op> info = inputs.info_for<Op>(layer, descriptor.value);
            std::string reasons;
            for (std::size_t index : *preferences) {
              Expected<std::size_t> level = Status::error(ErrorCode::Unsupported, "unreachable");
              detail::visit_backend<Bs...>(index, [&]<class B>(std::type_identity<B>) {
                level = detail::backend_can_run<B, Op>(info);
              });
              if (level) {
                result.backend_of_[id] = index;
                result.workload_level_[id] = *level;
                return Status::ok();
              }
              reasons += detail::str_cat(reasons.empty() ? "" : "; ", level.status().message());
            }
            return Status::error(ErrorCode::Unsupported, layer.describe(), " cannot run on any backend: ", reasons);
          }
        },
        layer.descriptor);
    if (!failure) return failure;
  }
  if (auto status = detail::insert_mem_copies<Bs...>(network, result); !status) return status;
  result.network_ = std::move(network);
  return result;
}

}  // namespace kiln
