// SPDX-License-Identifier: Apache-2.0
// The gating pass: x * HardSigmoid(x) becomes HardSwish(x), and x * Sigmoid(x) becomes SiLU(x).
#pragma once

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "kiln/graph/network.hpp"

namespace kiln::passes {

/// The activation that x * gate(x) computes, for the gates that make one: PyTorch exports
/// hardswish (before ONNX opset 14) and silu this way.
inline std::optional<ops::Activation::Params> gated_activation(const ops::Activation::Params& gate) {
  using F = ops::ActivationFunction;
  if (gate.function == F::Sigmoid) return ops::Activation::Params{F::SiLU};
  // HardSwish(x) = x * max(0, min(1, x / 6 + 1 / 2)); the exporter writes 1/6 as a float.
  if (gate.function == F::HardSigmoid && std::abs(gate.a - 1.0f / 6.0f) < 1e-7f && gate.b == 0.5f)
    return ops::Activation::Params{F::HardSwish};
  return std::nullopt;
}

/// Replaces each Float32 Mul of a tensor by a gate of that same tensor (the gate read by nothing
/// else) with the one activation they make, so that one layer runs instead of two and the
/// activation can then fuse into the convolution before it (fuse_activations). Returns how many
/// were replaced. Needs inferred shapes; leaves them to be inferred again.
inline std::size_t fuse_gated_activations(Network& network) {
  std::size_t fused = 0;
  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  for (LayerId id : order) {
    const auto* mul = network.layer(id).params_if<ops::ElementwiseBinary>();
    if (!mul || mul->operation != ops::BinaryOperation::Mul || mul->activation ||
        network.layer(id).outputs[0].type != DataType::Float32)
      continue;
    const std::array<OutputSlot, 2> operands{*network.layer(id).inputs[0], *network.layer(id).inputs[1]};
    for (std::size_t g = 0; g < 2; ++g) {
      const OutputSlot gate = operands[g], x = operands[1 - g];
      const Layer& gate_layer = network.layer(gate.layer);
      const auto* gate_params = gate_layer.params_if<ops::Activation>();
      if (!gate_params || *gate_layer.inputs[0] != x || network.readers(gate) != 1) continue;
      const auto activation = gated_activation(*gate_params);
      if (!activation) continue;
      const std::string name = network.layer(id).name;  // a copy: adding a layer moves them
      network.redirect({id, 0}, network.add<ops::Activation>(*activation, {x}, name));
      ++fused;
      break;
    }
  }
  return fused;
}

}  // namespace kiln::passes
