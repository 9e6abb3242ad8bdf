// SPDX-License-Identifier: Apache-2.0
// ClBackend Convolution2d, grouped, with fused activation: a direct kernel (kernels/convolution.cl), and
// pointwise (1x1, stride 1, unpadded) convolutions with constant weights as a GEMM over the pixels
// (kernels/matmul.cl).
#pragma once

#include "kiln/backends/cl/gemm.hpp"

namespace kiln {

template <>
struct Workload<ops::Convolution2d, ClBackend> : opencl::Float32Kernel<ops::Convolution2d> {
  using Float32Kernel::Float32Kernel;

  static Expected<Workload> create(const WorkloadInfo<ops::Convolution2d>& info, opencl::Context& context) {
    const TensorShape& ws = info.inputs[1].shape;
    const ops::Convolution2d::Params& p = info.params;
    const bool pointwise = info.constants[1] != nullptr && ws[1] == 1 && ws[2] == 1 && p.groups == 1 &&
                           p.stride == ops::Size2d{1, 1} && p.padding == ops::Padding2d{};
    auto made = make<Workload>(info, context, pointwise ? "matmul" : "convolution", pointwise ? "gemm" : "convolution2d");
    if (!made || !pointwise) return made;
    auto weights = opencl::upload_transposed(context, static_cast<const float*>(info.constants[1]), ws[0], ws[3]);
    if (!weights) return weights.status();
    made->constants_[1] = std::move(*weights);
    made->pointwise_ = true;
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ws = in[1].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const bool has_bias = in.size() > 2;
    const opencl::ActivationArgs act(params_.activation);
    if (pointwise_) {
      const auto pixels = static_cast<cl_uint>(ys.num_elements(0, 3));
      return launch_(context.queue(), opencl::gemm_range(pixels, ys[3]), cl::NullRange, input(in, 0), input(in, 1),
                     input(in, has_bias ? 2 : 1), opencl::buffer_of(out[0]), pixels, ys[3], xs[3], cl_int{has_bias},
                     act.function, act.a, act.b);
    }
    return launch_(context.queue(), cl::NDRange(ys[3], ys[2], std::size_t{ys[0]} * ys[1]), cl::NullRange,
                   input(in, 0), input(in, 1), input(in, has_bias ? 2 : 1), opencl::buffer_of(out[0]), xs[1], xs[2],
                   xs[3], ys[1], ws[1], ws[2], ws[3], ws[0] / params_.groups, params_.stride.height,
                   params_.stride.width, params_.dilation.height, params_.dilation.width, params_.padding.top,
                   params_.padding.left, cl_int{has_bias}, act.function, act.a, act.b);
  }

 private:
  bool pointwise_ = false;  // run as a GEMM, weights transposed to [C, O]
};

}  // namespace kiln
