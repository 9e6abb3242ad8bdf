// SPDX-License-Identifier: Apache-2.0
// Neon Activation: every function streamed a vector at a time, split over the threads in chunks.
#pragma once

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"

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

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
