// SPDX-License-Identifier: Apache-2.0
// Reference Pad: each output coordinate mapped back into the input, or to the constant.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Pad, RefBackend> : ref::Float32Kernel<ops::Pad> {
  using Float32Kernel::Float32Kernel;

  /// Input index for padded index `i` of a dimension of size `dim` with `before` leading pads,
  /// or -1 when the element is the constant.
  static std::int64_t source_index(ops::PadMode mode, std::int64_t i, std::int64_t before, std::int64_t dim) {
    std::int64_t j = i - before;
    if (j >= 0 && j < dim) return j;
    switch (mode) {
      case ops::PadMode::Constant: return -1;
      case ops::PadMode::Edge: return j < 0 ? 0 : dim - 1;
      case ops::PadMode::Reflect: return j < 0 ? -j : 2 * (dim - 1) - j;
      case ops::PadMode::Symmetric: return j < 0 ? -j - 1 : 2 * dim - 1 - j;
    }
    return -1;
  }

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
        const std::int64_t j = source_index(params_.mode, coords[d], ops::Pad::before_of(params_, d), xs[d]);
        constant = j < 0;
        source += static_cast<std::uint64_t>(j) * x_strides[d];
      }
      y[i] = constant ? params_.value : x[source];
    }
  }
};

}  // namespace kiln
