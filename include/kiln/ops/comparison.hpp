// SPDX-License-Identifier: Apache-2.0
// Comparison: elementwise comparisons of two tensors, with numpy broadcasting, into a Boolean tensor.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

enum class ComparisonOperation : std::uint8_t { Equal, NotEqual, Less, LessOrEqual, Greater, GreaterOrEqual };

constexpr std::string_view to_string(ComparisonOperation op) noexcept {
  constexpr std::string_view names[] = {"Equal", "NotEqual", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"};
  return names[static_cast<std::size_t>(op)];
}

/// Elementwise comparison (Arm NN ComparisonLayer; ONNX Equal, Less, LessOrEqual, Greater,
/// GreaterOrEqual; TFLite EQUAL ... GREATER_EQUAL). Both inputs have one type (Float32, Signed32 or
/// Boolean); the output is Boolean. NaN compares unequal to everything, itself included (IEEE 754).
struct Comparison {
  static constexpr std::string_view name = "Comparison";
  static constexpr Arity arity{2, 2};
  struct Params {
    ComparisonOperation operation = ComparisonOperation::Equal;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  /// a op b: RefBackend's definition, and the importer's when it folds constants.
  template <class E>
  static constexpr bool holds(ComparisonOperation op, E a, E b) {
    using O = ComparisonOperation;
    switch (op) {
      case O::Equal: return a == b;
      case O::NotEqual: return a != b;
      case O::Less: return a < b;
      case O::LessOrEqual: return a <= b;
      case O::Greater: return a > b;
      case O::GreaterOrEqual: return a >= b;
    }
    return false;
  }

  static constexpr bool compares(DataType type) {
    return type == DataType::Float32 || type == DataType::Signed32 || type == DataType::Boolean;
  }

  static constexpr Status infer(const Params&, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto s = detail::expect_same_type(in, 0, 1); !s) return s;
    if (!compares(in[0].type))
      return detail::invalid("compares Float32, Signed32 and Boolean tensors; the inputs are ", to_string(in[0].type));
    auto shape = detail::broadcast_shapes(in[0].shape, in[1].shape);
    if (!shape) return shape.status();
    out[0] = TensorInfo{*shape, DataType::Boolean, {}};
    return Status::ok();
  }
};

}  // namespace kiln::ops
