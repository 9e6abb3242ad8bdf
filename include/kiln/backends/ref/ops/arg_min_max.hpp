// SPDX-License-Identifier: Apache-2.0
// Reference ArgMinMax: each output walks its row along the axis, keeping the extreme's index.
#pragma once

#include <cmath>

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

/// Float32, Signed32 and 8-bit quantised inputs: a larger 8-bit integer stands for a larger number
/// (scales are positive), so the bytes' extreme is the values'.
template <DataType T>
requires(T == DataType::Float32 || T == DataType::Signed32 || T == DataType::QAsymmU8 ||
         T == DataType::QAsymmS8) struct Workload<ops::ArgMinMax, RefBackend, T> {
  explicit Workload(const WorkloadInfo<ops::ArgMinMax>& info) : params(info.params) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    using E = element_type_t<T>;
    const TensorShape& xs = in[0].info.shape;
    const std::size_t axis = *detail::normalize_axis(params.axis, xs.rank());
    const std::uint64_t length = xs[axis], inner = xs.num_elements(axis + 1, xs.rank());
    const std::uint64_t outer = xs.num_elements(0, axis);
    const auto* x = static_cast<const E*>(in[0].data);
    auto* y = static_cast<std::int32_t*>(out[0].data);
    // Whether v replaces the extreme so far, best: NaN beats every number and, but for the last
    // index asked for, a NaN already held.
    auto better = [&](E v, E best) {
      if constexpr (T == DataType::Float32)
        if (std::isnan(v) || std::isnan(best)) return std::isnan(v) && (!std::isnan(best) || params.select_last_index);
      if (v == best) return params.select_last_index;
      return params.function == ops::ArgFunction::Max ? v > best : v < best;
    };
    for (std::uint64_t o = 0; o < outer; ++o)
      for (std::uint64_t i = 0; i < inner; ++i) {
        const E* row = x + o * length * inner + i;
        std::uint64_t index = 0;
        for (std::uint64_t j = 1; j < length; ++j)
          if (better(row[j * inner], row[index * inner])) index = j;
        y[o * inner + i] = static_cast<std::int32_t>(index);
      }
  }

  ops::ArgMinMax::Params params;
};

}  // namespace kiln
