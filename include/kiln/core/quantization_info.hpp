// SPDX-License-Identifier: Apache-2.0
// QuantizationInfo: how the integers of a quantised tensor map to real numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

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

}  // namespace kiln
