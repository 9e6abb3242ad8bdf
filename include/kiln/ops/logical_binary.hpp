// SPDX-License-Identifier: Apache-2.0
// LogicalBinary: And, Or and Xor of two Boolean tensors, with numpy broadcasting.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

enum class LogicalOperation : std::uint8_t { And, Or, Xor };

constexpr std::string_view to_string(LogicalOperation op) noexcept {
  constexpr std::string_view names[] = {"And", "Or", "Xor"};
  return names[static_cast<std::size_t>(op)];
}

/// Elementwise logic on Boolean tensors (Arm NN LogicalBinaryLayer; ONNX And, Or, Xor, and Not as
/// Xor with true; TFLite LOGICAL_AND, LOGICAL_OR). A Boolean element is one byte, 0 or 1.
struct LogicalBinary {
  static constexpr std::string_view name = "LogicalBinary";
  static constexpr Arity arity{2, 2};
  struct Params {
    LogicalOperation operation = LogicalOperation::And;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  /// p op q: RefBackend's definition, and the importer's when it folds constants.
  static constexpr bool apply(LogicalOperation op, bool p, bool q) {
    return op == LogicalOperation::And ? p && q : op == LogicalOperation::Or ? p || q : p != q;
  }

  static constexpr Status infer(const Params&, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    for (std::size_t i = 0; i < 2; ++i)
      if (in[i].type != DataType::Boolean)
        return detail::invalid("takes Boolean tensors; input ", i, " is ", to_string(in[i].type));
    auto shape = detail::broadcast_shapes(in[0].shape, in[1].shape);
    if (!shape) return shape.status();
    out[0] = TensorInfo{*shape, DataType::Boolean, {}};
    return Status::ok();
  }
};

}  // namespace kiln::ops
