// SPDX-License-Identifier: Apache-2.0
// Vocabulary shared by the op descriptors: arity, 2-D sizes and paddings, and shape helpers.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "kiln/core/inline_vector.hpp"
#include "kiln/core/status.hpp"
#include "kiln/core/tensor.hpp"

namespace kiln::ops {

/// How many inputs a layer of an op takes.
struct Arity {
  std::size_t min_inputs = 1;
  std::size_t max_inputs = 1;
};

/// A height/width pair (kernel sizes, strides, dilations).
struct Size2d {
  std::uint32_t height = 1;
  std::uint32_t width = 1;
  friend constexpr bool operator==(const Size2d&, const Size2d&) = default;
};

/// Explicit zero padding around the spatial dimensions.
struct Padding2d {
  std::uint32_t top = 0;
  std::uint32_t bottom = 0;
  std::uint32_t left = 0;
  std::uint32_t right = 0;
  friend constexpr bool operator==(const Padding2d&, const Padding2d&) = default;
};

}  // namespace kiln::ops

namespace kiln::detail {

/// Error for a layer whose input count or rank is wrong, naming the input by position.
template <class... Pieces>
constexpr Status invalid(const Pieces&... pieces) {
  return Status::error(ErrorCode::InvalidNetwork, pieces...);
}

/// Fails when the list parameter `what` was given more entries than it holds.
template <class T, std::size_t Capacity>
constexpr Status require_fits(const InlineVector<T, Capacity>& list, std::string_view what) {
  if (!list.valid()) return invalid(what, " has more than ", Capacity, " entries");
  return Status::ok();
}

constexpr Status expect_rank(std::span<const TensorInfo> inputs, std::size_t index, std::string_view role,
                             std::size_t rank) {
  if (inputs[index].rank() != rank)
    return invalid("input ", index, " (", role, ") must have rank ", rank, ", got shape ",
                   inputs[index].shape.to_string());
  return Status::ok();
}

constexpr Status expect_same_type(std::span<const TensorInfo> inputs, std::size_t a, std::size_t b) {
  if (inputs[a].type != inputs[b].type)
    return invalid("input ", b, " has type ", to_string(inputs[b].type), " but input ", a, " has type ",
                   to_string(inputs[a].type));
  return Status::ok();
}

/// Fails unless input `index` holds indices (Signed32), as Gather and GatherElements take them.
constexpr Status expect_indices(std::span<const TensorInfo> inputs, std::size_t index) {
  if (inputs[index].type != DataType::Signed32)
    return invalid("indices must be Signed32, got ", to_string(inputs[index].type));
  return Status::ok();
}

/// Resolves a possibly negative axis against `rank` (numpy convention), or says why it cannot.
constexpr Expected<std::size_t> normalize_axis(std::int64_t axis, std::size_t rank, std::string_view what = "axis") {
  const auto signed_rank = static_cast<std::int64_t>(rank);
  if (axis < -signed_rank || axis >= signed_rank)
    return invalid(what, ' ', axis, " is out of range for a tensor of rank ", rank, " (valid: ", -signed_rank, " to ",
                   signed_rank - 1, ")");
  return static_cast<std::size_t>(axis < 0 ? axis + signed_rank : axis);
}

/// Output length of a sliding window: floor((in + pads - dilated_kernel) / stride) + 1.
constexpr Expected<std::uint32_t> window_output_size(std::uint32_t in, std::uint32_t kernel, std::uint32_t stride,
                                                     std::uint32_t dilation, std::uint32_t pad_before,
                                                     std::uint32_t pad_after, std::string_view axis,
                                                     bool ceil_mode = false) {
  if (kernel == 0) return invalid("kernel ", axis, " is zero");
  if (stride == 0) return invalid("stride ", axis, " is zero");
  if (dilation == 0) return invalid("dilation ", axis, " is zero");
  const std::uint64_t padded = std::uint64_t{in} + pad_before + pad_after;
  const std::uint64_t effective_kernel = std::uint64_t{dilation} * (kernel - 1) + 1;
  if (effective_kernel > padded)
    return invalid("kernel ", axis, " ", effective_kernel, " (with dilation) is larger than the padded input ", axis,
                   " ", padded);
  const std::uint64_t span = padded - effective_kernel;
  std::uint64_t out = span / stride + 1;
  // Ceil mode may add a window, but only one that starts inside the input or left padding.
  if (ceil_mode && span % stride != 0 && (out * stride) < std::uint64_t{in} + pad_before) ++out;
  return static_cast<std::uint32_t>(out);
}

/// numpy broadcasting of two shapes, or the reason they do not broadcast.
constexpr Expected<TensorShape> broadcast_shapes(const TensorShape& a, const TensorShape& b) {
  const std::size_t rank = a.rank() > b.rank() ? a.rank() : b.rank();
  TensorShape out;
  for (std::size_t i = 0; i < rank; ++i) {
    const std::size_t from_end = rank - 1 - i;
    const std::uint32_t da = from_end < a.rank() ? a.dim_from_end(from_end) : 1;
    const std::uint32_t db = from_end < b.rank() ? b.dim_from_end(from_end) : 1;
    if (da != db && da != 1 && db != 1)
      return invalid("shapes ", a.to_string(), " and ", b.to_string(), " do not broadcast (dimension ", da, " vs ", db,
                     ")");
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

}  // namespace kiln::detail
