// SPDX-License-Identifier: Apache-2.0
// Reference GatherElements: each output element copied from data by its index, checked first.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

/// Moves elements, so one class serves every data type.
template <DataType T>
struct Workload<ops::GatherElements, RefBackend, T> {
  explicit Workload(const WorkloadInfo<ops::GatherElements>& info) : axis(info.params.axis) {}

  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const TensorShape &xs = in[0].info.shape, &is = in[1].info.shape;
    const std::size_t d = *detail::normalize_axis(axis, xs.rank());
    const std::int64_t dim = xs[d];
    const auto indices = in[1].as<std::int32_t>();
    const ref::Strides strides = ref::strides_of(xs);
    const std::size_t element = size_of(in[0].info.type);
    for (std::uint64_t i = 0; i < is.num_elements(); ++i) {
      const std::int32_t index = indices[i];
      if (index < -dim || index >= dim)
        return Status::error(ErrorCode::InvalidArgument, "GatherElements index ", index, " at position ", i,
                             " is out of range for axis ", d, " of size ", dim);
      auto coords = ref::unravel(i, is);
      coords[d] = static_cast<std::uint32_t>(index < 0 ? index + dim : index);
      std::uint64_t offset = 0;
      for (std::size_t k = 0; k < xs.rank(); ++k) offset += coords[k] * strides[k];
      std::memcpy(ref::bytes(out[0]) + i * element, ref::bytes(in[0]) + offset * element, element);
    }
    return Status::ok();
  }

  std::int64_t axis;
};

}  // namespace kiln
