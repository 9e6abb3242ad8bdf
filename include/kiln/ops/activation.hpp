// SPDX-License-Identifier: Apache-2.0
// Activation: the elementwise non-linearities that follow convolutions and dense layers.
#pragma once

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// The function an Activation layer applies, with the meaning of its `a` and `b` parameters.
enum class ActivationFunction : std::uint8_t {
  ReLU,             ///< max(0, x)
  BoundedReLU,      ///< min(a, max(b, x)); ReLU6 is a = 6, b = 0
  LeakyReLU,        ///< x if x >= 0 else a * x
  ELU,              ///< x if x >= 0 else a * (exp(x) - 1)
  Sigmoid,          ///< 1 / (1 + exp(-x))
  Tanh,             ///< tanh(x)
  HardSigmoid,      ///< max(0, min(1, a * x + b)) (ONNX HardSigmoid; PyTorch's is a = 1/6, b = 0.5)
  HardSwish,        ///< x * max(0, min(6, x + 3)) / 6
  GELU,             ///< x * Phi(x) with the exact erf; the tanh approximation when a != 0
  SiLU,             ///< x * sigmoid(x) = x / (1 + exp(-x)) ("swish"; PyTorch exports it as x * Sigmoid(x))
  Softplus,         ///< log(1 + exp(x)) (Arm NN's SoftReLu), computed as max(x, 0) + log1p(exp(-|x|))
  Mish,             ///< x * tanh(softplus(x))
  Softsign,         ///< x / (1 + |x|)
  SELU,             ///< b * (x if x > 0 else a * (exp(x) - 1)): ONNX Selu's gamma b and alpha a
  CELU,             ///< max(0, x) + min(0, a * (exp(x / a) - 1)), a != 0
  ThresholdedReLU,  ///< x if x > a else 0
  Shrink,           ///< x + b if x < -a, x - b if x > a, else 0 (ONNX Shrink's lambd a and bias b)
};

constexpr std::string_view to_string(ActivationFunction f) noexcept {
  constexpr std::string_view names[] = {
      "ReLU", "BoundedReLU", "LeakyReLU", "ELU",      "Sigmoid", "Tanh", "HardSigmoid",     "HardSwish", "GELU",
      "SiLU", "Softplus",    "Mish",      "Softsign", "SELU",    "CELU", "ThresholdedReLU", "Shrink"};
  return names[static_cast<std::size_t>(f)];
}

/// Elementwise activation (Arm NN ActivationLayer, TFLite RELU/RELU6/LOGISTIC/TANH/HARD_SWISH/GELU...).
struct Activation {
  static constexpr std::string_view name = "Activation";
  static constexpr Arity arity{1, 1};
  struct Params {
    ActivationFunction function = ActivationFunction::ReLU;
    float a = 0.0f;
    float b = 0.0f;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr Params relu6() { return {ActivationFunction::BoundedReLU, 6.0f, 0.0f}; }

  /// The function at x, in Float32 as written above: RefBackend's definition, and the values the
  /// 256-entry tables of int8 activations are made of.
  static float apply(const Params& p, float x) {
    using F = ActivationFunction;
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
      case F::Softplus: return softplus(x);
      case F::Mish: return x * std::tanh(softplus(x));
      case F::Softsign: return x / (1.0f + std::fabs(x));
      case F::SELU: return p.b * (x > 0.0f ? x : p.a * std::expm1(x));
      case F::CELU: return std::max(0.0f, x) + std::min(0.0f, p.a * std::expm1(x / p.a));
      case F::ThresholdedReLU: return x > p.a ? x : 0.0f;
      case F::Shrink: return x < -p.a ? x + p.b : x > p.a ? x - p.b : 0.0f;
      case F::GELU:
        if (p.a != 0.0f) {
          const float inner = std::sqrt(2.0f / std::numbers::pi_v<float>) * (x + 0.044715f * x * x * x);
          return 0.5f * x * (1.0f + std::tanh(inner));
        }
        return 0.5f * x * (1.0f + std::erf(x / std::numbers::sqrt2_v<float>));
    }
    return x;
  }

  /// log(1 + exp(x)) without overflow for large x and without losing small results for very negative x.
  static float softplus(float x) { return std::max(x, 0.0f) + std::log1p(std::exp(-std::fabs(x))); }

  /// Checks the parameters themselves; layers with a fused activation check theirs with it too.
  static constexpr Status validate(const Params& p) {
    if (p.function == ActivationFunction::BoundedReLU && !(p.b <= p.a))
      return detail::invalid("BoundedReLU needs lower bound b <= upper bound a, got a = ", p.a, ", b = ", p.b);
    if (p.function == ActivationFunction::CELU && p.a == 0.0f) return detail::invalid("CELU needs alpha a != 0");
    if (p.function == ActivationFunction::Shrink && !(p.a >= 0.0f))
      return detail::invalid("Shrink needs lambd a >= 0, got ", p.a);
    return Status::ok();
  }
  static constexpr Status validate(const std::optional<Params>& fused) {
    return fused ? validate(*fused) : Status::ok();
  }

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    if (auto s = validate(p); !s) return s;
    out[0] = TensorInfo{in[0].shape, in[0].type, in[0].quantization};
    return Status::ok();
  }
};

}  // namespace kiln::ops
