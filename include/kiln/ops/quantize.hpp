// SPDX-License-Identifier: Apache-2.0
// The conversions between real and quantised tensors: Quantize, Dequantize, Requantize (decision 0014).
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::detail {

/// Checks the quantisation a conversion's `role` tensor carries: per tensor, or per slice of its
/// axis with as many scales as the axis is long.
constexpr Status check_scales(const TensorInfo& info, std::string_view role, bool per_axis_allowed) {
  const QuantizationInfo& q = info.quantization;
  if (q.empty()) return invalid(role, " ", info.to_string(), " has no quantisation scale");
  if (is_quantized(info.type)) {
    const QuantizedRange range = quantized_range(info.type);
    if (q.offset < range.lo || q.offset > range.hi)
      return invalid(role, " has zero point ", q.offset, ", outside ", to_string(info.type), "'s [", range.lo, ", ",
                     range.hi, "]");
    if (info.type == DataType::QSymmS8 && q.offset != 0)
      return invalid(role, " is QSymmS8, whose zero point is 0; it has ", q.offset, " (QAsymmS8 has one)");
  }
  if (!q.is_per_axis()) return Status::ok();
  if (!per_axis_allowed) return invalid(role, " must be quantised per tensor; it has ", q.scales.size(), " scales");
  if (!q.axis) return invalid(role, " has ", q.scales.size(), " scales but no quantisation axis");
  if (q.scales.size() != info.shape[*q.axis])
    return invalid(role, " has ", q.scales.size(), " scales for axis ", *q.axis, " of length ", info.shape[*q.axis]);
  return Status::ok();
}

}  // namespace kiln::detail

namespace kiln::ops {

/// Float32 to 8-bit integers (ONNX QuantizeLinear, Arm NN QuantizeLayer):
/// q = saturate(round_half_to_even(x / scale) + zero_point), per tensor or per slice of an axis.
/// NaN becomes the zero point (real 0); infinities saturate.
///
/// The output's data type (QAsymmU8, QAsymmS8 or QSymmS8) and quantisation are the builder's
/// choice: declare them with Network::set_output_type.
struct Quantize {
  static constexpr std::string_view name = "Quantize";
  static constexpr Arity arity{1, 1};
  static constexpr bool output_type_declared = true;
  struct Params {
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  /// `out[0]` holds the declared type and quantisation on entry.
  static constexpr Status infer(const Params&, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (in[0].type != DataType::Float32)
      return detail::invalid("quantizes Float32 input; input 0 is ", to_string(in[0].type),
                             " (a quantised input changes scale with Requantize)");
    if (!is_quantized(out[0].type))
      return detail::invalid("output type ", to_string(out[0].type), " is not QAsymmU8, QAsymmS8 or QSymmS8");
    out[0].shape = in[0].shape;
    return detail::check_scales(out[0], "output", true);
  }
};

/// Quantised integers to Float32 (ONNX DequantizeLinear, Arm NN DequantizeLayer):
/// x = (q - zero_point) x scale, per tensor or per slice of an axis. The input is an 8-bit
/// quantised tensor, or Signed32 with a scale (a quantised bias).
struct Dequantize {
  static constexpr std::string_view name = "Dequantize";
  static constexpr Arity arity{1, 1};
  struct Params {
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Status infer(const Params&, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (!is_quantized(in[0].type) && in[0].type != DataType::Signed32)
      return detail::invalid("dequantizes QAsymmU8, QAsymmS8, QSymmS8 or Signed32 input; input 0 is ",
                             to_string(in[0].type));
    if (auto s = detail::check_scales(in[0], "input 0", true); !s) return s;
    out[0] = TensorInfo{in[0].shape, DataType::Float32, {}};
    return Status::ok();
  }
};

/// 8-bit integers to 8-bit integers of another scale, zero point or type (Arm NN's Quantize layer
/// given a quantised input; what an importer makes of DequantizeLinear followed by QuantizeLinear):
/// q_out = saturate(zero_out + round(q_in - zero_in) x scale_in / scale_out) in integers only, with
/// the multiplier and rounding of decision 0014. Per-tensor quantisation on both sides; the output's
/// type and quantisation are declared with Network::set_output_type.
struct Requantize {
  static constexpr std::string_view name = "Requantize";
  static constexpr Arity arity{1, 1};
  static constexpr bool output_type_declared = true;
  struct Params {
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  /// `out[0]` holds the declared type and quantisation on entry.
  static constexpr Status infer(const Params&, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (!is_quantized(in[0].type))
      return detail::invalid("requantizes QAsymmU8, QAsymmS8 or QSymmS8 input; input 0 is ", to_string(in[0].type));
    if (!is_quantized(out[0].type))
      return detail::invalid("output type ", to_string(out[0].type), " is not QAsymmU8, QAsymmS8 or QSymmS8");
    if (auto s = detail::check_scales(in[0], "input 0", false); !s) return s;
    out[0].shape = in[0].shape;
    return detail::check_scales(out[0], "output", false);
  }
};

}  // namespace kiln::ops
