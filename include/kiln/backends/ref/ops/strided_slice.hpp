// SPDX-License-Identifier: Apache-2.0
// Reference StridedSlice: every output element fetched from start + coordinate * step, any data type.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

namespace ref {

/// Moves bytes, so one class serves every data type.
class StridedSliceBytes : public DataMovementKernel<ops::StridedSlice> {
 public:
  explicit StridedSliceBytes(const WorkloadInfo<ops::StridedSlice>& info)
      : DataMovementKernel(info), window_(*ops::StridedSlice::resolve(info.params, info.inputs[0].shape)) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context&) const {
    const TensorShape& ys = out[0].info.shape;
    const ref::Strides x_strides = ref::strides_of(in[0].info.shape);
    const std::size_t element = size_of(out[0].info.type);
    for (std::uint64_t i = 0; i < ys.num_elements(); ++i) {
      const auto coords = ref::unravel(i, ys);
      std::int64_t source = 0;
      for (std::size_t d = 0; d < ys.rank(); ++d)
        source += (window_.start[d] + coords[d] * window_.step[d]) * static_cast<std::int64_t>(x_strides[d]);
      std::memcpy(ref::bytes(out[0]) + i * element, ref::bytes(in[0]) + source * static_cast<std::int64_t>(element),
                  element);
    }
  }

 private:
  ops::StridedSlice::Window window_;
};

}  // namespace ref

template <DataType T>
struct Workload<ops::StridedSlice, RefBackend, T> : ref::StridedSliceBytes {
  using StridedSliceBytes::StridedSliceBytes;
};

}  // namespace kiln
