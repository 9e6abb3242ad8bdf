// SPDX-License-Identifier: Apache-2.0
// What every backend's Pad and Resize share: the types they move, and the element a Constant-mode
// Pad fills with. Pad moves elements, so a quantised Pad fills with the integer its constant
// quantises to, and equals DequantizeLinear -> Pad -> QuantizeLinear of one quantisation (decision
// 0014), and a Float16 Pad with the constant rounded to Float16; a nearest Resize moves elements
// too, a bilinear one computes Float32.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kiln/backends/workload.hpp"
#include "kiln/core/half.hpp"
#include "kiln/core/requantization.hpp"

namespace kiln {

/// Fails unless the Pad is Float32 or Float16, or 8-bit quantised per tensor (input and output
/// share the type and quantisation, as Pad's shape inference makes them).
inline Status check_pad_types(const WorkloadInfo<ops::Pad>& info) {
  const TensorInfo& x = info.inputs[0];
  if (x.type != DataType::Float32 && x.type != DataType::Float16 && !is_quantized(x.type))
    return Status::error(ErrorCode::Unsupported, "pads Float32, Float16 and 8-bit quantised tensors; the input is ",
                         x.to_string());
  if (is_quantized(x.type) && (x.quantization.empty() || x.quantization.is_per_axis()))
    return Status::error(ErrorCode::Unsupported, "pads 8-bit tensors quantised per tensor; the input is ",
                         x.to_string());
  return Status::ok();
}

/// Fails unless the Resize is Float32, or nearest on Float16 or 8-bit tensors (whose elements it moves).
inline Status check_resize_types(const WorkloadInfo<ops::Resize>& info) {
  const DataType type = info.inputs[0].type;
  const bool moved = is_quantized(type) || type == DataType::Float16;
  if (type == DataType::Float32 || (moved && info.params.method == ops::ResizeMethod::Nearest)) return Status::ok();
  return Status::error(ErrorCode::Unsupported, "resizes Float32 tensors, and Float16 and 8-bit ones by nearest ",
                       "neighbour; the input is ", info.inputs[0].to_string());
}

/// check_resize_types, for the backends that sample by nearest neighbour and bilinear only: bicubic
/// runs on RefBackend.
inline Status check_accelerated_resize(const WorkloadInfo<ops::Resize>& info) {
  if (info.params.method == ops::ResizeMethod::Bicubic)
    return Status::error(ErrorCode::Unsupported,
                         "resizes by nearest neighbour and bilinear; bicubic runs on RefBackend");
  return check_resize_types(info);
}

/// The element a Constant-mode Pad writes, its first size_of(type) bytes (the rest zero): the
/// float, the Float16 nearest to it, the 8-bit integer the constant quantises to, the Signed32 it
/// truncates to (saturated, NaN 0, as Cast makes it), or the Boolean of it being nonzero.
inline std::array<std::byte, 4> pad_element(const WorkloadInfo<ops::Pad>& info) {
  const TensorInfo& y = info.outputs[0];
  const float value = info.params.value;
  if (y.type == DataType::Float16) return std::bit_cast<std::array<std::byte, 4>>(std::uint32_t{float_to_half(value)});
  if (y.type == DataType::Signed32)
    return std::bit_cast<std::array<std::byte, 4>>(
        std::isnan(value)
            ? 0
            : static_cast<std::int32_t>(std::clamp(std::trunc(double(value)), -2147483648.0, 2147483647.0)));
  if (y.type == DataType::Boolean) return {std::byte{value != 0.0f}};
  if (!is_quantized(y.type)) return std::bit_cast<std::array<std::byte, 4>>(value);
  const std::int32_t q = quantize(value, y.quantization.scales[0], y.quantization.offset, quantized_range(y.type));
  return {static_cast<std::byte>(static_cast<std::uint8_t>(q))};
}

}  // namespace kiln
