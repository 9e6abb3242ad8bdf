// SPDX-License-Identifier: Apache-2.0
// Backend assignment: every compute layer to the first backend, in preference order, with a workload
// for its op and data type that accepts it; then MemCopy layers where tensors cross memory kinds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/optimizer/optimized_network.hpp"

namespace kiln::detail {

/// The indices of the backends optimize() may use, most preferred first: every backend in pack
/// order, or those `preferences` names, in its order.
Expected<std::vector<std::size_t>> preference_order(std::span<const BackendDescription> backends,
                                                    std::span<const std::string_view> preferences);

/// The workload backend `backends[index]` runs a layer of op `op` with: its own for the layer's
/// data type, else its fallback's, and so on. What was passed over on the way (a level without a
/// workload of that type, a refusal) is kept in `passed_over`; without a workload, the Status says
/// why ("CpuAcc: no QAsymmS8 workload").
Expected<LayerAssignment> find_workload(std::span<const BackendDescription> backends, std::size_t index, std::size_t op,
                                        std::string_view op_name, const LayerInfo& layer);

/// Assigns one compute layer (see optimize). A workload a backend inherits goes to the backend
/// that wrote it when that one is among `preferences` too, so that the assignment names whose
/// code runs: `conv (Convolution2d) QAsymmS8 ... -> CpuRef (QAsymmS8); CpuAcc: no QAsymmS8 workload`.
Expected<LayerAssignment> assign_layer(const Network& network, const Layer& layer, const PackDescription& pack,
                                       std::span<const std::size_t> preferences);

/// Inserts a MemCopy wherever a layer reads a tensor that lives in another memory kind (network
/// inputs and outputs live in host memory; constants are handed to workloads at load and never
/// copied). A copy runs on the device backend on the far side of the host; one copy serves every
/// reader in its memory kind, and device-to-device traffic between two kinds goes through the host.
Status insert_mem_copies(Network& network, std::vector<LayerAssignment>& assignments, const PackDescription& pack);

}  // namespace kiln::detail

#if !KILN_COMPILED_LIBRARY || KILN_BUILDING_LIBRARY
#include "kiln/optimizer/assign_backends_inl.hpp"
#endif
