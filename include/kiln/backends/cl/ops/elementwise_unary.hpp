// SPDX-License-Identifier: Apache-2.0
// ClBackend ElementwiseUnary (kernels/elementwise.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

template <DataType F>
requires(opencl::is_float_kernel_type(F)) struct Workload<ops::ElementwiseUnary, ClBackend, F>
    : opencl::FloatKernel<ops::ElementwiseUnary> {
  static Expected<Workload> create(const WorkloadInfo<ops::ElementwiseUnary>& info, opencl::Context& context) {
    return make<Workload>(info, context, "elementwise", "unary");
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), opencl::buffer_of(out[0]),
                   static_cast<cl_int>(params_.operation));
  }

  using FloatKernel::FloatKernel;
};

}  // namespace kiln
