// SPDX-License-Identifier: Apache-2.0
// Reference Activation: each function written as its formula.
#pragma once

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Activation, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::Activation> {
  using Float32Kernel::Float32Kernel;

  static float apply(const ops::Activation::Params& p, float x) {
    using F = ops::ActivationFunction;
    switch (p.function) {
      case F::ReLU: return std::max(0.0f, x);
      case F::BoundedReLU: return std::min(p.a, std::max(p.b, x));
      case F::LeakyReLU: return x >= 0.0f ? x : p.a * x;
      case F::ELU: return x >= 0.0f ? x : p.a * std::expm1(x);
      case F::Sigmoid: return 1.0f / (1.0f + std::exp(-x));
      case F::Tanh: return std::tanh(x);
      case F::HardSigmoid: return std::max(0.0f, std::min(1.0f, p.a * x + p.b));
      case F::HardSwish: return x * std::max(0.0f, std::min(6.0f, x + 3.0f)) / 6.0f;
      case F::SiLU: return x / (1.0f + std::exp(-x));
      case F::GELU:
        if (p.a != 0.0f) {
          const float inner = std::sqrt(2.0f / std::numbers::pi_v<float>) * (x + 0.044715f * x * x * x);
          return 0.5f * x * (1.0f + std::tanh(inner));
        }
        return 0.5f * x * (1.0f + std::erf(x / std::numbers::sqrt2_v<float>));
    }
    return x;
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const float* x = ref::floats(in[0]);
    float* y = ref::floats(out[0]);
    for (std::uint64_t i = 0; i < in[0].info.num_elements(); ++i) y[i] = apply(params_, x[i]);
  }
};

namespace ref {
/// Applies a layer's fused activation (if it has one) to its n output elements.
inline void apply_activation(const std::optional<ops::Activation::Params>& activation, float* y, std::uint64_t n) {
  if (activation)
    for (std::uint64_t i = 0; i < n; ++i)
      y[i] = Workload<ops::Activation, RefBackend, DataType::Float32>::apply(*activation, y[i]);
}
}  // namespace ref

}  // namespace kiln
