// SPDX-License-Identifier: Apache-2.0
// Reference ElementwiseUnary: the <cmath> function of each element.
#pragma once

#include <cmath>

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::ElementwiseUnary, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::ElementwiseUnary> {
  using Float32Kernel::Float32Kernel;

  static float apply(ops::UnaryOperation op, float x) {
    using O = ops::UnaryOperation;
    switch (op) {
      case O::Abs: return std::fabs(x);
      case O::Neg: return -x;
      case O::Exp: return std::exp(x);
      case O::Log: return std::log(x);
      case O::Sqrt: return std::sqrt(x);
      case O::Rsqrt: return 1.0f / std::sqrt(x);
      case O::Reciprocal: return 1.0f / x;
      case O::Erf: return std::erf(x);
      case O::Sin: return std::sin(x);
      case O::Cos: return std::cos(x);
      case O::Tan: return std::tan(x);
      case O::Asin: return std::asin(x);
      case O::Acos: return std::acos(x);
      case O::Atan: return std::atan(x);
      case O::Sinh: return std::sinh(x);
      case O::Cosh: return std::cosh(x);
      case O::Asinh: return std::asinh(x);
      case O::Acosh: return std::acosh(x);
      case O::Atanh: return std::atanh(x);
      case O::Sign: return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x;  // keeps 0, -0 and NaN
      case O::Floor: return std::floor(x);
      case O::Ceil: return std::ceil(x);
      case O::Round: return std::nearbyint(x);  // the default rounding mode: halves to even
    }
    return x;
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const float* x = ref::floats(in[0]);
    float* y = ref::floats(out[0]);
    for (std::uint64_t i = 0; i < in[0].info.num_elements(); ++i) y[i] = apply(params_.operation, x[i]);
  }
};

}  // namespace kiln
