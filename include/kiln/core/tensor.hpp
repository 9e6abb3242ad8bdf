// SPDX-License-Identifier: Apache-2.0
// Tensor and ConstTensor: non-owning views that pair a TensorInfo with a data pointer.
#pragma once

#include <cstddef>
#include <span>
#include <type_traits>

#include "kiln/core/tensor_info.hpp"

namespace kiln {

/// A non-owning view of tensor data. `Void` is `void` (Tensor) or `const void` (ConstTensor).
template <class Void>
struct BasicTensor {
  static_assert(std::is_void_v<Void>);
  TensorInfo info;
  Void* data = nullptr;

  /// The data as a typed span; the caller states the element type it expects.
  template <class T>
  std::span<std::conditional_t<std::is_const_v<Void>, const T, T>> as() const noexcept {
    using Element = std::conditional_t<std::is_const_v<Void>, const T, T>;
    return {static_cast<Element*>(data), static_cast<std::size_t>(info.num_elements())};
  }
};

using Tensor = BasicTensor<void>;
using ConstTensor = BasicTensor<const void>;

/// Binding id of a network input or output, chosen by the user when building the network.
using BindingId = int;

/// A user buffer handed to Runtime::enqueue for one input binding.
struct InputBinding {
  BindingId id;
  ConstTensor tensor;
};

/// A user buffer that Runtime::enqueue fills for one output binding.
struct OutputBinding {
  BindingId id;
  Tensor tensor;
};

}  // namespace kiln
