// SPDX-License-Identifier: Apache-2.0
// ClBackend DepthwiseConvolution2d, any channel multiplier, with fused activation (kernels/convolution.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::DepthwiseConvolution2d, ClBackend> : opencl::Float32Kernel<ops::DepthwiseConvolution2d> {
  using Float32Kernel::Float32Kernel;

  static Expected<Workload> create(const WorkloadInfo<ops::DepthwiseConvolution2d>& info, opencl::Context& context) {
    return make<Workload>(info, context, "convolution", "depthwise_convolution2d");
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ws = in[1].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const bool has_bias = in.size() > 2;
    const opencl::ActivationArgs act(params_.activation);
    return launch_(context.queue(), cl::NDRange(ys[3], ys[2], std::size_t{ys[0]} * ys[1]), cl::NullRange,
                   input(in, 0), input(in, 1), input(in, has_bias ? 2 : 1), opencl::buffer_of(out[0]), xs[1], xs[2],
                   xs[3], ys[1], ws[1], ws[2], ys[3] / xs[3], params_.stride.height, params_.stride.width,
                   params_.dilation.height, params_.dilation.width, params_.padding.top, params_.padding.left,
                   cl_int{has_bias}, act.function, act.a, act.b);
  }
};

}  // namespace kiln
