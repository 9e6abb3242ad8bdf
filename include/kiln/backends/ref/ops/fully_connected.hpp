// SPDX-License-Identifier: Apache-2.0
// Reference FullyConnected: one dot product per (row, output feature), in Float32, in int8
// (decision 0014) and in Signed32 (ONNX MatMulInteger).
#pragma once

#include "kiln/backends/ref/ops/activation.hpp"
#include "kiln/backends/ref/ops/quantize.hpp"

namespace kiln {

namespace ref {

/// FullyConnected for every element type: store(index, sum, j) receives each output's
/// bias[j] + sum over k of (x - x_zero) w[j], accumulated in Acc.
template <class Acc, class X, class W, class Bias, class Store>
void fully_connected(std::span<const ConstTensor> in, Acc x_zero, Store&& store) {
  const std::uint32_t k = in[1].info.shape[1], n = in[1].info.shape[0];
  const TensorShape& xs = in[0].info.shape;
  const std::uint64_t rows = xs.num_elements(0, xs.rank() - 1);
  const auto* x = static_cast<const X*>(in[0].data);
  const auto* w = static_cast<const W*>(in[1].data);
  const auto* bias = in.size() > 2 ? static_cast<const Bias*>(in[2].data) : nullptr;
  for (std::uint64_t r = 0; r < rows; ++r)
    for (std::uint32_t j = 0; j < n; ++j) {
      Acc sum = bias ? static_cast<Acc>(bias[j]) : Acc{0};
      for (std::uint32_t p = 0; p < k; ++p)
        sum += (static_cast<Acc>(x[r * k + p]) - x_zero) * w[std::uint64_t{j} * k + p];
      store(r * n + j, sum, j);
    }
}

}  // namespace ref

template <>
struct Workload<ops::FullyConnected, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::FullyConnected> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    float* y = ref::floats(out[0]);
    ref::fully_connected<float, float, float, float>(in, 0.0f,
                                                     [&](std::uint64_t i, float sum, std::uint32_t) { y[i] = sum; });
    ref::apply_activation(params_.activation, y, out[0].info.num_elements());
  }
};

template <>
struct Workload<ops::FullyConnected, RefBackend, DataType::Signed32> : ref::Signed32Kernel<ops::FullyConnected> {
  using Signed32Kernel::Signed32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    ref::fully_connected<std::uint32_t, std::int32_t, std::int32_t, std::int32_t>(in, 0u, store_to(out[0]));
  }
};

template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::FullyConnected, RefBackend, T>
    : ref::Int8Kernel<ops::FullyConnected, Workload<ops::FullyConnected, RefBackend, T>> {
  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    ref::fully_connected<std::int64_t, element_type_t<T>, std::int8_t, std::int32_t>(in, in[0].info.quantization.offset,
                                                                                     this->store_to(out[0]));
  }
};

}  // namespace kiln
