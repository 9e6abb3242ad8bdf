// SPDX-License-Identifier: Apache-2.0
// ClBackend StridedSlice: negative steps too, any data type (kernels/data_movement.cl, strided_copy).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

namespace opencl {

/// Moves bytes, so one class serves every data type.
class StridedSliceBytes : public DataMovementKernel<ops::StridedSlice> {
 public:
  using DataMovementKernel::DataMovementKernel;

  static Expected<StridedSliceBytes> create(const WorkloadInfo<ops::StridedSlice>& info, Context& context) {
    auto made = make<StridedSliceBytes>(info, context, "data_movement", "strided_copy",
                                        opencl::element_option(info.inputs[0].type));
    if (!made) return made;
    const TensorShape& xs = info.inputs[0].shape;
    const auto window = *ops::StridedSlice::resolve(info.params, xs);
    const ref::Strides x_strides = ref::strides_of(xs);
    std::array<std::int64_t, TensorShape::max_rank> read{};
    std::int64_t base = 0;
    for (std::size_t d = 0; d < xs.rank(); ++d) {
      base += window.start[d] * static_cast<std::int64_t>(x_strides[d]);
      read[d] = window.step[d] * static_cast<std::int64_t>(x_strides[d]);
    }
    const TensorShape& ys = info.outputs[0].shape;
    made->base_ = static_cast<cl_int>(base);
    made->copy_ = {opencl::dims6(ys), opencl::strides6(read, ys.rank()),
                   opencl::strides6(ref::strides_of(ys), ys.rank())};
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), opencl::buffer_of(out[0]), copy_.dims,
                   base_, copy_.x_strides, cl_int{0}, copy_.y_strides);
  }

 private:
  opencl::StridedCopy copy_;
  cl_int base_ = 0;
};

}  // namespace opencl

template <DataType T>
struct Workload<ops::StridedSlice, ClBackend, T> : opencl::StridedSliceBytes {
  using StridedSliceBytes::StridedSliceBytes;
};

}  // namespace kiln
