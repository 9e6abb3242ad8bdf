// SPDX-License-Identifier: Apache-2.0
// ElementwiseUnary: one-argument math functions applied to every element.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

enum class UnaryOperation : std::uint8_t {
  Abs,
  Neg,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Reciprocal,
  Erf,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Sign,  ///< -1, 0 or 1 (NaN stays NaN)
  Floor,
  Ceil,
  Round,  ///< to the nearest integer, halves to even (ONNX Round, numpy.round)
};

constexpr std::string_view to_string(UnaryOperation op) noexcept {
  constexpr std::string_view names[] = {"Abs",   "Neg",   "Exp",   "Log",  "Sqrt",  "Rsqrt", "Reciprocal", "Erf",
                                        "Sin",   "Cos",   "Tan",   "Asin", "Acos",  "Atan",  "Sinh",       "Cosh",
                                        "Asinh", "Acosh", "Atanh", "Sign", "Floor", "Ceil",  "Round"};
  return names[static_cast<std::size_t>(op)];
}

/// Elementwise unary operation (Arm NN ElementwiseUnaryLayer; ONNX Abs, Neg, Exp, Log, Sqrt, Reciprocal,
/// Erf, the trigonometric and hyperbolic functions and their inverses, Sign, Floor, Ceil, Round).
/// Erf is what PyTorch's exact GELU exports to before ONNX opset 20; Sin and Cos are rotary embeddings'.
/// Values outside a function's domain follow IEEE 754 (log(-1) is NaN, 1/0 is inf), as in numpy.
struct ElementwiseUnary {
  static constexpr std::string_view name = "ElementwiseUnary";
  static constexpr Arity arity{1, 1};
  struct Params {
    UnaryOperation operation = UnaryOperation::Abs;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params&, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    out[0] = TensorInfo{in[0].shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
