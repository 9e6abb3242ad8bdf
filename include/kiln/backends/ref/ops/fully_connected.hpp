// SPDX-License-Identifier: Apache-2.0
// Reference FullyConnected: one dot product per (row, output feature).
#pragma once

#include "kiln/backends/ref/ops/activation.hpp"

namespace kiln {

template <>
struct Workload<ops::FullyConnected, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::FullyConnected> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const std::uint32_t k = in[1].info.shape[1], n = in[1].info.shape[0];
    const TensorShape& xs = in[0].info.shape;
    const std::uint64_t rows = xs.num_elements(0, xs.rank() - 1);
    const float* x = ref::floats(in[0]);
    const float* w = ref::floats(in[1]);
    const float* bias = in.size() > 2 ? ref::floats(in[2]) : nullptr;
    float* y = ref::floats(out[0]);
    for (std::uint64_t r = 0; r < rows; ++r)
      for (std::uint32_t j = 0; j < n; ++j) {
        float sum = bias ? bias[j] : 0.0f;
        for (std::uint32_t p = 0; p < k; ++p) sum += x[r * k + p] * w[std::uint64_t{j} * k + p];
        y[r * n + j] = sum;
      }
    ref::apply_activation(params_.activation, ref::floats(out[0]), out[0].info.num_elements());
  }
};

}  // namespace kiln
