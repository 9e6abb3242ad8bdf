// SPDX-License-Identifier: Apache-2.0
// Reference Activation: each function as its formula (ops::Activation::apply), and in int8 through
// a table of its 256 input bytes (decision 0014).
#pragma once

#include "kiln/backends/quantized_activation.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Activation, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::Activation> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const float* x = ref::floats(in[0]);
    float* y = ref::floats(out[0]);
    for (std::uint64_t i = 0; i < in[0].info.num_elements(); ++i) y[i] = ops::Activation::apply(params_, x[i]);
  }
};

/// int8: each byte through the layer's table (quantized::ActivationTable).
template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::Activation, RefBackend, T> {
  static Status is_supported(const WorkloadInfo<ops::Activation>& info) { return quantized::check_activation(info); }
  static Expected<Workload> create(const WorkloadInfo<ops::Activation>& info, ref::Context&) {
    return Workload{quantized::ActivationTable(info)};
  }
  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const auto* x = static_cast<const std::uint8_t*>(in[0].data);
    auto* y = static_cast<std::uint8_t*>(out[0].data);
    for (std::uint64_t i = 0; i < in[0].info.num_elements(); ++i) y[i] = table[x[i]];
  }

  quantized::ActivationTable table;
};

namespace ref {
/// Applies a layer's fused activation (if it has one) to its n output elements.
inline void apply_activation(const std::optional<ops::Activation::Params>& activation, float* y, std::uint64_t n) {
  if (activation)
    for (std::uint64_t i = 0; i < n; ++i) y[i] = ops::Activation::apply(*activation, y[i]);
}
}  // namespace ref

}  // namespace kiln
