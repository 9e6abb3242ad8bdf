// SPDX-License-Identifier: Apache-2.0
// What the rewriting passes read a graph with: constants' values, and the layers of a pattern.
#pragma once

#include <optional>

#include "kiln/graph/network.hpp"

namespace kiln::passes::detail {

/// The Float32 data of the Constant layer feeding `slot`, or nullptr.
inline const float* constant_floats(const Network& network, const std::optional<OutputSlot>& slot) {
  if (!slot) return nullptr;
  const auto* constant = network.layer(slot->layer).params_if<ops::Constant>();
  if (!constant || constant->info.type != DataType::Float32) return nullptr;
  return reinterpret_cast<const float*>(constant->data.data());
}

/// Whether `layer` is an op-`operation` ElementwiseBinary in Float32 with no fused activation.
inline bool is_binary(const Layer& layer, ops::BinaryOperation operation) {
  const auto* p = layer.params_if<ops::ElementwiseBinary>();
  return p && p->operation == operation && !p->activation && layer.outputs[0].type == DataType::Float32;
}

/// The one value of a Float32 constant of one element at `slot`, if it is one.
inline std::optional<float> scalar_constant(const Network& network, const std::optional<OutputSlot>& slot) {
  const float* value = constant_floats(network, slot);
  if (!value || network.layer(slot->layer).outputs[0].num_elements() != 1) return std::nullopt;
  return *value;
}

/// The operand of binary layer `layer` other than `known`, if `known` is one of its two.
inline std::optional<OutputSlot> other_operand(const Layer& layer, OutputSlot known) {
  if (*layer.inputs[0] == known) return *layer.inputs[1];
  if (*layer.inputs[1] == known) return *layer.inputs[0];
  return std::nullopt;
}

/// The one layer that reads `slot`, if exactly one does.
inline std::optional<LayerId> only_reader(const Network& network, OutputSlot slot) {
  if (network.readers(slot) != 1) return std::nullopt;
  for (LayerId id : network.execution_order())
    for (const auto& input : network.layer(id).inputs)
      if (input == slot) return id;
  return std::nullopt;
}

/// The one layer that reads `slot`, if exactly one does and it is an op-`operation` ElementwiseBinary
/// (is_binary).
inline std::optional<LayerId> binary_reader(const Network& network, OutputSlot slot, ops::BinaryOperation operation) {
  const auto reader = only_reader(network, slot);
  return reader && is_binary(network.layer(*reader), operation) ? reader : std::nullopt;
}

}  // namespace kiln::passes::detail
