// SPDX-License-Identifier: Apache-2.0
// Resize: scales the spatial dimensions of an NHWC image by nearest-neighbour, bilinear or bicubic sampling.
#pragma once

#include <algorithm>
#include <cmath>
#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

enum class ResizeMethod : std::uint8_t {
  Nearest,
  Bilinear,
  Bicubic,  ///< Keys' cubic convolution over 4 x 4 pixels (ONNX cubic, PyTorch bicubic); RefBackend only
};

/// How an output coordinate maps to an input coordinate (ONNX coordinate_transformation_mode). s is
/// the scale, output size / input size unless given (ONNX's scales).
enum class CoordinateTransform : std::uint8_t {
  Asymmetric,             ///< x_in = x_out / s
  HalfPixel,              ///< x_in = (x_out + 0.5) / s - 0.5
  AlignCorners,           ///< x_in = x_out * (in - 1) / (in * s - 1)
  PytorchHalfPixel,       ///< HalfPixel, but 0 when the output axis has one element
  TfHalfPixelForNearest,  ///< x_in = (x_out + 0.5) / s
};

/// How Nearest turns a fractional input coordinate into an index (ONNX nearest_mode).
enum class NearestRounding : std::uint8_t { Floor, Ceil, RoundPreferFloor, RoundPreferCeil };

/// Resize (Arm NN ResizeLayer, ONNX Resize on H and W, TFLite RESIZE_BILINEAR/RESIZE_NEAREST_NEIGHBOR).
/// Input and output are NHWC; only H and W change. Bilinear clamps sample positions to the image
/// (PyTorch and ONNX agree on this); nearest and bicubic indices are clamped to [0, in - 1], as if
/// the edge pixels went on.
struct Resize {
  static constexpr std::string_view name = "Resize";
  static constexpr Arity arity{1, 1};
  struct Params {
    ResizeMethod method = ResizeMethod::Nearest;
    std::uint32_t height = 0;
    std::uint32_t width = 0;
    CoordinateTransform transform = CoordinateTransform::Asymmetric;
    NearestRounding rounding = NearestRounding::Floor;
    /// The scales coordinates map by (ONNX Resize given scales: 0.6 of 4 pixels is 2 pixels, but
    /// coordinates still divide by 0.6); 0 maps by output size / input size.
    float height_scale = 0.0f;
    float width_scale = 0.0f;
    /// Bicubic: the kernel's coefficient (ONNX cubic_coeff_a; -0.75 as PyTorch, -0.5 as TensorFlow),
    /// and whether taps outside the image get no weight, the others renormalised (exclude_outside).
    float cubic_coefficient = -0.75f;
    bool exclude_outside = false;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  /// Input coordinate of output coordinate `o` along an axis of `in` -> `out` samples, at `scale`
  /// (0: out / in, computed as a ratio of whole numbers so that nearest's ties stay exact).
  static constexpr double source_coordinate(CoordinateTransform transform, float scale, std::uint32_t o,
                                            std::uint32_t in, std::uint32_t out) {
    const auto divided = [&](double v) { return scale > 0.0f ? v / double(scale) : v * in / out; };
    const double resized = scale > 0.0f ? double(in) * double(scale) : double(out);
    switch (transform) {
      case CoordinateTransform::Asymmetric: return divided(o);
      case CoordinateTransform::HalfPixel: return divided(o + 0.5) - 0.5;
      case CoordinateTransform::AlignCorners: return resized == 1.0 ? 0.0 : double(o) * (in - 1) / (resized - 1.0);
      case CoordinateTransform::PytorchHalfPixel: return out == 1 ? 0.0 : divided(o + 0.5) - 0.5;
      case CoordinateTransform::TfHalfPixelForNearest: return divided(o + 0.5);
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

  /// Where output row or column `o` samples the input, for Nearest and Bilinear: the nearest index
  /// (first), or the two bilinear neighbours and the weight of the second.
  struct Sample {
    std::int64_t first = 0, second = 0;
    double weight = 0.0;
  };
  /// The sample of output row (`rows`) or column `o` of an axis of `in` -> `out` pixels.
  static Sample sample(const Params& p, bool rows, std::uint32_t o, std::uint32_t in, std::uint32_t out) {
    const double s = source_coordinate(p.transform, rows ? p.height_scale : p.width_scale, o, in, out);
    if (p.method == ResizeMethod::Nearest) {
      const std::int64_t index = std::clamp<std::int64_t>(nearest(p.rounding, s), 0, std::int64_t{in} - 1);
      return {index, index, 0.0};
    }
    const double clamped = std::clamp(s, 0.0, double(in - 1));
    const auto first = static_cast<std::int64_t>(std::floor(clamped));
    return {first, std::min<std::int64_t>(first + 1, std::int64_t{in} - 1), clamped - double(first)};
  }

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto s = detail::expect_rank(in, 0, "input", 4); !s) return s;
    if (p.height == 0 || p.width == 0) return detail::invalid("output size ", p.height, " x ", p.width, " is empty");
    if (!(p.height_scale >= 0.0f) || !(p.width_scale >= 0.0f))
      return detail::invalid("scales ", p.height_scale, " x ", p.width_scale, " (positive, or 0 for output / input)");
    if (in[0].shape[1] == 0 || in[0].shape[2] == 0) return detail::invalid("input image is empty");
    out[0] = TensorInfo{TensorShape{in[0].shape[0], p.height, p.width, in[0].shape[3]}, in[0].type, in[0].quantization};
    if (!out[0].shape.valid()) return detail::invalid("output is too large");
    return Status::ok();
  }
};

}  // namespace kiln::ops
