// SPDX-License-Identifier: Apache-2.0
// ClBackend Softmax and log-softmax along any axis (kernels/reduction.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Softmax, ClBackend, DataType::Float32> : opencl::Float32Kernel<ops::Softmax> {
  using Float32Kernel::Float32Kernel;

  static Expected<Workload> create(const WorkloadInfo<ops::Softmax>& info, opencl::Context& context) {
    return make<Workload>(info, context, "reduction", "softmax");
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const TensorShape& shape = in[0].info.shape;
    const std::size_t axis = *detail::normalize_axis(params_.axis, shape.rank());
    const std::size_t outer = shape.num_elements(0, axis), inner = shape.num_elements(axis + 1, shape.rank());
    return launch_(context, cl::NDRange(inner, outer), input(in, 0), opencl::buffer_of(out[0]), cl_uint{shape[axis]},
                   params_.beta, cl_int{params_.log});
  }
};

}  // namespace kiln
