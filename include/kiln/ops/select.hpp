// SPDX-License-Identifier: Apache-2.0
// Select: each element from one of two tensors, as a Boolean condition says (ONNX Where).
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// y = condition ? x : other, elementwise, the three inputs broadcast together as in numpy (ONNX
/// Where, TFLite SELECT_V2). Inputs: condition (Boolean), x, other (one type, any). Attention
/// masks and causal masks are made with it.
struct Select {
  static constexpr std::string_view name = "Select";
  static constexpr Arity arity{3, 3};
  struct Params {
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params&, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (in[0].type != DataType::Boolean)
      return detail::invalid("input 0 (condition) must be Boolean, got ", to_string(in[0].type));
    if (auto s = detail::expect_same_type(in, 1, 2); !s) return s;
    if (in[1].quantization != in[2].quantization)
      return detail::invalid("inputs 1 and 2 must share their quantisation (Select moves elements)");
    auto shape = detail::broadcast_shapes(in[1].shape, in[2].shape);
    if (!shape) return shape.status();
    shape = detail::broadcast_shapes(in[0].shape, *shape);
    if (!shape) return shape.status();
    out[0] = TensorInfo{*shape, in[1].type, in[1].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
