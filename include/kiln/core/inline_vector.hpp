// SPDX-License-Identifier: Apache-2.0
// InlineVector: a vector of at most Capacity elements stored in place, for the lists in ops'
// parameters (axes, permutations, pads, split sizes): a literal type, so a layer's parameters are
// constant expressions in a compiled network's header and copying them never allocates.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <ranges>
#include <span>
#include <type_traits>

#include "kiln/core/tensor_shape.hpp"

namespace kiln {

/// Up to Capacity elements in place. Like TensorShape, a list built from more elements keeps
/// counting them but holds only the first Capacity and is marked invalid (valid() is false): the
/// op's validation refuses it, so building one can never fail or overflow.
template <class T, std::size_t Capacity>
class InlineVector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using iterator = T*;
  using const_iterator = const T*;
  static constexpr std::size_t capacity = Capacity;

  constexpr InlineVector() = default;
  constexpr InlineVector(std::initializer_list<T> values) : InlineVector(values.begin(), values.end()) {}
  template <std::input_iterator It, std::sentinel_for<It> End>
  constexpr InlineVector(It first, End last) {
    for (; first != last; ++first) push_back(static_cast<T>(*first));
  }
  constexpr InlineVector(size_type count, const T& value) { resize(count, value); }
  /// From any list of values that convert to T (an importer's std::vector): implicit, as the
  /// parameters it fills held std::vectors before.
  template <std::ranges::input_range R>
  requires(!std::same_as<std::remove_cvref_t<R>, InlineVector> &&
           std::convertible_to<std::ranges::range_reference_t<R>, T>) constexpr InlineVector(const R& values)
      : InlineVector(std::ranges::begin(values), std::ranges::end(values)) {}

  /// False when more than Capacity elements were put in.
  constexpr bool valid() const noexcept { return count_ <= Capacity; }
  constexpr size_type size() const noexcept { return std::min(count_, Capacity); }
  constexpr bool empty() const noexcept { return count_ == 0; }

  constexpr void push_back(const T& value) noexcept {
    if (count_ < Capacity) items_[count_] = value;
    ++count_;
  }
  constexpr void resize(size_type count, const T& value = T{}) noexcept {
    for (size_type i = count_; i < std::min(count, Capacity); ++i) items_[i] = value;
    count_ = count;
  }
  constexpr void clear() noexcept { count_ = 0; }
  constexpr void assign(size_type count, const T& value) noexcept {
    clear();
    resize(count, value);
  }

  constexpr T& operator[](size_type i) noexcept { return items_[i]; }
  constexpr const T& operator[](size_type i) const noexcept { return items_[i]; }
  constexpr T* data() noexcept { return items_.data(); }
  constexpr const T* data() const noexcept { return items_.data(); }
  constexpr T* begin() noexcept { return items_.data(); }
  constexpr T* end() noexcept { return items_.data() + size(); }
  constexpr const T* begin() const noexcept { return items_.data(); }
  constexpr const T* end() const noexcept { return items_.data() + size(); }
  constexpr T& front() noexcept { return items_[0]; }
  constexpr const T& front() const noexcept { return items_[0]; }
  constexpr T& back() noexcept { return items_[size() - 1]; }
  constexpr const T& back() const noexcept { return items_[size() - 1]; }

  constexpr operator std::span<const T>() const noexcept { return {data(), size()}; }

  friend constexpr bool operator==(const InlineVector& a, const InlineVector& b) noexcept {
    return a.count_ == b.count_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  std::array<T, Capacity> items_{};
  size_type count_ = 0;
};

/// A list with one entry per dimension of a tensor at most (axes, a permutation, pads).
template <class T>
using DimVector = InlineVector<T, TensorShape::max_rank>;

}  // namespace kiln
