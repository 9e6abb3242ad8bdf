// SPDX-License-Identifier: Apache-2.0
// Reference ElementwiseBinary: each output element reads its broadcast operands by coordinates, in
// Float32 and, for Add, Sub and Mul, in int8 (decision 0014).
#pragma once

#include <algorithm>
#include <cmath>

#include "kiln/backends/quantized_elementwise.hpp"
#include "kiln/backends/ref/ops/activation.hpp"
#include "kiln/backends/ref/ops/quantize.hpp"

namespace kiln {

namespace ref {

/// f(i, ia, ib) for each output element i of shape `ys`, with the elements of inputs 0 and 1 it
/// reads under numpy broadcasting.
template <class F>
void for_each_broadcast(std::span<const ConstTensor> in, const TensorShape& ys, F&& f) {
  const Strides a_strides = broadcast_strides_of(in[0].info.shape, ys.rank());
  const Strides b_strides = broadcast_strides_of(in[1].info.shape, ys.rank());
  for (std::uint64_t i = 0; i < ys.num_elements(); ++i) {
    const auto coords = unravel(i, ys);
    std::uint64_t ia = 0, ib = 0;
    for (std::size_t d = 0; d < ys.rank(); ++d) {
      ia += coords[d] * a_strides[d];
      ib += coords[d] * b_strides[d];
    }
    f(i, ia, ib);
  }
}

}  // namespace ref

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
    const float* a = ref::floats(in[0]);
    const float* b = ref::floats(in[1]);
    float* y = ref::floats(out[0]);
    ref::for_each_broadcast(in, out[0].info.shape, [&](std::uint64_t i, std::uint64_t ia, std::uint64_t ib) {
      y[i] = apply(params_.operation, a[ia], b[ib]);
    });
    ref::apply_activation(params_.activation, ref::floats(out[0]), out[0].info.num_elements());
  }
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
    ref::for_each_broadcast(in, out[0].info.shape, [&](std::uint64_t i, std::uint64_t ia, std::uint64_t ib) {
      ref::store_8bit(out[0], i, stage(integer_at(in[0], ia), integer_at(in[1], ib)));
    });
  }

  quantized::ElementwiseStage stage;
};

}  // namespace kiln
