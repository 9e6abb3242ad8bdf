// SPDX-License-Identifier: Apache-2.0
// What every backend's int8 Pooling2d shares (decision 0014): the checks of its tensors, and the
// output stage, made at load, that turns a window's max or sum into an 8-bit output.
#pragma once

#include <cstdint>

#include "kiln/backends/quantized_layer.hpp"
#include "kiln/backends/tflite_recipes.hpp"
#include "kiln/ops/pooling2d.hpp"

namespace kiln::quantized {

/// The largest window an int8 average takes: 255 x 2^23 stays within int32.
inline constexpr std::uint64_t max_pooling_window = std::uint64_t{1} << 23;

/// The divisors an average of `p` (resolved against input shape `x`) may divide by: 1 for a max;
/// the plane for a global average; else 1 to the window's area (windows clipped by the input, or
/// by the padding in ceil mode).
struct PoolingDivisors {
  std::uint64_t first = 1, last = 1;
  static PoolingDivisors of(const ops::Pooling2d::Params& params, const TensorShape& x) {
    const ops::Pooling2d::Params p = ops::Pooling2d::resolved(params, x);
    const std::uint64_t area = std::uint64_t{p.window.height} * p.window.width;
    if (p.kind == ops::PoolingKind::Max) return {1, 1};
    if (params.global) return {area, area};
    return {1, area};
  }
};

/// What turns an int8 window into its output: acc, the window's max less the input zero point or
/// the sum of (x - zx) over its positions inside the input, times sx / (sy x divisor), rounded once
/// (ties up), plus the output zero point, saturated (requantize). A max of one scale and zero point
/// in and out is the max itself (the multiplier is exactly 1). One multiplier per divisor, made at load.
/// In TensorFlow Lite's arithmetic an average of one quantisation in and out is TensorFlow Lite's
/// own (tflite_recipes::average: the integers' sum divided by the count, ties away from zero), which
/// rounds otherwise where the zero point is not 0: rounded_average().
class PoolingStage {
 public:
  static Expected<PoolingStage> make(const WorkloadInfo<ops::Pooling2d>& info) {
    const TensorInfo& y = info.outputs[0];
    PoolingStage stage;
    stage.divisors_ = PoolingDivisors::of(info.params, info.inputs[0].shape);
    auto multipliers = keep_array<Requantization>(info.kept, stage.divisors_.last - stage.divisors_.first + 1);
    if (!multipliers) return multipliers.status();
    stage.multipliers_ = std::move(*multipliers);
    if (auto s = compute(info, stage.divisors_, &stage.multipliers_); !s) return s;
    stage.zero_point_ = y.quantization.offset;
    stage.range_ = OutputRange::of(y, std::nullopt);
    stage.rounded_average_ = info.arithmetic == QuantizedArithmetic::TfLite &&
                             info.params.kind == ops::PoolingKind::Average &&
                             info.inputs[0].quantization == y.quantization;
    return stage;
  }
  /// What make() refuses, found without keeping anything.
  static Status check(const WorkloadInfo<ops::Pooling2d>& info) {
    return compute(info, PoolingDivisors::of(info.params, info.inputs[0].shape), nullptr);
  }

  /// The output of a window whose max less the zero point, or sum of (x - zx), is acc.
  std::int32_t operator()(std::int32_t acc, std::uint64_t divisor) const {
    if (rounded_average_) {
      const auto count = static_cast<std::int64_t>(divisor);
      return std::clamp(tflite_recipes::average(acc + count * zero_point_, count), range_.lo, range_.hi);
    }
    return requantize(acc, multiplier(divisor), zero_point_, range_.lo, range_.hi);
  }
  /// Whether averages are TensorFlow Lite's rounded ones rather than requantized sums.
  bool rounded_average() const noexcept { return rounded_average_; }

  /// The parts, for kernels that requantize a vector of channels at a time.
  const Requantization& multiplier(std::uint64_t divisor) const { return multipliers_[divisor - divisors_.first]; }
  const KeptArray<Requantization>& multipliers() const noexcept { return multipliers_; }
  const PoolingDivisors& divisors() const noexcept { return divisors_; }
  std::int32_t zero_point() const noexcept { return zero_point_; }
  std::int32_t lo() const noexcept { return range_.lo; }
  std::int32_t hi() const noexcept { return range_.hi; }

 private:
  /// The multiplier of each divisor, into `multipliers` unless null.
  static Status compute(const WorkloadInfo<ops::Pooling2d>& info, const PoolingDivisors& divisors,
                        KeptArray<Requantization>* multipliers) {
    const double rescale =
        static_cast<double>(info.inputs[0].quantization.scales[0]) / info.outputs[0].quantization.scales[0];
    for (std::uint64_t d = divisors.first; d <= divisors.last; ++d) {
      auto m = Requantization::from_real(rescale / static_cast<double>(d), info.arithmetic);
      if (!m) return m.status();
      if (multipliers) (*multipliers)[d - divisors.first] = *m;
    }
    return Status::ok();
  }

  PoolingDivisors divisors_;
  KeptArray<Requantization> multipliers_;
  std::int32_t zero_point_ = 0;
  OutputRange range_;
  bool rounded_average_ = false;
};

/// Checks an int8 Pooling2d: input and output QAsymmU8 or QAsymmS8 of one type, per tensor; a
/// window of at most max_pooling_window positions; multipliers sx / (sy x divisor) below 2^30.
inline Status check_pooling(const WorkloadInfo<ops::Pooling2d>& info) {
  const TensorInfo &x = info.inputs[0], &y = info.outputs[0];
  if (auto s = require_activation(x, "input"); !s) return s;
  if (auto s = require_activation(y, "output"); !s) return s;
  if (x.type != y.type)
    return Status::error(ErrorCode::Unsupported, "runs int8 Pooling2d whose input and output have one type; ",
                         to_string(x.type), " in, ", to_string(y.type), " out");
  const ops::Pooling2d::Params p = ops::Pooling2d::resolved(info.params, x.shape);
  if (std::uint64_t{p.window.height} * p.window.width > max_pooling_window)
    return Status::error(ErrorCode::Unsupported, "pools at most ", max_pooling_window,
                         " positions per int8 window; the window is ", p.window.height, "x", p.window.width);
  return PoolingStage::check(info);
}

}  // namespace kiln::quantized
