// SPDX-License-Identifier: Apache-2.0
// Reference Transpose: every output element fetched from its permuted input coordinates.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

namespace ref {

/// Moves bytes, so one class serves every data type.
class TransposeBytes : public DataMovementKernel<ops::Transpose> {
 public:
  using DataMovementKernel::DataMovementKernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context&) const {
    const TensorShape& ys = out[0].info.shape;
    const auto perm = ops::Transpose::resolved(params_, ys.rank());
    const ref::Strides x_strides = ref::strides_of(in[0].info.shape);
    const std::size_t element = size_of(out[0].info.type);
    for (std::uint64_t i = 0; i < ys.num_elements(); ++i) {
      const auto coords = ref::unravel(i, ys);
      std::uint64_t source = 0;
      for (std::size_t d = 0; d < ys.rank(); ++d) source += coords[d] * x_strides[perm[d]];
      std::memcpy(ref::bytes(out[0]) + i * element, ref::bytes(in[0]) + source * element, element);
    }
  }
};

}  // namespace ref

template <DataType T>
struct Workload<ops::Transpose, RefBackend, T> : ref::TransposeBytes {
  using TransposeBytes::TransposeBytes;
};

}  // namespace kiln
