// SPDX-License-Identifier: Apache-2.0
// The gating pass: x * HardSigmoid(x) becomes HardSwish(x), x * Sigmoid(x) becomes SiLU(x), and
// x * (1 + erf(x / sqrt(2))) * 0.5 becomes GELU(x).
#pragma once

#include <array>
#include <cmath>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "kiln/graph/network.hpp"
#include "kiln/optimizer/passes/graph_patterns.hpp"

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

namespace detail {

/// x, when `gate` is 1 + erf(x / sqrt(2)) (the division may be a multiplication by 1 / sqrt(2), the
/// sum in either order) and each of its layers is read once: half of the Erf form of GELU, as
/// PyTorch exports nn.GELU before ONNX opset 20.
inline std::optional<OutputSlot> erf_gate_input(const Network& network, OutputSlot gate) {
  const Layer& add = network.layer(gate.layer);
  if (!is_binary(add, ops::BinaryOperation::Add)) return std::nullopt;
  const std::size_t one = scalar_constant(network, add.inputs[0]) == 1.0f ? 0 : 1;
  if (scalar_constant(network, add.inputs[one]) != 1.0f) return std::nullopt;
  const OutputSlot erf = *add.inputs[1 - one];
  const auto* unary = network.layer(erf.layer).params_if<ops::ElementwiseUnary>();
  if (!unary || unary->operation != ops::UnaryOperation::Erf || network.readers(erf) != 1) return std::nullopt;
  const OutputSlot scaled = *network.layer(erf.layer).inputs[0];
  const Layer& scale = network.layer(scaled.layer);
  if (network.readers(scaled) != 1) return std::nullopt;
  auto near = [](std::optional<float> value, float expected) {
    return value && std::abs(*value - expected) <= 1e-6f * expected;
  };
  if (is_binary(scale, ops::BinaryOperation::Div) &&
      near(scalar_constant(network, scale.inputs[1]), std::numbers::sqrt2_v<float>))
    return *scale.inputs[0];
  if (is_binary(scale, ops::BinaryOperation::Mul))
    for (std::size_t c = 0; c < 2; ++c)
      if (near(scalar_constant(network, scale.inputs[c]), 1.0f / std::numbers::sqrt2_v<float>))
        return *scale.inputs[1 - c];
  return std::nullopt;
}

/// x, when Mul layer `mul` computes (x * gate) * 0.5 or (x * 0.5) * gate with gate = 1 + erf(x / sqrt(2))
/// (erf_gate_input) and the inner Mul read by `mul` alone.
inline std::optional<OutputSlot> erf_gelu_input(const Network& network, const Layer& mul) {
  for (std::size_t h = 0; h < 2; ++h) {
    const OutputSlot inner = *mul.inputs[1 - h];
    if (network.readers(inner) != 1 || !is_binary(network.layer(inner.layer), ops::BinaryOperation::Mul)) continue;
    const Layer& product = network.layer(inner.layer);
    if (scalar_constant(network, mul.inputs[h]) == 0.5f)  // (x * gate) * 0.5
      for (std::size_t g = 0; g < 2; ++g)
        if (erf_gate_input(network, *product.inputs[g]) == *product.inputs[1 - g]) return *product.inputs[1 - g];
    for (std::size_t c = 0; c < 2; ++c)  // (x * 0.5) * gate
      if (scalar_constant(network, product.inputs[c]) == 0.5f &&
          erf_gate_input(network, *mul.inputs[h]) == *product.inputs[1 - c])
        return *product.inputs[1 - c];
  }
  return std::nullopt;
}

}  // namespace detail

/// Replaces each Float32 Mul of a tensor by a gate of that same tensor (the gate read by nothing
/// else) with the one activation they make, so that one layer runs instead of two and the
/// activation can then fuse into the convolution before it (fuse_activations); and each Erf form of
/// GELU (erf_gelu_input: five layers) with one GELU Activation. Returns how many were replaced. Needs inferred shapes;
/// leaves them to be inferred again.
inline std::size_t fuse_gated_activations(Network& network) {
  std::size_t fused = 0;
  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  for (LayerId id : order) {
    const auto* mul = network.layer(id).params_if<ops::ElementwiseBinary>();
    if (!mul || mul->operation != ops::BinaryOperation::Mul || mul->activation ||
        network.layer(id).outputs[0].type != DataType::Float32)
      continue;
    if (const auto x = detail::erf_gelu_input(network, network.layer(id))) {
      const std::string name = network.layer(id).name;  // a copy: adding a layer moves them
      network.redirect({id, 0}, network.add<ops::Activation>({ops::ActivationFunction::GELU}, {*x}, name));
      ++fused;
      continue;
    }
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
