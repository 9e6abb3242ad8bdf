// SPDX-License-Identifier: Apache-2.0
// Softmax and its logarithm along one axis.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Softmax (TFLite SOFTMAX, ONNX Softmax opset 13) or, with `log`, LogSoftmax:
/// y = exp(beta * x - max) / sum(exp(beta * x - max)) along `axis` (negative counts from the end).
struct Softmax {
  static constexpr std::string_view name = "Softmax";
  static constexpr Arity arity{1, 1};
  struct Params {
    std::int64_t axis = -1;
    float beta = 1.0f;
    bool log = false;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (in[0].rank() == 0) return detail::invalid("softmax needs an input of rank 1 or more");
    if (auto axis = detail::normalize_axis(p.axis, in[0].rank()); !axis) return axis.status();
    out[0] = TensorInfo{in[0].shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
