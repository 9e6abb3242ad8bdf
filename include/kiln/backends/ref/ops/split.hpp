// SPDX-License-Identifier: Apache-2.0
// Reference Split: copies consecutive rows into each output, for any data type.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

namespace ref {

/// Moves bytes, so one class serves every data type.
class SplitBytes : public DataMovementKernel<ops::Split> {
 public:
  using DataMovementKernel::DataMovementKernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context&) const {
    const TensorShape& shape = in[0].info.shape;
    const std::size_t axis = *detail::normalize_axis(params_.axis, shape.rank());
    const std::size_t element = size_of(in[0].info.type);
    const std::uint64_t outer = shape.num_elements(0, axis);
    const std::uint64_t inner_bytes = shape.num_elements(axis + 1, shape.rank()) * element;
    const std::byte* x = ref::bytes(in[0]);
    for (std::uint64_t o = 0; o < outer; ++o)
      for (const Tensor& output : out) {
        const std::uint64_t chunk = output.info.shape[axis] * inner_bytes;
        if (chunk != 0) std::memcpy(ref::bytes(output) + o * chunk, x, chunk);
        x += chunk;
      }
  }
};

}  // namespace ref

template <DataType T>
struct Workload<ops::Split, RefBackend, T> : ref::SplitBytes {
  using SplitBytes::SplitBytes;
};

}  // namespace kiln
