// SPDX-License-Identifier: Apache-2.0
// Reference Concat: copies each input's rows into place, for any data type.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

namespace ref {

/// Moves bytes, so one class serves every data type.
class ConcatBytes : public DataMovementKernel<ops::Concat> {
 public:
  using DataMovementKernel::DataMovementKernel;

  static Status is_supported(const WorkloadInfo<ops::Concat>& info) {
    return ops::Concat::check_quantization(info.inputs, info.outputs[0]);
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context&) const {
    const TensorShape& shape = out[0].info.shape;
    const std::size_t axis = *detail::normalize_axis(params_.axis, shape.rank());
    const std::size_t element = size_of(out[0].info.type);
    const std::uint64_t outer = shape.num_elements(0, axis);
    const std::uint64_t inner_bytes = shape.num_elements(axis + 1, shape.rank()) * element;
    std::byte* y = ref::bytes(out[0]);
    for (std::uint64_t o = 0; o < outer; ++o)
      for (const ConstTensor& input : in) {
        const std::uint64_t chunk = input.info.shape[axis] * inner_bytes;
        if (chunk != 0) std::memcpy(y, ref::bytes(input) + o * chunk, chunk);
        y += chunk;
      }
  }
};

}  // namespace ref

template <DataType T>
struct Workload<ops::Concat, RefBackend, T> : ref::ConcatBytes {
  using ConcatBytes::ConcatBytes;
};

}  // namespace kiln
