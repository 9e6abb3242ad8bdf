// SPDX-License-Identifier: Apache-2.0
// Requantization: how an int32 accumulator becomes an 8-bit value, in integers only (decision 0014).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kiln/core/quantization_info.hpp"
#include "kiln/core/status.hpp"
#include "kiln/core/tensor.hpp"

namespace kiln {

/// A positive real multiplier M (input scale x weight scale / output scale, say) held as a 31-bit
/// mantissa and a power of two, M = multiplier x 2^(shift - 31) with multiplier in [2^30, 2^31),
/// made once at load so that every inference multiplies in integers only.
///
/// apply(acc) is round(acc x M) in integers, rounded one of two ways:
/// - once (kiln's arithmetic): the exact 64-bit product shifted right, ties rounded up (towards
///   +infinity). The only approximation is M's mantissa, a relative error under 2^-31.
/// - twice (TensorFlow Lite's): gemmlowp's rounding doubling high multiply (the product to a
///   multiple of 2^31, ties up), then a rounding right shift (ties away from zero), which takes
///   0.25 to 1 where one rounding takes it to 0. For right shifts of 32 or more that equals one
///   rounding of the product moved 2^30 away from -2^30 (up from -2^30 on, down below it), and for
///   smaller shifts one rounding: the form every backend computes (checked against the two-step
///   definition in tests/core/test_requantization.cpp).
///
/// \code
/// auto r = Requantization::from_real(input_scale * weight_scale / output_scale);  // at load
/// if (!r) return r.status();
/// std::int32_t q = r->apply(accumulator);  // every inference, then + zero point, then saturate
/// \endcode
struct Requantization {
  std::int32_t multiplier = 0;  ///< in [2^30, 2^31), or 0 for a multiplier too small to matter
  std::int16_t shift = 0;       ///< in [-31, 30]
  bool round_twice = false;     ///< TensorFlow Lite's rounding (8 bytes in all: arenas keep one per channel)

  /// The representation of `real`, which must be finite, positive and below 2^30. A multiplier
  /// under 2^-32 maps every accumulator to 0 and is held as multiplier 0.
  static Expected<Requantization> from_real(double real, QuantizedArithmetic arithmetic = QuantizedArithmetic::Kiln) {
    if (!std::isfinite(real) || real <= 0.0)
      return Status::error(ErrorCode::InvalidArgument, "a requantization multiplier must be positive and finite; got ",
                           real, " (are a scale zero or negative?)");
    int exponent = 0;
    const double mantissa = std::frexp(real, &exponent);  // real = mantissa x 2^exponent, mantissa in [0.5, 1)
    auto rounded = static_cast<std::int64_t>(std::llround(mantissa * 2147483648.0));
    if (rounded == std::int64_t{1} << 31) {  // the mantissa rounded up to 1
      rounded /= 2;
      ++exponent;
    }
    if (exponent > 30)
      return Status::error(ErrorCode::InvalidArgument, "requantization multiplier ", real,
                           " is 2^30 or more: the input and weight scales are out of proportion to the output's");
    if (exponent < -31) return Requantization{};
    return Requantization{static_cast<std::int32_t>(rounded), static_cast<std::int16_t>(exponent),
                          arithmetic == QuantizedArithmetic::TfLite};
  }

  /// What TensorFlow Lite's two roundings add to the exact product before the one rounding of a
  /// right shift of 32 or more: +2^30, or -2^30 where the product is below -2^30; else nothing.
  static constexpr std::int64_t twice_rounded_bias = std::int64_t{1} << 30;
  constexpr std::int64_t product_bias() const noexcept { return round_twice && shift < 0 ? twice_rounded_bias : 0; }

  /// round(acc x M) as above, saturated to int32.
  constexpr std::int32_t apply(std::int32_t acc) const noexcept {
    // |acc x multiplier| <= 2^62, the bias 2^30 and the rounding term <= 2^61: the sum fits int64.
    const int right = 31 - shift;  // in [1, 62]
    std::int64_t product = std::int64_t{acc} * multiplier;
    if (const std::int64_t bias = product_bias(); bias != 0) product += product < -bias ? -bias : bias;
    const std::int64_t result = (product + (std::int64_t{1} << (right - 1))) >> right;  // a floor: ties went up
    return static_cast<std::int32_t>(std::clamp<std::int64_t>(result, std::numeric_limits<std::int32_t>::min(),
                                                              std::numeric_limits<std::int32_t>::max()));
  }
};

static_assert(sizeof(Requantization) == 8, "compiled networks keep one Requantization per channel in their arena");

/// An accumulator requantized to an output of zero point `zero_point`, saturated to [lo, hi]: the
/// output type's range, narrowed by a fused ReLU-family clamp.
constexpr std::int32_t requantize(std::int32_t acc, const Requantization& r, std::int32_t zero_point, std::int32_t lo,
                                  std::int32_t hi) noexcept {
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(std::int64_t{r.apply(acc)} + zero_point, lo, hi));
}

/// ONNX's QuantizeLinear of one value: saturate(round_half_to_even(x / scale) + zero_point), in
/// the default rounding mode; NaN becomes the zero point. With `ties_away`, TensorFlow Lite's
/// QUANTIZE, which rounds halves away from zero. Every backend computes exactly this.
inline std::int32_t quantize(float x, float scale, std::int32_t zero_point, QuantizedRange range,
                             bool ties_away = false) noexcept {
  const float rounded = ties_away ? std::round(x / scale) : std::nearbyint(x / scale);
  if (std::isnan(rounded)) return zero_point;
  // Clamped while a float: converting an out-of-range float to an integer is undefined.
  const float lo = static_cast<float>(range.lo - zero_point), hi = static_cast<float>(range.hi - zero_point);
  return static_cast<std::int32_t>(std::clamp(rounded, lo, hi)) + zero_point;
}

/// ONNX's DequantizeLinear of one value: (q - zero_point) x scale, the difference exact.
constexpr float dequantize(std::int64_t q, float scale, std::int32_t zero_point) noexcept {
  return static_cast<float>(q - zero_point) * scale;
}

/// The scale of each element of a tensor quantised per tensor or per slice of an axis.
class ElementScales {
 public:
  explicit ElementScales(const TensorInfo& info) : scales_(info.quantization.scales) {
    if (scales_.size() > 1) {
      inner_ = info.shape.num_elements(*info.quantization.axis + 1, info.rank());
      length_ = info.shape[*info.quantization.axis];
    }
  }
  float operator()(std::uint64_t element) const {
    return scales_.size() == 1 ? scales_[0] : scales_[(element / inner_) % length_];
  }

 private:
  Scales scales_;
  std::uint64_t inner_ = 1;
  std::uint64_t length_ = 1;
};

/// Element i of an 8-bit quantised or Signed32 tensor.
inline std::int32_t integer_at(const ConstTensor& t, std::uint64_t i) {
  switch (t.info.type) {
    case DataType::QAsymmU8: return static_cast<const std::uint8_t*>(t.data)[i];
    case DataType::Signed32: return static_cast<const std::int32_t*>(t.data)[i];
    default: return static_cast<const std::int8_t*>(t.data)[i];
  }
}

}  // namespace kiln
