// SPDX-License-Identifier: Apache-2.0
// ElementwiseBinary: arithmetic on two tensors with numpy broadcasting.
#pragma once

#include <cmath>
#include <optional>
#include <string_view>
#include <type_traits>

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
  Mod,    ///< the remainder with the divisor's sign (Python's %, ONNX Mod with fmod = 0, TFLite FLOOR_MOD)
  FMod,   ///< the remainder with the dividend's sign (C's fmod, ONNX Mod with fmod = 1)
};

constexpr std::string_view to_string(BinaryOperation op) noexcept {
  constexpr std::string_view names[] = {"Add",     "Sub",   "Mul",   "Div", "Maximum",
                                        "Minimum", "Power", "PRelu", "Mod", "FMod"};
  return names[static_cast<std::size_t>(op)];
}

/// a Mod b or a FMod b, the one definition every backend and the importer's folding compute. For
/// integers the caller checks b != 0; floats follow std::fmod (a NaN for b = 0).
template <class T>
T remainder(BinaryOperation op, T a, T b) {
  T r;
  if constexpr (std::is_floating_point_v<T>)
    r = std::fmod(a, b);
  else
    r = b == T(-1) ? T(0) : T(a % b);  // the lowest value % -1 overflows
  if (op == BinaryOperation::Mod && r != T(0) && (r < T(0)) != (b < T(0))) r += b;
  return r;
}

/// Elementwise binary operation (Arm NN ElementwiseBinaryLayer, ONNX Add/Sub/Mul/Div/Max/Min/Pow/PRelu/Mod).
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
