// SPDX-License-Identifier: Apache-2.0
// TensorInfo: everything about a tensor except its data (shape, element type, quantisation).
#pragma once

#include <cstddef>
#include <string>

#include "kiln/core/data_type.hpp"
#include "kiln/core/quantization_info.hpp"
#include "kiln/core/status.hpp"
#include "kiln/core/tensor_shape.hpp"

namespace kiln {

/// Shape, element type and quantisation of a tensor.
struct TensorInfo {
  TensorShape shape;
  DataType type = DataType::Float32;
  QuantizationInfo quantization;

  constexpr std::uint64_t num_elements() const noexcept { return shape.num_elements(); }
  constexpr std::uint64_t num_bytes() const noexcept { return shape.num_elements() * size_of(type); }
  constexpr std::size_t rank() const noexcept { return shape.rank(); }

  friend constexpr bool operator==(const TensorInfo&, const TensorInfo&) = default;

  /// "Float32 [1, 224, 224, 3]".
  /// "Float32 [1,8]"; a quantised tensor adds its quantisation: "QAsymmU8 [1,8] (scale 0.5, zero point 10)",
  /// "QSymmS8 [8,3] (8 scales on axis 0, zero point 0)".
  std::string to_string() const {
    std::string text = detail::str_cat(kiln::to_string(type), ' ', shape.to_string());
    if (quantization.is_per_axis())
      text += detail::str_cat(" (", quantization.scales.size(), " scales on axis ",
                              quantization.axis ? static_cast<std::int64_t>(*quantization.axis) : -1, ", zero point ",
                              quantization.offset, ')');
    else if (!quantization.empty())
      text += detail::str_cat(" (scale ", quantization.scales[0], ", zero point ", quantization.offset, ')');
    return text;
  }
};

/// Checks that a user-supplied TensorInfo describes a tensor kiln can hold.
constexpr Status validate(const TensorInfo& info) {
  if (info.shape.rank() > TensorShape::max_rank)
    return Status::error(ErrorCode::InvalidArgument, "tensor has ", info.shape.rank(),
                         " dimensions; kiln supports at most ", TensorShape::max_rank);
  if (!info.shape.valid())
    return Status::error(ErrorCode::InvalidArgument, "tensor has more than ", TensorShape::max_elements, " elements");
  if (is_quantized(info.type) && info.quantization.empty())
    return Status::error(ErrorCode::InvalidArgument, "quantised tensor of type ", to_string(info.type),
                         " has no quantisation scale");
  for (float scale : info.quantization.scales)
    if (!(scale > 0.0f)) return Status::error(ErrorCode::InvalidArgument, "quantisation scales must be positive");
  if (info.quantization.axis && *info.quantization.axis >= info.shape.rank())
    return Status::error(ErrorCode::InvalidArgument, "quantisation axis ", *info.quantization.axis,
                         " is out of range for a tensor of rank ", info.shape.rank());
  return Status::ok();
}

}  // namespace kiln
