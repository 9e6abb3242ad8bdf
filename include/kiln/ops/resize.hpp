// SPDX-License-Identifier: Apache-2.0
// Resize: scales the spatial dimensions of an NHWC image by nearest-neighbour or bilinear sampling.
#pragma once

#include <cmath>
#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

enum class ResizeMethod : std::uint8_t { Nearest, Bilinear };

/// How an output coordinate maps to an input coordinate (ONNX coordinate_transformation_mode).
enum class CoordinateTransform : std::uint8_t {
  Asymmetric,    ///< x_in = x_out * in / out
  HalfPixel,     ///< x_in = (x_out + 0.5) * in / out - 0.5
  AlignCorners,  ///< x_in = x_out * (in - 1) / (out - 1)
};

/// How Nearest turns a fractional input coordinate into an index (ONNX nearest_mode).
enum class NearestRounding : std::uint8_t { Floor, Ceil, RoundPreferFloor, RoundPreferCeil };

/// Resize (Arm NN ResizeLayer, ONNX Resize on H and W, TFLite RESIZE_BILINEAR/RESIZE_NEAREST_NEIGHBOR).
/// Input and output are NHWC; only H and W change. Bilinear clamps sample positions to the image
/// (PyTorch and ONNX agree on this); nearest indices are clamped to [0, in - 1].
struct Resize {
  static constexpr std::string_view name = "Resize";
  static constexpr Arity arity{1, 1};
  struct Params {
    ResizeMethod method = ResizeMethod::Nearest;
    std::uint32_t height = 0;
    std::uint32_t width = 0;
    CoordinateTransform transform = CoordinateTransform::Asymmetric;
    NearestRounding rounding = NearestRounding::Floor;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  /// Input coordinate of output coordinate `o` along an axis of `in` -> `out` samples.
  static constexpr double source_coordinate(CoordinateTransform transform, std::uint32_t o, std::uint32_t in,
                                            std::uint32_t out) {
    switch (transform) {
      case CoordinateTransform::Asymmetric: return double(o) * in / out;
      case CoordinateTransform::HalfPixel: return (o + 0.5) * in / out - 0.5;
      case CoordinateTransform::AlignCorners: return out == 1 ? 0.0 : double(o) * (in - 1) / (out - 1);
    }
    return 0.0;
  }

  static std::int64_t nearest(NearestRounding rounding, double v) {
    switch (rounding) {
      case NearestRounding::Floor: return static_cast<std::int64_t>(std::floor(v));
      case NearestRounding::Ceil: return static_cast<std::int64_t>(std::ceil(v));
      case NearestRounding::RoundPreferFloor:
        return static_cast<std::int64_t>(v - std::floor(v) == 0.5 ? std::floor(v) : std::round(v));
      case NearestRounding::RoundPreferCeil: return static_cast<std::int64_t>(std::floor(v + 0.5));
    }
    return 0;
  }

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto s = detail::expect_rank(in, 0, "input", 4); !s) return s;
    if (p.height == 0 || p.width == 0) return detail::invalid("output size ", p.height, " x ", p.width, " is empty");
    if (in[0].shape[1] == 0 || in[0].shape[2] == 0) return detail::invalid("input image is empty");
    out[0] = TensorInfo{TensorShape{in[0].shape[0], p.height, p.width, in[0].shape[3]}, in[0].type, in[0].quantization};
    if (!out[0].shape.valid()) return detail::invalid("output is too large");
    return Status::ok();
  }
};

}  // namespace kiln::ops
