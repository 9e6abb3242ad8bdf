// SPDX-License-Identifier: Apache-2.0
// Neon Cast (Float32 <-> Float16): the target's conversion instructions, split over the threads.
#pragma once

#include "kiln/backends/neon/simd/half_vectors.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

template <DataType T>
requires(ops::Cast::converts(T)) struct Kernel<ops::Cast, T> {
  explicit Kernel(const WorkloadInfo<ops::Cast>&) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const std::uint64_t n = in[0].info.num_elements();
    if (in[0].info.type == out[0].info.type)
      std::memcpy(out[0].data, in[0].data, in[0].info.num_bytes());
    else if (in[0].info.type == DataType::Float32)
      VectorHalves::narrow(floats(in[0]), static_cast<Half*>(out[0].data), n, context);
    else
      VectorHalves::widen(static_cast<const Half*>(in[0].data), floats(out[0]), n, context);
  }
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
