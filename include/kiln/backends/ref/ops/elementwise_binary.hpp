// SPDX-License-Identifier: Apache-2.0
// Reference ElementwiseBinary: each output element reads its broadcast operands by coordinates, in
// Float32 and, for Add, Sub and Mul, in int8 (decision 0014).
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>

#include "kiln/backends/quantized_elementwise.hpp"
#include "kiln/backends/ref/ops/activation.hpp"
#include "kiln/backends/ref/ops/quantize.hpp"

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
      case O::PRelu: return a >= 0.0f ? a : a * b;
      case O::Mod:
      case O::FMod: return ops::remainder(op, a, b);
    }
    return a;
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const float* a = ref::floats(in[0]);
    const float* b = ref::floats(in[1]);
    float* y = ref::floats(out[0]);
    ref::for_each_broadcast<2>(in, out[0].info.shape, [&](std::uint64_t i, const auto& at) {
      y[i] = apply(params_.operation, a[at[0]], b[at[1]]);
    });
    ref::apply_activation(params_.activation, ref::floats(out[0]), out[0].info.num_elements());
  }
};

/// Signed32: the integer arithmetic of shape and index computations, as numpy and ONNX define it on
/// int32. Add, Sub, Mul and Power wrap around on overflow; Div truncates toward zero. A division (or
/// Mod) by zero or a negative power is an error at run (numpy raises on them too), never undefined behaviour.
template <>
struct Workload<ops::ElementwiseBinary, RefBackend, DataType::Signed32> {
  static Status is_supported(const WorkloadInfo<ops::ElementwiseBinary>& info) {
    if (auto s = ref::require_type(info, DataType::Signed32); !s) return s;
    if (info.params.activation)
      return Status::error(ErrorCode::Unsupported, "applies no activation to Signed32 elements");
    return Status::ok();
  }
  explicit Workload(const WorkloadInfo<ops::ElementwiseBinary>& info) : operation(info.params.operation) {}

  /// a op b, or nothing for a division (or remainder) by zero or a negative exponent.
  static std::optional<std::int32_t> apply(ops::BinaryOperation op, std::int32_t a, std::int32_t b) {
    using O = ops::BinaryOperation;
    using U = std::uint32_t;  // unsigned arithmetic wraps where signed overflow would be undefined
    switch (op) {
      case O::Add: return static_cast<std::int32_t>(U(a) + U(b));
      case O::Sub: return static_cast<std::int32_t>(U(a) - U(b));
      case O::Mul: return static_cast<std::int32_t>(U(a) * U(b));
      case O::Div:
        if (b == 0) return std::nullopt;
        if (b == -1) return static_cast<std::int32_t>(U(0) - U(a));  // INT32_MIN / -1 wraps to itself
        return a / b;
      case O::Maximum: return std::max(a, b);
      case O::Minimum: return std::min(a, b);
      case O::Power: {
        if (b < 0) return std::nullopt;
        U result = 1, base = U(a);
        for (U e = U(b); e != 0; e >>= 1, base *= base)
          if (e & 1) result *= base;
        return static_cast<std::int32_t>(result);
      }
      case O::PRelu: return a >= 0 ? a : static_cast<std::int32_t>(U(a) * U(b));
      case O::Mod:
      case O::FMod:
        if (b == 0) return std::nullopt;
        return ops::remainder(op, a, b);
    }
    return a;
  }

  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const auto* a = static_cast<const std::int32_t*>(in[0].data);
    const auto* b = static_cast<const std::int32_t*>(in[1].data);
    auto* y = static_cast<std::int32_t*>(out[0].data);
    Status status = Status::ok();
    ref::for_each_broadcast<2>(in, out[0].info.shape, [&](std::uint64_t i, const auto& at) {
      const auto value = apply(operation, a[at[0]], b[at[1]]);
      if (!value && status)
        status = Status::error(ErrorCode::InvalidArgument, "Signed32 ", ops::to_string(operation), " of ", a[at[0]],
                               " and ", b[at[1]], " at element ", i,
                               operation == ops::BinaryOperation::Power ? ": negative exponent" : ": division by zero");
      y[i] = value.value_or(0);
    });
    return status;
  }

  ops::BinaryOperation operation;
};

/// int8 Add, Sub and Mul: each output through quantized::ElementwiseStage.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::ElementwiseBinary, RefBackend, T> {
  static Status is_supported(const WorkloadInfo<ops::ElementwiseBinary>& info) {
    return quantized::check_elementwise(info);
  }
  static Expected<Workload> create(const WorkloadInfo<ops::ElementwiseBinary>& info, ref::Context&) {
    auto stage = quantized::ElementwiseStage::make(info);
    if (!stage) return stage.status();
    return Workload{*stage};
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    ref::for_each_broadcast<2>(in, out[0].info.shape, [&](std::uint64_t i, const auto& at) {
      ref::store_8bit(out[0], i, stage(integer_at(in[0], at[0]), integer_at(in[1], at[1])));
    });
  }

  quantized::ElementwiseStage stage;
};

}  // namespace kiln
