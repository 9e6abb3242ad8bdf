// SPDX-License-Identifier: Apache-2.0
// Reference ElementwiseBinary: each output element reads its broadcast operands by coordinates.
#pragma once

#include <algorithm>
#include <cmath>

#include "kiln/backends/ref/ops/activation.hpp"

namespace kiln {

template <>
struct Workload<ops::ElementwiseBinary, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::ElementwiseBinary> {
  using Float32Kernel::Float32Kernel;

  static float apply(ops::BinaryOperation op, float a, float b) {
    using O = ops::BinaryOperation;
    switch (op) {
      case O::Add: return a + b;
      case O::Sub: return a - b;
      case O::Mul: return a * b;
      case O::Div: return a / b;
      // numpy maximum/minimum propagate NaN; std::max/std::min would not.
      case O::Maximum: return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
      case O::Minimum: return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
      case O::Power: return std::pow(a, b);
    }
    return a;
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const TensorShape& ys = out[0].info.shape;
    const ref::Strides a_strides = ref::broadcast_strides_of(in[0].info.shape, ys.rank());
    const ref::Strides b_strides = ref::broadcast_strides_of(in[1].info.shape, ys.rank());
    const float* a = ref::floats(in[0]);
    const float* b = ref::floats(in[1]);
    float* y = ref::floats(out[0]);
    for (std::uint64_t i = 0; i < ys.num_elements(); ++i) {
      const auto coords = ref::unravel(i, ys);
      std::uint64_t ia = 0, ib = 0;
      for (std::size_t d = 0; d < ys.rank(); ++d) {
        ia += coords[d] * a_strides[d];
        ib += coords[d] * b_strides[d];
      }
      y[i] = apply(params_.operation, a[ia], b[ib]);
    }
    ref::apply_activation(params_.activation, ref::floats(out[0]), out[0].info.num_elements());
  }
};

}  // namespace kiln
