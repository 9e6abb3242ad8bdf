// SPDX-License-Identifier: Apache-2.0
// Cast: a tensor's values in another floating-point type (Float32 <-> Float16).
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Converts between Float32 and Float16 (ONNX Cast between FLOAT and FLOAT16; Arm NN's
/// ConvertFp32ToFp16 and ConvertFp16ToFp32 layers, which its ReduceFp32ToFp16 option inserts as
/// OptimizerOptions::reduce_float32_to_float16 does here). Float32 to Float16 rounds to nearest,
/// ties to even, as kiln::float_to_half; past 65504 it is infinity; NaN stays NaN.
struct Cast {
  static constexpr std::string_view name = "Cast";
  static constexpr Arity arity{1, 1};
  struct Params {
    DataType to = DataType::Float16;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr bool converts(DataType type) { return type == DataType::Float32 || type == DataType::Float16; }

  static constexpr Status infer(const Params& params, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (!converts(in[0].type))
      return detail::invalid("casts Float32 and Float16 tensors; input 0 is ", to_string(in[0].type));
    if (!converts(params.to))
      return detail::invalid("casts to Float32 or Float16; the target is ", to_string(params.to));
    out[0] = TensorInfo{in[0].shape, params.to, {}};
    return Status::ok();
  }
};

}  // namespace kiln::ops
