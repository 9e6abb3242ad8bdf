// SPDX-License-Identifier: Apache-2.0
// The Float16 pass (Arm NN's ReduceFp32ToFp16): a Float32 network's layers compute in Float16,
// between Casts where Float32 tensors meet them; the network's inputs and outputs keep their types.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kiln/backends/workload_entry.hpp"
#include "kiln/core/half.hpp"
#include "kiln/graph/network.hpp"

namespace kiln::passes {

namespace detail {

/// Layer `layer` as it would be in Float16 — every Float32 tensor of it Float16 — if it computes on
/// Float32 alone: at least one Float32 input, the other inputs integers (indices), every output
/// Float32. std::nullopt for any other layer.
struct Float16Layer {
  std::vector<TensorInfo> inputs, outputs;
  std::vector<const void*> constants;
};
inline std::optional<Float16Layer> as_float16_layer(const Network& network, const Layer& layer) {
  if (layer.is<ops::Input>() || layer.is<ops::Output>() || layer.is<ops::Constant>() || layer.is<ops::Cast>())
    return std::nullopt;
  Float16Layer half;
  bool reads_float32 = false;
  for (const auto& slot : layer.inputs) {
    TensorInfo info = network.tensor_info(*slot);
    if (info.type == DataType::Float32) {
      reads_float32 = true;
      info.type = DataType::Float16;
    } else if (is_floating_point(info.type) || is_quantized(info.type)) {
      return std::nullopt;
    }
    half.inputs.push_back(info);
    const auto* constant = network.layer(slot->layer).params_if<ops::Constant>();
    // A workload's is_supported only asks whether an input is a constant; it reads no data.
    half.constants.push_back(constant ? constant->data.data() : nullptr);
  }
  for (TensorInfo info : layer.outputs) {
    if (info.type != DataType::Float32) return std::nullopt;
    info.type = DataType::Float16;
    half.outputs.push_back(info);
  }
  if (!reads_float32) return std::nullopt;
  return half;
}

}  // namespace detail

/// Makes each layer that computes on Float32 a Float16 layer when a backend runs it so
/// (`can_run(op index, LayerInfo)`): the Float32 constants it reads become Float16 copies (rounded
/// to nearest, ties to even), a Cast to Float16 feeds it from any other Float32 producer (an Input,
/// a layer left in Float32), and a Cast to Float32 takes its output to any reader of Float32 (an
/// Output, a layer left in Float32). One Cast or copy per tensor, however many layers read it.
/// Nothing changes when no backend runs the Casts. Returns how many layers it made Float16.
template <class CanRun>
std::size_t reduce_float32_to_float16(Network& network, CanRun&& can_run) {
  // Without a backend that runs both Casts, no layer can be fed or read in Float16.
  auto runs_cast = [&](DataType from, DataType to) {
    const ops::Cast::Params params{.to = to};
    const TensorInfo in{TensorShape{1}, from, {}}, out{TensorShape{1}, to, {}};
    const void* const not_constant = nullptr;
    return can_run(ops::op_index_v<ops::Cast>, LayerInfo{&params, {&in, 1}, {&out, 1}, {&not_constant, 1}});
  };
  if (!runs_cast(DataType::Float32, DataType::Float16) || !runs_cast(DataType::Float16, DataType::Float32)) return 0;

  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  const std::size_t original_layers = network.num_layers();  // the Casts and copies added below stay as made
  std::vector<bool> converted(original_layers, false);
  std::size_t count = 0;
  for (LayerId id : order) {
    const Layer& layer = network.layer(id);
    const auto half = detail::as_float16_layer(network, layer);
    if (!half) continue;
    converted[id] =
        can_run(layer.descriptor.index(), LayerInfo{layer.params(), half->inputs, half->outputs, half->constants});
    count += converted[id] ? 1 : 0;
  }
  if (count == 0) return 0;

  auto is_converted = [&](OutputSlot slot) { return slot.layer < original_layers && converted[slot.layer]; };
  std::map<std::pair<LayerId, std::uint32_t>, OutputSlot> halves, floats;
  auto as_float16 = [&](OutputSlot from) {
    if (is_converted(from)) return from;
    auto [it, added] = halves.try_emplace({from.layer, from.index});
    if (!added) return it->second;
    const std::string name = network.layer(from.layer).name;
    if (const auto* constant = network.layer(from.layer).params_if<ops::Constant>()) {
      std::vector<Half> values(constant->info.num_elements());
      const auto* source = reinterpret_cast<const float*>(constant->data.data());
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = float_to_half(source[i]);
      const TensorInfo info{constant->info.shape, DataType::Float16, {}};
      it->second = network.add_constant<Half>(info, values, name + "/float16");
    } else {
      it->second = network.add<ops::Cast>({.to = DataType::Float16}, {from}, name + "/to_float16");
    }
    return it->second;
  };
  auto as_float32 = [&](OutputSlot from) {
    auto [it, added] = floats.try_emplace({from.layer, from.index});
    if (added)
      it->second =
          network.add<ops::Cast>({.to = DataType::Float32}, {from}, network.layer(from.layer).name + "/to_float32");
    return it->second;
  };
  for (LayerId id : order) {
    for (std::size_t i = 0; i < network.layer(id).inputs.size(); ++i) {
      const OutputSlot from = *network.layer(id).inputs[i];
      if (converted[id] && network.tensor_info(from).type == DataType::Float32)
        (void)network.connect(as_float16(from), id, i);
      else if (!converted[id] && is_converted(from))
        (void)network.connect(as_float32(from), id, i);
    }
  }
  return count;
}

}  // namespace kiln::passes
