// SPDX-License-Identifier: Apache-2.0
// What every backend's int8 Reduce shares (decision 0014): the checks of its tensors, and the
// output stage, made at load, that turns a sum, mean, max or min of 8-bit inputs into an 8-bit output.
#pragma once

#include <cstdint>

#include "kiln/backends/quantized_layer.hpp"
#include "kiln/backends/tflite_recipes.hpp"
#include "kiln/ops/reduce.hpp"

namespace kiln::quantized {

/// The most elements an int8 Reduce folds into one output: 255 x 2^23 stays within int32.
inline constexpr std::uint64_t max_reduce_count = std::uint64_t{1} << 23;

/// What turns an int8 reduction into its output, as pooling does: acc is the sum of (x - zx)
/// over the reduced elements (Sum, Mean) or their max or min less zx, times sx / (sy x divisor)
/// (the divisor is the count for Mean, else 1), rounded once (ties up), plus the output zero
/// point, saturated. A max or min of one scale and zero point in and out is that element itself.
/// In TensorFlow Lite's arithmetic a mean's multiplier is TensorFlow Lite's (tflite_recipes::
/// mean_multiplier: sx / sy, then divided by the count in integers).
class ReduceStage {
 public:
  static Expected<ReduceStage> make(const WorkloadInfo<ops::Reduce>& info) {
    const TensorInfo &x = info.inputs[0], &y = info.outputs[0];
    const std::uint64_t count = ops::Reduce::reduced_count(info.params, x.shape);
    const bool mean = info.params.operation == ops::ReduceOperation::Mean;
    const double rescale = static_cast<double>(x.quantization.scales[0]) / y.quantization.scales[0];
    auto m = mean && info.arithmetic == QuantizedArithmetic::TfLite
                 ? tflite_recipes::mean_multiplier(rescale, count)
                 : Requantization::from_real(rescale / (mean ? static_cast<double>(count) : 1.0), info.arithmetic);
    if (!m) return m.status();
    ReduceStage stage;
    stage.multiplier_ = *m;
    stage.x_zero_ = x.quantization.offset;
    stage.y_zero_ = y.quantization.offset;
    stage.range_ = OutputRange::of(y, std::nullopt);
    return stage;
  }

  /// The output for acc, the reduction of (x - zx).
  std::int32_t operator()(std::int64_t acc) const {
    return requantize(saturate_to_int32(acc), multiplier_, y_zero_, range_.lo, range_.hi);
  }

  /// The parts, for kernels that run elsewhere.
  const Requantization& multiplier() const noexcept { return multiplier_; }
  std::int32_t x_zero() const noexcept { return x_zero_; }
  std::int32_t y_zero() const noexcept { return y_zero_; }
  std::int32_t lo() const noexcept { return range_.lo; }
  std::int32_t hi() const noexcept { return range_.hi; }

 private:
  Requantization multiplier_;
  std::int32_t x_zero_ = 0, y_zero_ = 0;
  OutputRange range_;
};

/// Checks an int8 Reduce: input and output QAsymmU8 or QAsymmS8 of one type, per tensor; at most
/// max_reduce_count elements per output; a multiplier sx / (sy x divisor) below 2^30.
inline Status check_reduce(const WorkloadInfo<ops::Reduce>& info) {
  const TensorInfo &x = info.inputs[0], &y = info.outputs[0];
  if (info.params.operation == ops::ReduceOperation::Prod)
    return Status::error(ErrorCode::Unsupported,
                         "runs int8 Sum, Mean, Max and Min; a product runs in Float32 behind a Dequantize");
  if (auto s = require_activation(x, "input"); !s) return s;
  if (auto s = require_activation(y, "output"); !s) return s;
  if (x.type != y.type)
    return Status::error(ErrorCode::Unsupported, "runs int8 Reduce whose input and output have one type; ",
                         to_string(x.type), " in, ", to_string(y.type), " out");
  if (const std::uint64_t count = ops::Reduce::reduced_count(info.params, x.shape); count > max_reduce_count)
    return Status::error(ErrorCode::Unsupported, "reduces at most ", max_reduce_count,
                         " elements into each int8 output; this Reduce folds ", count);
  return ReduceStage::make(info).status();
}

}  // namespace kiln::quantized
