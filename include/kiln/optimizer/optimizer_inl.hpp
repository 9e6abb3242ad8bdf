// SPDX-License-Identifier: Apache-2.0
// optimize()'s loop (see optimizer.hpp).
#pragma once

#include "kiln/optimizer/optimizer.hpp"

namespace kiln::detail {

KILN_INLINE Expected<OptimizedGraph> optimize(Network network, const OptimizerOptions& options,
                                              const PackDescription& pack) {
  if (!network.shapes_inferred())
    if (auto status = network.infer_shapes(); !status) return status;
  auto preferences = preference_order(pack.backends, options.backend_preferences);
  if (!preferences) return preferences.status();
  // Each pass reads the execution order, so the network is re-inferred after one that changed it.
  if (options.fold_batch_norms && passes::fold_batch_norms(network) != 0)
    if (auto status = network.infer_shapes(); !status) return status;
  if (options.fold_bias_adds && passes::fold_bias_adds(network) != 0)
    if (auto status = network.infer_shapes(); !status) return status;
  if (options.fuse_gated_activations && passes::fuse_gated_activations(network) != 0)
    if (auto status = network.infer_shapes(); !status) return status;
  if (options.fuse_layer_normalizations && passes::fuse_layer_normalizations(network) != 0)
    if (auto status = network.infer_shapes(); !status) return status;
  // The most preferred available backend, where the layers a fusion replaces would mostly run,
  // runs the fused layer with a workload of its own (not one it leaves to its fallback).
  auto first_choice_runs = [&](std::size_t op, const LayerInfo& layer) {
    for (std::size_t backend : *preferences) {
      if (!pack.backends[backend].available()) continue;
      auto found = find_workload(pack.backends, backend, op, ops::op_name(op), layer);
      return found.has_value() && found->level == 0;
    }
    return false;
  };
  if (options.fuse_attention && passes::fuse_attention(network, first_choice_runs) != 0)
    if (auto status = network.infer_shapes(); !status) return status;
  if (options.fuse_activations && passes::fuse_activations(network) != 0)
    if (auto status = network.infer_shapes(); !status) return status;
  auto runs_somewhere = [&](std::size_t op, const LayerInfo& layer) {
    return std::ranges::any_of(*preferences, [&](std::size_t backend) {
      return find_workload(pack.backends, backend, op, ops::op_name(op), layer).has_value();
    });
  };
  // After fuse_activations, so that a ReLU between a layer and its Quantize is a clamp of the layer.
  if (options.fuse_quantized_layers) {
    if (passes::move_dequantize_past_data_movers(network) != 0)
      if (auto status = network.infer_shapes(); !status) return status;
    if (passes::fuse_quantized_layers(network, runs_somewhere) != 0)
      if (auto status = network.infer_shapes(); !status) return status;
    if (passes::fold_dequantize_quantize(network, runs_somewhere) != 0)
      if (auto status = network.infer_shapes(); !status) return status;
  }
  if (passes::fold_dequantized_constants(network) != 0)
    if (auto status = network.infer_shapes(); !status) return status;
  // After the int8 fusions, which leave an int8 FullyConnected reading its weights' Constant.
  if (options.fold_flatten_transposes && passes::fold_flatten_transposes(network) != 0)
    if (auto status = network.infer_shapes(); !status) return status;
  // Last of the rewrites: the passes above read Float32 constants.
  if (options.reduce_float32_to_float16 && passes::reduce_float32_to_float16(network, runs_somewhere) != 0)
    if (auto status = network.infer_shapes(); !status) return status;

  std::vector<LayerAssignment> assignments(network.num_layers());
  for (LayerId id : network.execution_order()) {
    const Layer& layer = network.layer(id);
    if (layer.is<ops::Input>() || layer.is<ops::Output>() || layer.is<ops::Constant>()) continue;
    auto assignment = assign_layer(network, layer, pack, *preferences);
    if (!assignment) return assignment.status();
    assignments[id] = std::move(*assignment);
  }
  if (auto status = insert_mem_copies(network, assignments, pack); !status) return status;
  return OptimizedGraph{std::move(network), std::move(assignments)};
}

}  // namespace kiln::detail
