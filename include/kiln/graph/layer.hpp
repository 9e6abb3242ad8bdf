// SPDX-License-Identifier: Apache-2.0
// Layer: one node of a Network — an op's parameters, its input connections and its output infos.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kiln/ops/op_list.hpp"

namespace kiln {

using LayerId = std::uint32_t;

/// One output of a layer: the handle by which the builder refers to a tensor.
struct OutputSlot {
  LayerId layer = 0;
  std::uint32_t index = 0;
  friend constexpr bool operator==(const OutputSlot&, const OutputSlot&) = default;
};

/// The parameters of a layer together with its op type.
template <OpDescriptor Op>
struct OpParams {
  using op = Op;
  typename Op::Params value;
  friend constexpr bool operator==(const OpParams&, const OpParams&) = default;
};

namespace detail {
template <class List> struct op_params_variant;
template <class... Ops> struct op_params_variant<TypeList<Ops...>> { using type = std::variant<OpParams<Ops>...>; };
}  // namespace detail

/// A layer's op and parameters: one alternative per entry of ops::op_list.
using LayerDescriptor = typename detail::op_params_variant<ops::op_list>::type;

/// A node of the graph.
struct Layer {
  std::string name;
  LayerDescriptor descriptor;
  std::vector<std::optional<OutputSlot>> inputs;  ///< one per input slot; empty until connected
  std::vector<TensorInfo> outputs;                ///< filled by shape inference

  constexpr std::string_view op_name() const {
    return std::visit([](const auto& d) { return std::string_view(std::decay_t<decltype(d)>::op::name); }, descriptor);
  }
  /// The layer's Op::Params, for code that knows the op from `descriptor.index()` (its ops::op_list index).
  constexpr const void* params() const {
    return std::visit([](const auto& d) -> const void* { return &d.value; }, descriptor);
  }
  template <OpDescriptor Op>
  constexpr bool is() const { return std::holds_alternative<OpParams<Op>>(descriptor); }
  template <OpDescriptor Op>
  constexpr const typename Op::Params* params_if() const {
    auto* d = std::get_if<OpParams<Op>>(&descriptor);
    return d ? &d->value : nullptr;
  }
  /// "layer 'conv1' (Convolution2d)", the prefix of every message about this layer.
  constexpr std::string describe() const { return detail::str_cat("layer '", name, "' (", op_name(), ")"); }
};

}  // namespace kiln
