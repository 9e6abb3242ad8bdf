// SPDX-License-Identifier: Apache-2.0
// QuantizationInfo: how the integers of a quantised tensor map to real numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/core/data_type.hpp"

namespace kiln {

/// Affine quantisation parameters: real = scale * (q - offset).
///
/// One scale means per-tensor quantisation; several scales (one per slice of `axis`) mean
/// per-axis quantisation, as used for convolution weights. Float tensors leave this empty.
struct QuantizationInfo {
  std::vector<float> scales;
  std::int32_t offset = 0;
  std::optional<std::uint32_t> axis;

  constexpr bool empty() const noexcept { return scales.empty(); }
  constexpr bool is_per_axis() const noexcept { return scales.size() > 1 || axis.has_value(); }
  friend constexpr bool operator==(const QuantizationInfo&, const QuantizationInfo&) = default;
};

/// The integers an 8-bit quantised type holds: [0, 255] for QAsymmU8, [-128, 127] for the signed ones.
struct QuantizedRange {
  std::int32_t lo = 0;
  std::int32_t hi = 0;
};
constexpr QuantizedRange quantized_range(DataType type) noexcept {
  return type == DataType::QAsymmU8 ? QuantizedRange{0, 255} : QuantizedRange{-128, 127};
}

}  // namespace kiln
