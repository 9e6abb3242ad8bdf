// SPDX-License-Identifier: Apache-2.0
// Neon Cast (Float32 <-> Float16): the target's conversion instructions, split over the threads.
#pragma once

#include "kiln/backends/float16_via_float32.hpp"
#include "kiln/backends/neon/simd/half_vectors.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

template <DataType T>
requires(ops::Cast::converts(T)) struct Kernel<ops::Cast, T> {
  static Status is_supported(const WorkloadInfo<ops::Cast>& info) {
    if (!ops::Cast::converts(info.outputs[0].type))
      return Status::error(ErrorCode::Unsupported, "casts between Float32 and Float16; this Cast makes ",
                           to_string(info.outputs[0].type));
    return Status::ok();
  }
  explicit Kernel(const WorkloadInfo<ops::Cast>&) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    cast_elements<VectorHalves>(in[0], out[0], context);
  }
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
