// SPDX-License-Identifier: Apache-2.0
// ClBackend Split: each output copied from its part of the input, any data type (kernels/data_movement.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

namespace opencl {

/// Moves bytes, so one class serves every data type.
class SplitBytes : public DataMovementKernel<ops::Split> {
 public:
  using DataMovementKernel::DataMovementKernel;

  static Expected<SplitBytes> create(const WorkloadInfo<ops::Split>& info, Context& context) {
    auto made =
        make<SplitBytes>(info, context, "data_movement", "strided_copy", opencl::element_option(info.inputs[0].type));
    if (!made) return made;
    const TensorShape& xs = info.inputs[0].shape;
    const std::size_t axis = *detail::normalize_axis(info.params.axis, xs.rank());
    const ref::Strides x_strides = ref::strides_of(xs);
    std::uint64_t offset = 0;
    for (const TensorInfo& output : info.outputs) {
      made->parts_.push_back({opencl::dims6(output.shape), opencl::strides6(x_strides, xs.rank()),
                              opencl::strides6(ref::strides_of(output.shape), xs.rank())});
      made->bases_.push_back(static_cast<cl_int>(offset * x_strides[axis]));
      offset += output.shape[axis];
    }
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    for (std::size_t i = 0; i < out.size(); ++i)
      if (auto s = launch_(context, opencl::elements_of(out[i].info), input(in, 0), opencl::buffer_of(out[i]),
                           parts_[i].dims, bases_[i], parts_[i].x_strides, cl_int{0}, parts_[i].y_strides);
          !s)
        return s;
    return Status::ok();
  }

 private:
  std::vector<opencl::StridedCopy> parts_;
  std::vector<cl_int> bases_;  // where each output starts in the input
};

}  // namespace opencl

template <DataType T>
struct Workload<ops::Split, ClBackend, T> : opencl::SplitBytes {
  using SplitBytes::SplitBytes;
};

}  // namespace kiln
