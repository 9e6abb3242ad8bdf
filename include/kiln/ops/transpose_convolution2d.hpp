// SPDX-License-Identifier: Apache-2.0
// TransposeConvolution2d: the gradient of Convolution2d with respect to its input ("deconvolution").
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Transposed 2-D convolution (TFLite TRANSPOSE_CONV, ONNX ConvTranspose with group 1, dilation 1).
///
/// Inputs: input [N, H, W, C], weights [O, KH, KW, C], optional bias [O].
/// Every input pixel (y, x) scatters input[y, x, c] * weights[o, ky, kx, c] to output
/// (y * stride + ky - top, x * stride + kx - left). Output height is
/// (H - 1) * stride + KH - top - bottom + output_padding.height (likewise width).
struct TransposeConvolution2d {
  static constexpr std::string_view name = "TransposeConvolution2d";
  static constexpr Arity arity{2, 3};
  struct Params {
    Padding2d padding;
    Size2d stride;
    Size2d output_padding{0, 0};
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto s = detail::expect_rank(in, 0, "input", 4); !s) return s;
    if (auto s = detail::expect_rank(in, 1, "weights", 4); !s) return s;
    const TensorShape& x = in[0].shape;
    const TensorShape& w = in[1].shape;
    if (w[3] != x[3])
      return detail::invalid("weights ", w.to_string(), " expect ", w[3], " input channels but input ", x.to_string(),
                             " has ", x[3]);
    if (p.stride.height == 0 || p.stride.width == 0) return detail::invalid("stride is zero");
    if (p.output_padding.height >= p.stride.height || p.output_padding.width >= p.stride.width)
      return detail::invalid("output padding must be smaller than the stride");
    if (in.size() == 3) {
      if (auto s = detail::expect_rank(in, 2, "bias", 1); !s) return s;
      if (in[2].shape[0] != w[0])
        return detail::invalid("bias has ", in[2].shape[0], " elements but there are ", w[0], " output channels");
    }
    if (x[1] == 0 || x[2] == 0) return detail::invalid("input has an empty spatial dimension");
    const std::int64_t oh =
        std::int64_t{x[1] - 1} * p.stride.height + w[1] - p.padding.top - p.padding.bottom + p.output_padding.height;
    const std::int64_t ow =
        std::int64_t{x[2] - 1} * p.stride.width + w[2] - p.padding.left - p.padding.right + p.output_padding.width;
    if (oh <= 0 || ow <= 0) return detail::invalid("padding crops away the whole output (", oh, " x ", ow, ")");
    out[0] = TensorInfo{TensorShape{x[0], static_cast<std::uint32_t>(oh), static_cast<std::uint32_t>(ow), w[0]},
                        in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
