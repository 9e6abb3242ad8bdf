// SPDX-License-Identifier: Apache-2.0
// ClBackend BatchNormalization, channels innermost (kernels/elementwise.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

template <DataType F>
requires(opencl::is_float_kernel_type(F)) struct Workload<ops::BatchNormalization, ClBackend, F>
    : opencl::FloatKernel<ops::BatchNormalization> {
  static Expected<Workload> create(const WorkloadInfo<ops::BatchNormalization>& info, opencl::Context& context) {
    return make<Workload>(info, context, "elementwise", "batch_normalization");
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), input(in, 1), input(in, 2), input(in, 3),
                   input(in, 4), opencl::buffer_of(out[0]), static_cast<cl_uint>(in[0].info.shape.dim_from_end(0)),
                   params_.epsilon);
  }

  using FloatKernel::FloatKernel;
};

}  // namespace kiln
