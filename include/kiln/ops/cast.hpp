// SPDX-License-Identifier: Apache-2.0
// Cast: a tensor's values in another type (Float32, Float16, Signed32, Boolean).
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Converts between Float32, Float16, Signed32 and Boolean (ONNX Cast; Arm NN's ConvertFp32ToFp16
/// and ConvertFp16ToFp32 layers, which its ReduceFp32ToFp16 option inserts as
/// OptimizerOptions::reduce_float32_to_float16 does here). Float32 to Float16 rounds to nearest,
/// ties to even, as kiln::float_to_half; past 65504 it is infinity; NaN stays NaN. A number to
/// Boolean is whether it is not zero; Boolean to a number is 0 or 1. Float to Signed32 truncates
/// toward zero, saturating outside int32's range, NaN to 0 (where C++ and ONNX leave it undefined).
struct Cast {
  static constexpr std::string_view name = "Cast";
  static constexpr Arity arity{1, 1};
  struct Params {
    DataType to = DataType::Float16;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  /// The floating-point types, between which every backend casts.
  static constexpr bool converts(DataType type) { return type == DataType::Float32 || type == DataType::Float16; }
  /// Every type a Cast reads and writes (RefBackend's).
  static constexpr bool castable(DataType type) {
    return converts(type) || type == DataType::Signed32 || type == DataType::Boolean;
  }

  static constexpr Status infer(const Params& params, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (!castable(in[0].type))
      return detail::invalid("casts Float32, Float16, Signed32 and Boolean tensors; input 0 is ",
                             to_string(in[0].type));
    if (!castable(params.to))
      return detail::invalid("casts to Float32, Float16, Signed32 or Boolean; the target is ", to_string(params.to));
    out[0] = TensorInfo{in[0].shape, params.to, {}};
    return Status::ok();
  }
};

}  // namespace kiln::ops
