// SPDX-License-Identifier: Apache-2.0
// Neon Activation: every function streamed a vector at a time, split over the threads in chunks.
#pragma once

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"

namespace kiln {

template <>
struct Workload<ops::Activation, NeonBackend> : neon::Float32Kernel<ops::Activation> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, neon::Context& context) const {
    const float* x = neon::floats(in[0]);
    float* y = neon::floats(out[0]);
    neon::visit_activation(params_, [&](auto f) {
      neon::parallel_chunks(context, in[0].info.num_elements(),
                            [&](std::size_t begin, std::size_t end) { neon::map(x + begin, y + begin, end - begin, f); });
    });
  }
};

}  // namespace kiln
