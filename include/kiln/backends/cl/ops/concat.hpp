// SPDX-License-Identifier: Apache-2.0
// ClBackend Concat: each input copied into its part of the output, any data type (kernels/data_movement.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

namespace opencl {

/// Moves bytes, so one class serves every data type.
class ConcatBytes : public DataMovementKernel<ops::Concat> {
 public:
  using DataMovementKernel::DataMovementKernel;

  static Status is_supported(const WorkloadInfo<ops::Concat>& info) {
    return ops::Concat::check_quantization(info.inputs, info.outputs[0]);
  }
  static Expected<ConcatBytes> create(const WorkloadInfo<ops::Concat>& info, Context& context) {
    auto made =
        make<ConcatBytes>(info, context, "data_movement", "strided_copy", opencl::element_option(info.outputs[0].type));
    if (!made) return made;
    const TensorShape& ys = info.outputs[0].shape;
    const std::size_t axis = *detail::normalize_axis(info.params.axis, ys.rank());
    const ref::Strides y_strides = ref::strides_of(ys);
    std::uint64_t offset = 0;
    for (const TensorInfo& input : info.inputs) {
      made->parts_.push_back({opencl::dims6(input.shape), opencl::strides6(ref::strides_of(input.shape), ys.rank()),
                              opencl::strides6(y_strides, ys.rank())});
      made->bases_.push_back(static_cast<cl_int>(offset * y_strides[axis]));
      offset += input.shape[axis];
    }
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    for (std::size_t i = 0; i < in.size(); ++i)
      if (auto s = launch_(context, opencl::elements_of(in[i].info), input(in, i), opencl::buffer_of(out[0]),
                           parts_[i].dims, cl_int{0}, parts_[i].x_strides, bases_[i], parts_[i].y_strides);
          !s)
        return s;
    return Status::ok();
  }

 private:
  std::vector<opencl::StridedCopy> parts_;
  std::vector<cl_int> bases_;  // where each input starts in the output
};

}  // namespace opencl

template <DataType T>
struct Workload<ops::Concat, ClBackend, T> : opencl::ConcatBytes {
  using ConcatBytes::ConcatBytes;
};

}  // namespace kiln
