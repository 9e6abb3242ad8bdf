// SPDX-License-Identifier: Apache-2.0
// ElementwiseBinary: arithmetic on two tensors with numpy broadcasting.
#pragma once

#include <string_view>

#include <optional>

#include "kiln/ops/activation.hpp"
#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

enum class BinaryOperation : std::uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Maximum,
  Minimum,
  Power,
  PRelu,  ///< a if a >= 0 else a * b: b holds the slopes (ONNX PRelu, Arm NN PreluLayer, TFLite PRELU)
};

constexpr std::string_view to_string(BinaryOperation op) noexcept {
  constexpr std::string_view names[] = {"Add", "Sub", "Mul", "Div", "Maximum", "Minimum", "Power", "PRelu"};
  return names[static_cast<std::size_t>(op)];
}

/// Elementwise binary operation (Arm NN ElementwiseBinaryLayer, ONNX Add/Sub/Mul/Div/Max/Min/Pow/PRelu).
/// Shapes broadcast as in numpy; both inputs have the same type.
struct ElementwiseBinary {
  static constexpr std::string_view name = "ElementwiseBinary";
  static constexpr Arity arity{2, 2};
  struct Params {
    BinaryOperation operation = BinaryOperation::Add;
    /// Applied to every output element; set by the optimizer when it fuses a following Activation.
    std::optional<Activation::Params> activation;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto s = Activation::validate(p.activation); !s) return s;
    if (auto s = detail::expect_same_type(in, 0, 1); !s) return s;
    auto shape = detail::broadcast_shapes(in[0].shape, in[1].shape);
    if (!shape) return shape.status();
    out[0] = TensorInfo{*shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
