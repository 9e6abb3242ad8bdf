// SPDX-License-Identifier: Apache-2.0
// network_of: a network `kiln compile` wrote as a header, as an ordinary Network again, so that the
// dynamic Runtime loads the same layers, parameters and weights (tests compare the two paths).
#pragma once

#include <array>
#include <cstring>
#include <iterator>
#include <type_traits>
#include <vector>

#include "kiln/graph/network.hpp"
#include "kiln/static/static_model.hpp"

namespace kiln {

/// The compiled network whose steps are `Layers` and whose tensor table is `Tensors` as a Network:
/// an Input, Constant or layer for each of its steps and constants (the constants' data copied; they
/// are named after their index in the table), and an Output for each of its outputs.
template <const auto& Layers, const auto& Tensors>
Network network_of() {
  Network network;
  std::array<OutputSlot, std::size(Tensors)> slot_of{};
  std::array<bool, std::size(Tensors)> made{};
  auto info_of = [](std::size_t t) { return Tensors[t].info(); };
  detail::for_each_step(Layers, [&](auto, const auto& step) {
    using Step = std::remove_cvref_t<decltype(step)>;
    if constexpr (std::is_same_v<Step, StaticInput>) {
      slot_of[step.tensor] = network.add_input(step.binding, info_of(step.tensor));
      made[step.tensor] = true;
    } else if constexpr (std::is_same_v<Step, StaticOutput>) {
      network.add_output(step.binding, slot_of[step.tensor]);
    } else {
      const LayerId id = network.add_layer<typename Step::op>(step.params, step.inputs.size(), step.name);
      if (step.arithmetic != QuantizedArithmetic::Kiln) network.set_arithmetic(step.arithmetic);
      for (std::size_t i = 0; i < step.inputs.size(); ++i) {
        const std::uint16_t t = step.inputs[i];
        if (!made[t]) {  // a constant, first read here
          std::vector<std::byte> bytes(Tensors[t].num_bytes());
          if (!bytes.empty()) std::memcpy(bytes.data(), Tensors[t].data, bytes.size());
          slot_of[t] = network.adopt_constant(info_of(t), std::move(bytes), detail::str_cat("constant_", t));
          made[t] = true;
        }
        (void)network.connect(slot_of[t], id, i);
      }
      for (std::uint32_t o = 0; o < step.outputs.size(); ++o) {
        slot_of[step.outputs[o]] = {id, o};
        made[step.outputs[o]] = true;
        // A quantised output's type and scale are what its layer chose (Quantize) or was told.
        if (const TensorInfo info = info_of(step.outputs[o]); !info.quantization.empty())
          (void)network.set_output_type({id, o}, info.type, info.quantization);
      }
    }
  });
  return network;
}

}  // namespace kiln
