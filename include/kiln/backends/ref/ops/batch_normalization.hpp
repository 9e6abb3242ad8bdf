// SPDX-License-Identifier: Apache-2.0
// Reference BatchNormalization: the formula, per element.
#pragma once

#include <cmath>

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::BatchNormalization, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::BatchNormalization> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const float* x = ref::floats(in[0]);
    const float* mean = ref::floats(in[1]);
    const float* variance = ref::floats(in[2]);
    const float* beta = ref::floats(in[3]);
    const float* gamma = ref::floats(in[4]);
    float* y = ref::floats(out[0]);
    const std::uint32_t channels = in[0].info.shape.dim_from_end(0);
    for (std::uint64_t i = 0; i < in[0].info.num_elements(); ++i) {
      const std::uint64_t c = i % channels;
      y[i] = gamma[c] * (x[i] - mean[c]) / std::sqrt(variance[c] + params_.epsilon) + beta[c];
    }
  }
};

}  // namespace kiln
