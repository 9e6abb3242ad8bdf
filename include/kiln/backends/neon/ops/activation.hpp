// SPDX-License-Identifier: Apache-2.0
// Neon Activation: every function streamed a vector at a time, split over the threads in chunks (Float16
// computed in Float32 lanes); in int8 a byte at a time through the layer's table.
#pragma once

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"
#include "kiln/backends/quantized_activation.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// y = f(x) streamed a vector at a time over floats, or over halves computed in Float32 lanes.
template <class E>
void activate(const ops::Activation::Params& params, const E* x, E* y, std::uint64_t n, Context& context) {
  visit_activation(params, [&](auto f) {
    parallel_chunks(context, n, [&](std::size_t begin, std::size_t end) { map(x + begin, y + begin, end - begin, f); });
  });
}

template <>
struct Kernel<ops::Activation, DataType::Float32> : Float32Kernel<ops::Activation> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    activate(params_, floats(in[0]), floats(out[0]), in[0].info.num_elements(), context);
  }
};

/// Float16: halves read and written in place, each result rounded once (RefBackend's Float32
/// arithmetic), with no Float32 buffers.
template <>
struct Kernel<ops::Activation, DataType::Float16> : Float16Kernel<ops::Activation> {
  using Float16Kernel::Float16Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    activate(params_, static_cast<const Half*>(in[0].data), static_cast<Half*>(out[0].data), in[0].info.num_elements(),
             context);
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
