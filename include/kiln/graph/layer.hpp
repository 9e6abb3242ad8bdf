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
template <class List>
struct op_params_variant;
template <class... Ops>
struct op_params_variant<TypeList<Ops...>> {
  using type = std::variant<OpParams<Ops>...>;
};
}  // namespace detail

/// A layer's op and parameters: one alternative per entry of ops::op_list.
using LayerDescriptor = typename detail::op_params_variant<ops::op_list>::type;

/// Calls f with the OpParams<Op> that `descriptor` holds and returns what it returns (a
/// default-constructible type, or void). A chain of index tests rather than std::visit, whose
/// dispatch table over every op costs a translation unit far more to compile.
template <class Descriptor, class F>
constexpr decltype(auto) visit_op(Descriptor& descriptor, F&& f) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    using Result = decltype(f(*std::get_if<0>(&descriptor)));
    if constexpr (std::is_void_v<Result>) {
      (void)((descriptor.index() == I && (f(*std::get_if<I>(&descriptor)), true)) || ...);
    } else {
      Result result{};
      (void)((descriptor.index() == I && (result = f(*std::get_if<I>(&descriptor)), true)) || ...);
      return result;
    }
  }
  (std::make_index_sequence<std::variant_size_v<std::remove_cv_t<Descriptor>>>{});
}

/// A node of the graph.
struct Layer {
  std::string name;
  LayerDescriptor descriptor;
  std::vector<std::optional<OutputSlot>> inputs;  ///< one per input slot; empty until connected
  std::vector<TensorInfo> outputs;                ///< filled by shape inference
  /// Per output, the type the builder declared (Network::set_output_type); empty when none is.
  std::vector<std::optional<ops::OutputType>> output_types;

  constexpr std::string_view op_name() const { return ops::op_name(descriptor.index()); }
  /// The layer's Op::Params, for code that knows the op from `descriptor.index()` (its ops::op_list index).
  constexpr const void* params() const {
    return visit_op(descriptor, [](const auto& d) -> const void* { return &d.value; });
  }
  template <OpDescriptor Op>
  constexpr bool is() const {
    return std::holds_alternative<OpParams<Op>>(descriptor);
  }
  template <OpDescriptor Op>
  constexpr const typename Op::Params* params_if() const {
    auto* d = std::get_if<OpParams<Op>>(&descriptor);
    return d ? &d->value : nullptr;
  }
  /// "layer 'conv1' (Convolution2d)", the prefix of every message about this layer.
  constexpr std::string describe() const { return detail::str_cat("layer '", name, "' (", op_name(), ")"); }
};

}  // namespace kiln
