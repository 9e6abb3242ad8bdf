// SPDX-License-Identifier: Apache-2.0
// TensorShape: the dimensions of a tensor, stored inline (no heap) up to max_rank.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include "kiln/detail/str_cat.hpp"

namespace kiln {

/// Dimensions of a tensor, outermost first (NHWC for images). Rank 0 is a scalar.
///
/// A shape built from more than max_rank dimensions is kept but marked invalid; validation of
/// the network reports it, so construction itself can never fail or overflow.
class TensorShape {
 public:
  static constexpr std::size_t max_rank = 6;
  /// Largest number of elements a tensor may have; keeps every byte count far from overflow.
  static constexpr std::uint64_t max_elements = std::uint64_t{1} << 40;

  constexpr TensorShape() = default;
  constexpr TensorShape(std::initializer_list<std::uint32_t> dims)
      : TensorShape(std::span<const std::uint32_t>(dims.begin(), dims.size())) {}
  constexpr explicit TensorShape(std::span<const std::uint32_t> dims) {
    if (dims.size() > max_rank) {
      rank_ = static_cast<std::uint8_t>(std::min<std::size_t>(dims.size(), 255));
      return;
    }
    rank_ = static_cast<std::uint8_t>(dims.size());
    std::copy(dims.begin(), dims.end(), dims_.begin());
  }

  /// False when the shape was built with more than max_rank dimensions or too many elements.
  constexpr bool valid() const noexcept {
    if (rank_ > max_rank) return false;
    std::uint64_t count = 1;
    for (std::size_t i = 0; i < rank_; ++i) {
      if (dims_[i] != 0 && count > max_elements / dims_[i]) return false;
      count *= dims_[i];
    }
    return true;
  }
  constexpr std::size_t rank() const noexcept { return rank_; }
  constexpr std::uint32_t operator[](std::size_t i) const noexcept { return dims_[i]; }
  constexpr std::uint32_t& operator[](std::size_t i) noexcept { return dims_[i]; }
  constexpr std::span<const std::uint32_t> dims() const noexcept {
    return {dims_.data(), std::min<std::size_t>(rank_, max_rank)};
  }
  /// Dimension `axis` counted from the end when negative (-1 is the innermost).
  constexpr std::uint32_t dim_from_end(std::size_t from_end) const noexcept { return dims_[rank_ - 1 - from_end]; }

  /// Product of all dimensions (1 for a scalar). Only meaningful for valid() shapes.
  constexpr std::uint64_t num_elements() const noexcept {
    std::uint64_t count = 1;
    for (auto d : dims()) count *= d;
    return count;
  }
  /// Product of dimensions [first, last).
  constexpr std::uint64_t num_elements(std::size_t first, std::size_t last) const noexcept {
    std::uint64_t count = 1;
    for (std::size_t i = first; i < last && i < rank_; ++i) count *= dims_[i];
    return count;
  }

  constexpr void push_back(std::uint32_t dim) noexcept {
    if (rank_ < max_rank) dims_[rank_] = dim;
    ++rank_;
  }

  friend constexpr bool operator==(const TensorShape& a, const TensorShape& b) noexcept {
    return std::ranges::equal(a.dims(), b.dims()) && a.rank_ == b.rank_;
  }

  std::string to_string() const { return detail::list_to_string(dims()); }

 private:
  std::array<std::uint32_t, max_rank> dims_{};
  std::uint8_t rank_ = 0;
};

}  // namespace kiln
