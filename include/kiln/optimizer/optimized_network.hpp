// SPDX-License-Identifier: Apache-2.0
// OptimizedNetwork: a validated network whose every compute layer has a backend and a workload.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/backends/backend_pack.hpp"
#include "kiln/graph/network.hpp"
#include "kiln/optimizer/passes/fuse_activations.hpp"

namespace kiln {

/// Which backend runs a layer, and with which of its workloads.
struct LayerAssignment {
  static constexpr std::uint8_t no_backend = 0xff;
  std::uint8_t backend = no_backend;  ///< index into the Runtime's backends; no_backend for Input, Output, Constant
  std::uint8_t level = 0;             ///< 0: the backend's own workload; k: its k-th fallback's
  const WorkloadEntry* workload = nullptr;
  /// Why the backends preferred to this one did not get the layer ("CpuAcc: no QAsymmS8
  /// workload"); empty when the first choice took it.
  std::string passed_over;
};

/// The inputs of a layer as a workload sees them at load time: their infos, and the data of those
/// that come from Constant layers.
struct LayerInputs {
  std::vector<TensorInfo> infos;
  std::vector<const void*> constants;
  QuantizedArithmetic arithmetic;

  LayerInputs(const Network& network, const Layer& layer) : arithmetic(network.arithmetic()) {
    for (const auto& input : layer.inputs) {
      infos.push_back(network.tensor_info(*input));
      const auto* constant = network.layer(input->layer).params_if<ops::Constant>();
      constants.push_back(constant ? static_cast<const void*>(constant->data.data()) : nullptr);
    }
  }
  LayerInfo info_of(const Layer& layer) const {
    return {layer.params(), infos, layer.outputs, constants, nullptr, arithmetic};
  }
};

namespace detail {

/// What optimize() produces, whatever the Runtime's configuration: the rewritten network and one
/// assignment per layer.
struct OptimizedGraph {
  Network network;
  std::vector<LayerAssignment> assignments;

  /// One line per executed layer: "conv1 (Convolution2d) Float32 [1, 112, 112, 32] -> CpuAcc (Float32)",
  /// with the owner of an inherited workload and the reasons the preferred backends passed it over.
  std::string to_string(std::span<const BackendDescription> backends) const;
};

}  // namespace detail

/// A validated network whose every compute layer has been given one backend of a Runtime's
/// configuration: its OpSet, then its backends (optimized_network_t names it for any spelling).
template <class Set, class... Backends>
class OptimizedNetwork {
 public:
  static constexpr std::size_t no_backend = LayerAssignment::no_backend;

  explicit OptimizedNetwork(detail::OptimizedGraph graph) : graph_(std::move(graph)) {}

  const Network& network() const noexcept { return graph_.network; }
  std::span<const LayerId> execution_order() const noexcept { return graph_.network.execution_order(); }
  /// Index into the backends of the configuration of the one that runs `layer`; no_backend for
  /// Input, Output and Constant.
  std::size_t backend_index(LayerId layer) const { return graph_.assignments[layer].backend; }
  /// BackendId of the backend that runs `layer`, or "" for Input, Output and Constant.
  std::string_view backend_id(LayerId layer) const {
    const std::size_t index = backend_index(layer);
    return index == no_backend ? std::string_view{} : detail::describe<Set, Backends...>().backends[index].id;
  }
  /// The backend, workload and reasons for `layer`.
  const LayerAssignment& assignment(LayerId layer) const { return graph_.assignments[layer]; }
  const detail::OptimizedGraph& graph() const noexcept { return graph_; }
  /// Moves the graph out, for a Runtime that loads it and lets its constants go.
  detail::OptimizedGraph release() && { return std::move(graph_); }

  /// One line per executed layer: "conv1 (Convolution2d) QAsymmS8 [1, 8, 8, 4] -> CpuRef (QAsymmS8);
  /// CpuAcc: no QAsymmS8 workload".
  std::string to_string() const { return graph_.to_string(detail::describe<Set, Backends...>().backends); }

 private:
  detail::OptimizedGraph graph_;
};

/// The OptimizedNetwork of a Runtime<Config...> (an optional OpSet, then the backends).
template <class... Config>
using optimized_network_t = detail::with_op_set_t<OptimizedNetwork, Config...>;

}  // namespace kiln

#if !KILN_COMPILED_LIBRARY || KILN_BUILDING_LIBRARY
#include "kiln/optimizer/optimized_network_inl.hpp"
#endif
