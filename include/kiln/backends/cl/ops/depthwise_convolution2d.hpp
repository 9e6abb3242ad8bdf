// SPDX-License-Identifier: Apache-2.0
// ClBackend DepthwiseConvolution2d with fused activation: a tiled kernel for channel multiplier 1, a
// direct one for any other (kernels/convolution.cl). In int8, one output per work-item, any channel
// multiplier (kernels/int8_layers.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"
#include "kiln/backends/cl/int8_kernel.hpp"

namespace kiln {

template <DataType F>
requires(opencl::is_float_kernel_type(F)) struct Workload<ops::DepthwiseConvolution2d, ClBackend, F>
    : opencl::FloatKernel<ops::DepthwiseConvolution2d> {
  using FloatKernel::FloatKernel;

  static Expected<Workload> create(const WorkloadInfo<ops::DepthwiseConvolution2d>& info, opencl::Context& context) {
    const bool tiled = info.outputs[0].shape[3] == info.inputs[0].shape[3];
    auto made = make<Workload>(info, context, "convolution",
                               tiled ? "depthwise_convolution2d_tiled" : "depthwise_convolution2d");
    if (made) made->tiled_ = tiled;
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ws = in[1].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const bool has_bias = in.size() > 2;
    const opencl::ActivationArgs act(params_.activation);
    const ops::DepthwiseConvolution2d::Params& p = params_;
    if (tiled_)
      return launch_(context, cl::NDRange((ys[3] + 7) / 8, (ys[2] + 3) / 4, std::size_t{ys[0]} * ys[1]), input(in, 0),
                     input(in, 1), input(in, has_bias ? 2 : 1), opencl::buffer_of(out[0]), xs[1], xs[2], xs[3], ys[1],
                     ys[2], ws[1], ws[2], p.stride.height, p.stride.width, p.dilation.height, p.dilation.width,
                     p.padding.top, p.padding.left, cl_int{has_bias}, act.function, act.a, act.b);
    return launch_(context, cl::NDRange(ys[3], ys[2], std::size_t{ys[0]} * ys[1]), input(in, 0), input(in, 1),
                   input(in, has_bias ? 2 : 1), opencl::buffer_of(out[0]), xs[1], xs[2], xs[3], ys[1], ws[1], ws[2],
                   ys[3] / xs[3], p.stride.height, p.stride.width, p.dilation.height, p.dilation.width, p.padding.top,
                   p.padding.left, cl_int{has_bias}, act.function, act.a, act.b);
  }

 private:
  bool tiled_ = false;  // channel multiplier 1: 4 columns x 8 channels per work-item
};

template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::DepthwiseConvolution2d, ClBackend, T>
    : opencl::Int8Kernel<ops::DepthwiseConvolution2d, Workload<ops::DepthwiseConvolution2d, ClBackend, T>> {
  static constexpr std::string_view kernel_name = "int8_depthwise_convolution2d";
  using opencl::Int8Kernel<ops::DepthwiseConvolution2d, Workload>::Int8Kernel;

  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ws = in[1].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const ops::DepthwiseConvolution2d::Params& p = this->params_;
    return this->launch(context, cl::NDRange(ys[3], ys[2], std::size_t{ys[0]} * ys[1]), in, out, xs[1], xs[2], xs[3],
                        ys[1], ws[1], ws[2], ys[3] / xs[3], p.stride.height, p.stride.width, p.dilation.height,
                        p.dilation.width, p.padding.top, p.padding.left);
  }
};

}  // namespace kiln
