// SPDX-License-Identifier: Apache-2.0
// Reference LayerNormalization: each row's mean and variance in double precision, then the formula;
// the statistics when asked for.
#pragma once

#include <cmath>

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::LayerNormalization, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::LayerNormalization> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const TensorShape& shape = in[0].info.shape;
    const std::size_t axis = *ops::LayerNormalization::first_row_dimension(params_, shape.rank());
    const std::uint64_t rows = shape.num_elements(0, axis), length = shape.num_elements(axis, shape.rank());
    const float* x = ref::floats(in[0]);
    const float* scale = ref::floats(in[1]);
    const float* bias = in.size() > 2 ? ref::floats(in[2]) : nullptr;
    float* y = ref::floats(out[0]);
    for (std::uint64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * length;
      double sum = 0.0;
      for (std::uint64_t i = 0; i < length; ++i) sum += xr[i];
      const double mean = sum / double(length);
      double squares = 0.0;
      for (std::uint64_t i = 0; i < length; ++i) squares += (xr[i] - mean) * (xr[i] - mean);
      const double inverse_deviation = 1.0 / std::sqrt(squares / double(length) + params_.epsilon);
      if (params_.statistics) {
        ref::floats(out[1])[r] = static_cast<float>(mean);
        ref::floats(out[2])[r] = static_cast<float>(inverse_deviation);
      }
      for (std::uint64_t i = 0; i < length; ++i)
        y[r * length + i] =
            static_cast<float>((xr[i] - mean) * inverse_deviation * scale[i] + (bias ? double(bias[i]) : 0.0));
    }
  }
};

}  // namespace kiln
