// SPDX-License-Identifier: Apache-2.0
// Reference TopK: each row's positions along the axis partially sorted by value, ties by position.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <DataType T>
requires(T == DataType::Float32 || T == DataType::Signed32) struct Workload<ops::TopK, RefBackend, T> {
  explicit Workload(const WorkloadInfo<ops::TopK>& info)
      : params(info.params),
        row_length(info.inputs[0].shape[*detail::normalize_axis(info.params.axis, info.inputs[0].rank())]) {}

  /// One row's positions, to sort.
  ScratchSize scratch(const ref::Context&) const { return {std::uint64_t{row_length} * sizeof(std::uint32_t), 4}; }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&,
           std::span<std::byte> scratch) const {
    using E = element_type_t<T>;
    const TensorShape& xs = in[0].info.shape;
    const std::size_t axis = *detail::normalize_axis(params.axis, xs.rank());
    const std::uint64_t length = xs[axis], inner = xs.num_elements(axis + 1, xs.rank());
    const std::uint64_t outer = xs.num_elements(0, axis), k = params.k;
    const auto* x = static_cast<const E*>(in[0].data);
    auto* values = static_cast<E*>(out[0].data);
    auto* indices = static_cast<std::int32_t*>(out[1].data);
    const std::span positions(reinterpret_cast<std::uint32_t*>(scratch.data()), length);
    // Whether a comes before b: the larger (or smaller) first, a NaN the largest of all.
    auto before = [&](E a, E b) {
      if constexpr (T == DataType::Float32)
        if (std::isnan(a) || std::isnan(b)) return params.largest ? !std::isnan(b) : !std::isnan(a);
      return params.largest ? a > b : a < b;
    };
    for (std::uint64_t o = 0; o < outer; ++o)
      for (std::uint64_t i = 0; i < inner; ++i) {
        const E* row = x + o * length * inner + i;
        std::iota(positions.begin(), positions.end(), 0u);
        std::partial_sort(positions.begin(), positions.begin() + static_cast<std::ptrdiff_t>(k), positions.end(),
                          [&](std::uint32_t a, std::uint32_t b) {
                            const E va = row[a * inner], vb = row[b * inner];
                            return before(va, vb) || (!before(vb, va) && a < b);
                          });
        for (std::uint64_t j = 0; j < k; ++j) {
          const std::uint64_t at = (o * k + j) * inner + i;
          values[at] = row[positions[j] * inner];
          indices[at] = static_cast<std::int32_t>(positions[j]);
        }
      }
  }

  ops::TopK::Params params;
  std::uint32_t row_length;
};

}  // namespace kiln
