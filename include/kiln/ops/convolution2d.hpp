// SPDX-License-Identifier: Apache-2.0
// Convolution2d: 2-D convolution over NHWC input with OHWI weights, stride, dilation, padding, groups.
#pragma once

#include <string_view>

#include <optional>

#include "kiln/ops/activation.hpp"
#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// 2-D convolution (TFLite CONV_2D, ONNX Conv with groups).
///
/// Inputs: input [N, H, W, C], weights [O, KH, KW, C / groups], optional bias [O].
/// Output [N, OH, OW, O] with OH = floor((H + top + bottom - dilation*(KH-1) - 1) / stride) + 1.
/// Output channel o reads the input channels of group o / (O / groups).
struct Convolution2d {
  static constexpr std::string_view name = "Convolution2d";
  static constexpr Arity arity{2, 3};
  struct Params {
    Padding2d padding;
    Size2d stride;
    Size2d dilation;
    std::uint32_t groups = 1;
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
    if (p.groups == 0) return detail::invalid("groups is zero");
    if (x[3] % p.groups != 0 || w[0] % p.groups != 0)
      return detail::invalid("groups ", p.groups, " must divide input channels ", x[3], " and output channels ", w[0]);
    if (w[3] * p.groups != x[3])
      return detail::invalid("weights ", w.to_string(), " expect ", w[3] * p.groups, " input channels (", w[3],
                             " per group x ", p.groups, " groups) but input ", x.to_string(), " has ", x[3]);
    if (in.size() == 3) {
      if (auto s = detail::expect_rank(in, 2, "bias", 1); !s) return s;
      if (in[2].shape[0] != w[0])
        return detail::invalid("bias has ", in[2].shape[0], " elements but there are ", w[0], " output channels");
    }
    auto oh = detail::window_output_size(x[1], w[1], p.stride.height, p.dilation.height, p.padding.top,
                                         p.padding.bottom, "height");
    if (!oh) return oh.status();
    auto ow = detail::window_output_size(x[2], w[2], p.stride.width, p.dilation.width, p.padding.left, p.padding.right,
                                         "width");
    if (!ow) return ow.status();
    out[0] = TensorInfo{TensorShape{x[0], *oh, *ow, w[0]}, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
