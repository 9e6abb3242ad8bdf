// SPDX-License-Identifier: Apache-2.0
// Neon Activation: every function streamed a vector at a time, split over the threads in chunks;
// in int8 a byte at a time through the layer's table.
#pragma once

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"
#include "kiln/backends/quantized_activation.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

template <>
struct Kernel<ops::Activation, DataType::Float32> : Float32Kernel<ops::Activation> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const float* x = floats(in[0]);
    float* y = floats(out[0]);
    visit_activation(params_, [&](auto f) {
      parallel_chunks(context, in[0].info.num_elements(),
                      [&](std::size_t begin, std::size_t end) { map(x + begin, y + begin, end - begin, f); });
    });
  }
};

/// int8: each byte through quantized::ActivationTable (256 bytes, in L1), the same table as
/// RefBackend's; a lookup costs about what a vector of Float32 math costs per element.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Kernel<ops::Activation, T> {
  static Status is_supported(const WorkloadInfo<ops::Activation>& info) { return quantized::check_activation(info); }
  static Expected<Kernel> create(const WorkloadInfo<ops::Activation>& info, Context&) {
    return Kernel{quantized::ActivationTable(info)};
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const auto* x = static_cast<const std::uint8_t*>(in[0].data);
    auto* y = static_cast<std::uint8_t*>(out[0].data);
    parallel_chunks(
        context, in[0].info.num_elements(),
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t i = begin; i < end; ++i) y[i] = table[x[i]];
        },
        stream_chunk, 1);
  }

  quantized::ActivationTable table;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
