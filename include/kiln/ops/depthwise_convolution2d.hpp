// SPDX-License-Identifier: Apache-2.0
// DepthwiseConvolution2d: per-channel 2-D convolution with a channel multiplier.
#pragma once

#include <string_view>

#include <optional>

#include "kiln/ops/activation.hpp"
#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Depthwise 2-D convolution (TFLite DEPTHWISE_CONV_2D; ONNX Conv with groups == channels).
///
/// Inputs: input [N, H, W, C], weights [1, KH, KW, C * M], optional bias [C * M].
/// Output channel c * M + m convolves input channel c with weights[..., c * M + m].
struct DepthwiseConvolution2d {
  static constexpr std::string_view name = "DepthwiseConvolution2d";
  static constexpr Arity arity{2, 3};
  struct Params {
    Padding2d padding;
    Size2d stride;
    Size2d dilation;
    /// Applied to every output element; set by the optimizer when it fuses a following Activation.
    std::optional<Activation::Params> activation;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto s = Activation::validate(p.activation); !s) return s;
    if (auto s = detail::expect_rank(in, 0, "input", 4); !s) return s;
    if (auto s = detail::expect_rank(in, 1, "weights", 4); !s) return s;
    const TensorShape& x = in[0].shape;
    const TensorShape& w = in[1].shape;
    if (w[0] != 1) return detail::invalid("weights ", w.to_string(), " must have shape [1, KH, KW, C * M]");
    if (x[3] == 0 || w[3] % x[3] != 0)
      return detail::invalid("weights have ", w[3], " output channels, not a multiple of the ", x[3],
                             " input channels");
    if (in.size() == 3) {
      if (auto s = detail::expect_rank(in, 2, "bias", 1); !s) return s;
      if (in[2].shape[0] != w[3])
        return detail::invalid("bias has ", in[2].shape[0], " elements but there are ", w[3], " output channels");
    }
    auto oh = detail::window_output_size(x[1], w[1], p.stride.height, p.dilation.height, p.padding.top,
                                         p.padding.bottom, "height");
    if (!oh) return oh.status();
    auto ow = detail::window_output_size(x[2], w[2], p.stride.width, p.dilation.width, p.padding.left, p.padding.right,
                                         "width");
    if (!ow) return ow.status();
    out[0] = TensorInfo{TensorShape{x[0], *oh, *ow, w[3]}, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
