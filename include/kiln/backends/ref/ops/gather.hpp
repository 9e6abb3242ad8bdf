// SPDX-License-Identifier: Apache-2.0
// Reference Gather: copies the indexed slices, checking every index first.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

namespace ref {

/// Moves bytes, so one class serves every data type.
class GatherBytes : public DataMovementKernel<ops::Gather> {
 public:
  using DataMovementKernel::DataMovementKernel;

  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context&) const {
    const TensorShape& xs = in[0].info.shape;
    const std::size_t axis = *detail::normalize_axis(params_.axis, xs.rank());
    const std::int64_t dim = xs[axis];
    const std::uint64_t outer = xs.num_elements(0, axis);
    const std::uint64_t inner_bytes = xs.num_elements(axis + 1, xs.rank()) * size_of(in[0].info.type);
    const auto indices = in[1].as<std::int32_t>();
    for (std::size_t j = 0; j < indices.size(); ++j)
      if (indices[j] < -dim || indices[j] >= dim)
        return Status::error(ErrorCode::InvalidArgument, "Gather index ", indices[j], " at position ", j,
                             " is out of range for axis ", axis, " of size ", dim);
    std::byte* y = ref::bytes(out[0]);
    for (std::uint64_t o = 0; o < outer; ++o)
      for (const std::int32_t index : indices) {
        const std::uint64_t row = static_cast<std::uint64_t>(index < 0 ? index + dim : index);
        if (inner_bytes != 0) std::memcpy(y, ref::bytes(in[0]) + (o * dim + row) * inner_bytes, inner_bytes);
        y += inner_bytes;
      }
    return Status::ok();
  }
};

}  // namespace ref

template <DataType T>
struct Workload<ops::Gather, RefBackend, T> : ref::GatherBytes {
  using GatherBytes::GatherBytes;
};

}  // namespace kiln
