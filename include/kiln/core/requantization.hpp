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
/// apply(acc) is round(acc x M) with ties rounded up (towards +infinity), in a single rounding of
/// the exact 64-bit product: unlike gemmlowp's rounding doubling high multiply followed by a
/// rounding shift, it never rounds twice (which takes 0.25 to 1). The only approximation is M's
/// mantissa, a relative error under 2^-31.
///
/// \code
/// auto r = Requantization::from_real(input_scale * weight_scale / output_scale);  // at load
/// if (!r) return r.status();
/// std::int32_t q = r->apply(accumulator);  // every inference, then + zero point, then saturate
/// \endcode
struct Requantization {
  std::int32_t multiplier = 0;  ///< in [2^30, 2^31), or 0 for a multiplier too small to matter
  int shift = 0;                ///< in [-31, 30]

  /// The representation of `real`, which must be finite, positive and below 2^30. A multiplier
  /// under 2^-32 maps every accumulator to 0 and is held as multiplier 0.
  static Expected<Requantization> from_real(double real) {
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
    return Requantization{static_cast<std::int32_t>(rounded), exponent};
  }

  /// round(acc x M), ties up, saturated to int32.
  constexpr std::int32_t apply(std::int32_t acc) const noexcept {
    // |acc x multiplier| <= 2^62 and the rounding term <= 2^61: the sum fits int64.
    const int right = 31 - shift;  // in [1, 62]
    const std::int64_t product = std::int64_t{acc} * multiplier + (std::int64_t{1} << (right - 1));
    const std::int64_t result = product >> right;  // arithmetic shift: a floor, so ties went up
    return static_cast<std::int32_t>(std::clamp<std::int64_t>(result, std::numeric_limits<std::int32_t>::min(),
                                                              std::numeric_limits<std::int32_t>::max()));
  }
};

/// An accumulator requantized to an output of zero point `zero_point`, saturated to [lo, hi]: the
/// output type's range, narrowed by a fused ReLU-family clamp.
constexpr std::int32_t requantize(std::int32_t acc, const Requantization& r, std::int32_t zero_point, std::int32_t lo,
                                  std::int32_t hi) noexcept {
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(std::int64_t{r.apply(acc)} + zero_point, lo, hi));
}

/// ONNX's QuantizeLinear of one value: saturate(round_half_to_even(x / scale) + zero_point), in
/// the default rounding mode; NaN becomes the zero point. Every backend computes exactly this.
inline std::int32_t quantize(float x, float scale, std::int32_t zero_point, QuantizedRange range) noexcept {
  const float rounded = std::nearbyint(x / scale);
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
