// SPDX-License-Identifier: Apache-2.0
// ClBackend TransposeConvolution2d: each output gathers the taps that reach it (kernels/convolution.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

template <DataType F>
requires(opencl::is_float_kernel_type(F)) struct Workload<ops::TransposeConvolution2d, ClBackend, F>
    : opencl::FloatKernel<ops::TransposeConvolution2d> {
  using FloatKernel::FloatKernel;

  static Expected<Workload> create(const WorkloadInfo<ops::TransposeConvolution2d>& info, opencl::Context& context) {
    return make<Workload>(info, context, "convolution", "transpose_convolution2d");
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ws = in[1].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const bool has_bias = in.size() > 2;
    return launch_(context, cl::NDRange(ys[3], ys[2], std::size_t{ys[0]} * ys[1]), input(in, 0), input(in, 1),
                   input(in, has_bias ? 2 : 1), opencl::buffer_of(out[0]), xs[1], xs[2], xs[3], ys[1], ws[1], ws[2],
                   params_.stride.height, params_.stride.width, params_.padding.top, params_.padding.left,
                   cl_int{has_bias});
  }
};

}  // namespace kiln
