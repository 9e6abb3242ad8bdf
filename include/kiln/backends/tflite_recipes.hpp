// SPDX-License-Identifier: Apache-2.0
// TensorFlow Lite's own int8 recipes, for networks whose arithmetic is TensorFlow Lite's (decision
// 0023): the activations it computes in fixed point rather than through a float table, and its
// rounded average. Each is a function of integers that RefBackend's loops and every backend's
// tables share, so all backends give LiteRT's integers.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>

#include "kiln/backends/workload.hpp"
#include "kiln/core/requantization.hpp"
#include "kiln/ops/activation.hpp"
#include "kiln/ops/resize.hpp"

namespace kiln::tflite_recipes {

/// gemmlowp's 16-bit rounding doubling high multiply: round(a b / 2^15) with ties up (a nudge of
/// 2^14, or 1 - 2^14 for a negative product, then a truncating division), saturated for -2^15 x -2^15.
constexpr std::int32_t rounding_doubling_high_multiply_16(std::int32_t a, std::int32_t b) noexcept {
  if (a == -32768 && b == -32768) return 32767;
  const std::int32_t product = a * b;
  return (product + (product >= 0 ? (1 << 14) : 1 - (1 << 14))) / (1 << 15);
}

/// The same without the rounding: a truncating division.
constexpr std::int32_t doubling_high_multiply_16(std::int32_t a, std::int32_t b) noexcept {
  if (a == -32768 && b == -32768) return 32767;
  return a * b / (1 << 15);
}

/// gemmlowp's rounding right shift: x / 2^exponent, ties away from zero.
constexpr std::int32_t rounding_divide_by_power_of_two(std::int32_t x, int exponent) noexcept {
  const std::int32_t mask = static_cast<std::int32_t>((std::int64_t{1} << exponent) - 1);
  const std::int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + ((x & mask) > threshold ? 1 : 0);
}

constexpr std::int32_t saturate_16(std::int32_t v) noexcept { return std::clamp<std::int32_t>(v, -32768, 32767); }

/// A 31-bit multiplier's 16-bit form (TensorFlow Lite's DownScaleInt32ToInt16Multiplier).
constexpr std::int32_t multiplier_16(std::int32_t multiplier) noexcept {
  return multiplier >= 0x7fffffff - (1 << 15) ? 32767 : (multiplier + (1 << 15)) >> 16;
}

/// TensorFlow Lite's int8 HARD_SWISH of input integer q (reference_ops::HardSwish): x on a
/// 2^-7 finer scale in 16 bits, times the output multiplier, times a "relu-ish" factor in [0, 1]
/// computed from x in 16-bit fixed point, shifted to the output scale.
inline std::int32_t hard_swish(std::int32_t q, float x_scale, std::int32_t x_zero, float y_scale, std::int32_t y_zero) {
  const float hires_scale = (1.0f / 128.0f) * x_scale;
  const auto output = Requantization::from_real(static_cast<double>(hires_scale / y_scale));
  const auto reluish = Requantization::from_real(static_cast<double>(hires_scale / (3.0f / 32768.0f)));
  // A multiplier out of range for either (scales 2^30 apart) leaves it at 0: TensorFlow Lite refuses such a model.
  const std::int32_t output_multiplier = multiplier_16(output ? output->multiplier : 0);
  const std::int32_t reluish_multiplier = multiplier_16(reluish ? reluish->multiplier : 0);
  const int output_exponent = output ? output->shift : 0, reluish_exponent = reluish ? reluish->shift : 0;

  const std::int32_t hires = (q - x_zero) * 128;  // |q - x_zero| <= 255: fits 16 bits
  const std::int32_t preshift = rounding_doubling_high_multiply_16(hires, output_multiplier);
  std::int32_t relu_ish = hires;
  if (reluish_exponent > 0) relu_ish = saturate_16(relu_ish * (1 << (reluish_exponent - 1)));
  relu_ish = rounding_doubling_high_multiply_16(relu_ish, reluish_multiplier);
  if (reluish_exponent > 0) relu_ish = saturate_16(relu_ish * 2);
  if (reluish_exponent < 0) relu_ish = rounding_divide_by_power_of_two(relu_ish, -reluish_exponent);
  relu_ish = (relu_ish + (1 << 15)) >> 1;  // [-1, 1] to [0, 1]
  const std::int32_t product = doubling_high_multiply_16(relu_ish, preshift);
  return rounding_divide_by_power_of_two(product, std::max(0, -output_exponent)) + y_zero;
}

/// TensorFlow Lite's int8 LEAKY_RELU of q: x - zx times sx / sy, or times alpha sx / sy below zero,
/// each multiplier made in float (as LeakyReluPrepare makes it) and applied with two roundings.
inline std::int32_t leaky_relu(std::int32_t q, float alpha, float x_scale, std::int32_t x_zero, float y_scale,
                               std::int32_t y_zero) {
  const std::int32_t x = q - x_zero;
  const float real = x >= 0 ? x_scale / y_scale : x_scale * alpha / y_scale;
  if (!(real > 0.0f)) return y_zero;  // alpha 0: ReLU's zero
  const auto m = Requantization::from_real(static_cast<double>(real), QuantizedArithmetic::TfLite);
  return y_zero + (m ? m->apply(x) : 0);
}

/// TensorFlow Lite's round(v / scale) for an activation's clamp (TfLiteRound: ties away from zero).
inline std::int32_t rounded_bound(float v, float scale) { return static_cast<std::int32_t>(std::round(v / scale)); }

/// TensorFlow Lite's int8 RELU, RELU6 and RELU_N1_TO_1 of q as layers of their own (ReluX): x - zx
/// rescaled by sx / sy with two roundings, then clamped to the function's range on the output scale.
inline std::int32_t relu_family(std::int32_t q, float lower, std::optional<float> upper, float x_scale,
                                std::int32_t x_zero, float y_scale, std::int32_t y_zero) {
  const auto m = Requantization::from_real(static_cast<double>(x_scale / y_scale), QuantizedArithmetic::TfLite);
  std::int32_t y = y_zero + (m ? m->apply(q - x_zero) : 0);
  y = std::max(y, y_zero + rounded_bound(lower, y_scale));
  if (upper) y = std::min(y, y_zero + rounded_bound(*upper, y_scale));
  return y;
}

/// TensorFlow Lite's int8 average of a window (reference_integer_ops::AveragePool, input and output
/// of one quantisation): the sum of the window's integers (not less the zero point) divided by
/// their count, ties away from zero.
constexpr std::int32_t average(std::int64_t sum, std::int64_t count) noexcept {
  return static_cast<std::int32_t>(sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count);
}

/// TensorFlow Lite's multiplier for an int8 MEAN of `count` elements (reference_ops::
/// QuantizedMeanOrSum): sx / sy as a multiplier and shift, the multiplier then shifted left by
/// floor(log2 count) bits (at most 32, and not past a shift of -31) and divided by the count,
/// truncating. Applied, with two roundings, to the sum of (x - zx).
inline Expected<Requantization> mean_multiplier(double rescale, std::uint64_t count) {
  auto m = Requantization::from_real(rescale, QuantizedArithmetic::TfLite);
  if (!m || count == 0) return m;
  const int bits = std::min({static_cast<int>(std::bit_width(count)) - 1, 32, 31 + int{m->shift}});
  m->multiplier = static_cast<std::int32_t>((std::int64_t{m->multiplier} << bits) / static_cast<std::int64_t>(count));
  m->shift = static_cast<std::int16_t>(m->shift - bits);
  return m;
}

/// Whether a Resize is a bilinear one of 8-bit tensors of one quantisation in a network in TensorFlow
/// Lite's arithmetic, which interpolates their integers in 10-bit fixed point (ResizeBilinearInteger).
inline bool is_integer_bilinear(const WorkloadInfo<ops::Resize>& info) {
  const TensorInfo &x = info.inputs[0], &y = info.outputs[0];
  return info.arithmetic == QuantizedArithmetic::TfLite && info.params.method == ops::ResizeMethod::Bilinear &&
         is_quantized(x.type) && x.type == y.type && x.quantization == y.quantization;
}

/// Where output coordinate o samples an axis of `in` -> `out` samples, in 1/1024ths: the position,
/// and the two input indices around it (TensorFlow Lite's ComputeInterpolationValuesInteger).
struct BilinearWeights {
  std::int32_t position, lower, upper;
};
inline BilinearWeights bilinear_weights(const ops::Resize::Params& p, std::int32_t o, std::int32_t in,
                                        std::int32_t out) {
  std::int32_t scale = ((1 << 10) * in + out / 2) / out;
  if (p.transform == ops::CoordinateTransform::AlignCorners && out > 1)
    scale = ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
  const std::int32_t position =
      p.transform == ops::CoordinateTransform::HalfPixel ? o * scale + scale / 2 - (1 << 9) : o * scale;
  return {position, std::max<std::int32_t>(position / (1 << 10), 0),
          std::min<std::int32_t>((position + (1 << 10) - 1) / (1 << 10), in - 1)};
}

/// The interpolation of four integers at fractions fy, fx (in 1/1024ths) past the first row and
/// column, rounded from 2^-20 units with ties away from zero.
constexpr std::int32_t bilinear(std::int64_t q00, std::int64_t q01, std::int64_t q10, std::int64_t q11, std::int64_t fy,
                                std::int64_t fx) noexcept {
  const std::int64_t sum =
      q00 * (1024 - fy) * (1024 - fx) + q10 * fy * (1024 - fx) + q01 * (1024 - fy) * fx + q11 * fy * fx;
  return static_cast<std::int32_t>((sum + (sum > 0 ? (1 << 19) : -(1 << 19))) / (1 << 20));
}

/// The output integer of an int8 Activation by TensorFlow Lite's recipe where it has one of its
/// own (HardSwish, LeakyReLU, the ReLU family), before the output type's clamp; nothing for the
/// functions it computes through a float table, as kiln does.
inline std::optional<std::int32_t> activation(const ops::Activation::Params& params, std::int32_t q, float x_scale,
                                              std::int32_t x_zero, float y_scale, std::int32_t y_zero) {
  using F = ops::ActivationFunction;
  switch (params.function) {
    case F::HardSwish: return hard_swish(q, x_scale, x_zero, y_scale, y_zero);
    case F::LeakyReLU: return leaky_relu(q, params.a, x_scale, x_zero, y_scale, y_zero);
    case F::ReLU: return relu_family(q, 0.0f, std::nullopt, x_scale, x_zero, y_scale, y_zero);
    case F::BoundedReLU: return relu_family(q, params.b, params.a, x_scale, x_zero, y_scale, y_zero);
    default: return std::nullopt;
  }
}

}  // namespace kiln::tflite_recipes
