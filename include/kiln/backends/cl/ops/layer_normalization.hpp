// SPDX-License-Identifier: Apache-2.0
// ClBackend LayerNormalization, Float32 and Float16: one work-item per row (kernels/reduction.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

template <DataType F>
requires(opencl::is_float_kernel_type(F)) struct Workload<ops::LayerNormalization, ClBackend, F>
    : opencl::FloatKernel<ops::LayerNormalization> {
  using FloatKernel::FloatKernel;

  static Expected<Workload> create(const WorkloadInfo<ops::LayerNormalization>& info, opencl::Context& context) {
    return make<Workload>(info, context, "reduction", "layer_normalization");
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const TensorShape& shape = in[0].info.shape;
    const std::size_t axis = *ops::LayerNormalization::first_row_dimension(params_, shape.rank());
    const auto length = static_cast<cl_uint>(shape.num_elements(axis, shape.rank()));
    if (length == 0) return Status::ok();
    const bool has_bias = in.size() > 2, statistics = out.size() > 1;
    return launch_(context, cl::NDRange(shape.num_elements() / length), input(in, 0), input(in, 1),
                   input(in, has_bias ? 2 : 1), opencl::buffer_of(out[0]), opencl::buffer_of(out[statistics ? 1 : 0]),
                   opencl::buffer_of(out[statistics ? 2 : 0]), length, params_.epsilon, cl_int{has_bias},
                   cl_int{statistics});
  }
};

}  // namespace kiln
