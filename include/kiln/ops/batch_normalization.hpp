// SPDX-License-Identifier: Apache-2.0
// BatchNormalization: inference-time normalisation over the innermost (channel) dimension.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Batch normalisation in inference mode (Arm NN BatchNormalizationLayer, ONNX BatchNormalization).
///
/// Inputs: x [..., C], mean [C], variance [C], beta [C], gamma [C].
/// y = gamma * (x - mean) / sqrt(variance + epsilon) + beta, per channel (the innermost dimension).
struct BatchNormalization {
  static constexpr std::string_view name = "BatchNormalization";
  static constexpr Arity arity{5, 5};
  struct Params {
    float epsilon = 1e-5f;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (in[0].rank() == 0) return detail::invalid("input 0 must have a channel dimension");
    if (!(p.epsilon >= 0.0f)) return detail::invalid("epsilon must be >= 0, got ", p.epsilon);
    constexpr std::string_view roles[] = {"", "mean", "variance", "beta", "gamma"};
    const std::uint32_t channels = in[0].shape.dim_from_end(0);
    for (std::size_t i = 1; i < 5; ++i) {
      if (auto s = detail::expect_rank(in, i, roles[i], 1); !s) return s;
      if (in[i].shape[0] != channels)
        return detail::invalid("input ", i, " (", roles[i], ") has ", in[i].shape[0], " elements but x has ", channels,
                               " channels");
    }
    out[0] = TensorInfo{in[0].shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
