// SPDX-License-Identifier: Apache-2.0
// Reference CumulativeSum: each row along the axis summed in order; Float32 sums in double.
#pragma once

#include <type_traits>

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

/// Signed32 sums wrap around on overflow, as numpy's and ONNX Runtime's int32 sums do.
template <DataType T>
requires(T == DataType::Float32 || T == DataType::Signed32) struct Workload<ops::CumulativeSum, RefBackend, T> {
  explicit Workload(const WorkloadInfo<ops::CumulativeSum>& info) : params(info.params) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    using E = element_type_t<T>;
    using Sum = std::conditional_t<T == DataType::Float32, double, std::uint32_t>;  // unsigned: wraps, no UB
    const TensorShape& xs = in[0].info.shape;
    const std::size_t axis = *detail::normalize_axis(params.axis, xs.rank());
    const std::uint64_t length = xs[axis], inner = xs.num_elements(axis + 1, xs.rank());
    const std::uint64_t outer = xs.num_elements(0, axis);
    const auto* x = static_cast<const E*>(in[0].data);
    auto* y = static_cast<E*>(out[0].data);
    for (std::uint64_t o = 0; o < outer; ++o)
      for (std::uint64_t i = 0; i < inner; ++i) {
        const std::uint64_t first = o * length * inner + i;
        Sum sum = 0;
        for (std::uint64_t step = 0; step < length; ++step) {
          const std::uint64_t at = first + (params.reverse ? length - 1 - step : step) * inner;
          if (params.exclusive) y[at] = static_cast<E>(sum);
          sum += static_cast<Sum>(x[at]);
          if (!params.exclusive) y[at] = static_cast<E>(sum);
        }
      }
  }

  ops::CumulativeSum::Params params;
};

}  // namespace kiln
