// SPDX-License-Identifier: Apache-2.0
// The bias pass: the Add of a constant row after a FullyConnected becomes the FullyConnected's bias.
#pragma once

#include <string>
#include <vector>

#include "kiln/graph/network.hpp"
#include "kiln/optimizer/passes/graph_patterns.hpp"

namespace kiln::passes {

namespace detail {

/// Folds Add layer `add` into the FullyConnected that makes its operand `dense` when the other
/// operand is a Float32 constant of one value per output ([O], [1, ..., 1, O]); returns whether it did.
inline bool fold_bias_add(Network& network, LayerId add, OutputSlot dense, OutputSlot row) {
  const Layer& fc = network.layer(dense.layer);
  const auto* params = fc.params_if<ops::FullyConnected>();
  if (!params || params->activation || fc.outputs[0].type != DataType::Float32 || network.readers(dense) != 1)
    return false;
  const float* values = constant_floats(network, row);
  const TensorShape& y = network.tensor_info(dense).shape;
  const TensorShape& r = network.tensor_info(row).shape;
  const std::uint32_t outputs = y.dim_from_end(0);
  if (!values || network.tensor_info({add, 0}).shape != y || r.num_elements() != outputs ||
      r.dim_from_end(0) != outputs)
    return false;
  const bool has_bias = fc.inputs.size() > 2 && fc.inputs[2];
  const float* bias = has_bias ? constant_floats(network, fc.inputs[2]) : nullptr;
  if (has_bias && !bias) return false;
  std::vector<float> folded(values, values + outputs);
  if (bias)
    for (std::uint32_t o = 0; o < outputs; ++o) folded[o] += bias[o];
  const std::string name = kiln::detail::str_cat(fc.name, "/folded_bias");
  const OutputSlot b =
      network.add_constant<float>(TensorInfo{TensorShape{outputs}, DataType::Float32, {}}, folded, name);
  const std::size_t slot = has_bias ? 2 : network.add_input_slot(dense.layer);
  (void)network.connect(b, dense.layer, slot);
  network.redirect({add, 0}, dense);
  return true;
}

}  // namespace detail

/// Folds each Float32 Add of a FullyConnected's output (read by nothing else) and a constant of one
/// value per output into the FullyConnected's bias: PyTorch exports a Linear on inputs of rank 3 and
/// more as MatMul + Add, which then runs as one layer, and an activation after it can fuse into the
/// FullyConnected (fuse_activations). The bias is added in the same place as before (to each sum), so
/// results do not change. Returns how many were folded; needs inferred shapes and leaves them to infer again.
inline std::size_t fold_bias_adds(Network& network) {
  std::size_t folded = 0;
  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  for (LayerId id : order) {
    if (!detail::is_binary(network.layer(id), ops::BinaryOperation::Add)) continue;
    const OutputSlot a = *network.layer(id).inputs[0], b = *network.layer(id).inputs[1];
    if (detail::fold_bias_add(network, id, a, b) || detail::fold_bias_add(network, id, b, a)) ++folded;
  }
  return folded;
}

}  // namespace kiln::passes
