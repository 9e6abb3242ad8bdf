// SPDX-License-Identifier: Apache-2.0
// ClBackend Pad: constant, reflect, symmetric and edge modes (kernels/data_movement.cl).
#pragma once

#include <bit>

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Pad, ClBackend, DataType::Float32> : opencl::Float32Kernel<ops::Pad> {
  using Float32Kernel::Float32Kernel;

  static Expected<Workload> create(const WorkloadInfo<ops::Pad>& info, opencl::Context& context) {
    auto made = make<Workload>(info, context, "data_movement", "pad", "-DELEMENT=uint");
    if (!made) return made;
    const TensorShape& xs = info.inputs[0].shape;
    std::array<std::int64_t, TensorShape::max_rank> before{};
    for (std::size_t d = 0; d < xs.rank(); ++d) before[d] = ops::Pad::before_of(info.params, d);
    made->in_dims_ = opencl::dims6(xs);
    made->out_dims_ = opencl::dims6(info.outputs[0].shape);
    made->before_ = opencl::strides6(before, xs.rank());
    made->x_strides_ = opencl::strides6(ref::strides_of(xs), xs.rank());
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), opencl::buffer_of(out[0]), in_dims_,
                   out_dims_, before_, x_strides_, static_cast<cl_int>(params_.mode),
                   std::bit_cast<cl_uint>(params_.value));
  }

 private:
  cl_uint8 in_dims_{}, out_dims_{};
  cl_int8 before_{}, x_strides_{};
};

}  // namespace kiln
