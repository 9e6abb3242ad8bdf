// SPDX-License-Identifier: Apache-2.0
// Reference Pad: each output coordinate mapped back into the input, or to the constant.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Pad, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::Pad> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const ref::Strides x_strides = ref::strides_of(xs);
    const float* x = ref::floats(in[0]);
    float* y = ref::floats(out[0]);
    for (std::uint64_t i = 0; i < ys.num_elements(); ++i) {
      const auto coords = ref::unravel(i, ys);
      std::uint64_t source = 0;
      bool constant = false;
      for (std::size_t d = 0; d < ys.rank() && !constant; ++d) {
        const std::int64_t j = ops::Pad::source_index(params_.mode, coords[d], ops::Pad::before_of(params_, d), xs[d]);
        constant = j < 0;
        source += static_cast<std::uint64_t>(j) * x_strides[d];
      }
      y[i] = constant ? params_.value : x[source];
    }
  }
};

}  // namespace kiln
