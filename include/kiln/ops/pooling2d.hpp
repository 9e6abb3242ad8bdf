// SPDX-License-Identifier: Apache-2.0
// Pooling2d: max or average over sliding 2-D windows of an NHWC tensor, or over the whole plane.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

enum class PoolingKind : std::uint8_t { Max, Average };

/// 2-D pooling (TFLite MAX_POOL_2D/AVERAGE_POOL_2D, ONNX MaxPool/AveragePool/Global*Pool).
///
/// Input and output NHWC. Padded positions never win a max. An average divides by the number of
/// window positions inside the input, or by the full window size when count_include_pad is set
/// (ONNX count_include_pad, Arm NN PaddingMethod::IgnoreValue). ceil_mode rounds the output size up
/// (ONNX ceil_mode), never adding a window that starts in the bottom/right padding.
/// global pools over the whole H x W plane and ignores window, stride and padding. `dilation`
/// spaces the window's positions (ONNX dilations: position k of a row is k * dilation past its
/// start); a window reaches (window - 1) * dilation + 1 pixels.
struct Pooling2d {
  static constexpr std::string_view name = "Pooling2d";
  static constexpr Arity arity{1, 1};
  struct Params {
    PoolingKind kind = PoolingKind::Max;
    Size2d window;
    Size2d stride;
    Padding2d padding;
    bool count_include_pad = false;
    bool ceil_mode = false;
    bool global = false;
    Size2d dilation;
    friend constexpr bool operator==(const Params&, const Params&) = default;
    /// How many pixels the window reaches down and across: (window - 1) * dilation + 1.
    constexpr Size2d extent() const {
      return {(window.height - 1) * dilation.height + 1, (window.width - 1) * dilation.width + 1};
    }
  };

  /// The window and padding the kernel uses once `global` is resolved against the input shape.
  static constexpr Params resolved(const Params& p, const TensorShape& input) {
    if (!p.global) return p;
    Params r = p;
    r.window = {input[1], input[2]};
    r.stride = {1, 1};
    r.padding = {};
    r.ceil_mode = false;
    r.dilation = {1, 1};
    return r;
  }

  static constexpr Status infer(const Params& params, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto s = detail::expect_rank(in, 0, "input", 4); !s) return s;
    const TensorShape& x = in[0].shape;
    const Params p = resolved(params, x);
    if (p.dilation.height == 0 || p.dilation.width == 0) return detail::invalid("dilation is zero");
    const Size2d reach = p.extent();
    if (p.padding.top >= reach.height || p.padding.bottom >= reach.height || p.padding.left >= reach.width ||
        p.padding.right >= reach.width)
      return detail::invalid("padding must be smaller than the window, or some windows would see only padding");
    auto oh = detail::window_output_size(x[1], p.window.height, p.stride.height, p.dilation.height, p.padding.top,
                                         p.padding.bottom, "height", p.ceil_mode);
    if (!oh) return oh.status();
    auto ow = detail::window_output_size(x[2], p.window.width, p.stride.width, p.dilation.width, p.padding.left,
                                         p.padding.right, "width", p.ceil_mode);
    if (!ow) return ow.status();
    out[0] = TensorInfo{TensorShape{x[0], *oh, *ow, x[3]}, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
