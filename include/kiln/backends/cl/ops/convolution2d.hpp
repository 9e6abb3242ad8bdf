// SPDX-License-Identifier: Apache-2.0
// ClBackend Convolution2d, grouped, with fused activation: with constant weights a tiled kernel, or
// for pointwise (1x1, stride 1, unpadded) layers a GEMM over the pixels (kernels/matmul.cl); a direct
// kernel otherwise (kernels/convolution.cl). In int8, one output per work-item
// (kernels/int8_layers.cl).
#pragma once

#include "kiln/backends/cl/gemm.hpp"
#include "kiln/backends/cl/int8_kernel.hpp"

namespace kiln {

template <DataType F>
requires(opencl::is_float_kernel_type(F)) struct Workload<ops::Convolution2d, ClBackend, F>
    : opencl::FloatKernel<ops::Convolution2d> {
  using FloatKernel::FloatKernel;

  /// How the layer runs, chosen at load from its shape.
  enum class Method : std::uint8_t {
    Direct,     ///< one output element per work-item: groups, or weights fed at run time
    Tiled,      ///< 4 columns x 8 channels per work-item, weights packed to [KH, KW, C, O]
    Pointwise,  ///< 1x1, stride 1, unpadded: a GEMM over the pixels, weights packed to [C, O]
  };

  static Expected<Workload> create(const WorkloadInfo<ops::Convolution2d>& info, opencl::Context& context) {
    const TensorShape& ws = info.inputs[1].shape;
    const ops::Convolution2d::Params& p = info.params;
    const bool constant = info.constants[1] != nullptr;
    Method method = Method::Direct;
    if (constant && p.groups == 1)
      method = ws[1] == 1 && ws[2] == 1 && p.stride == ops::Size2d{1, 1} && p.padding == ops::Padding2d{}
                   ? Method::Pointwise
                   : Method::Tiled;
    constexpr std::string_view kernels[] = {"convolution2d", "convolution2d_tiled", "gemm"};
    auto made = make<Workload>(info, context, method == Method::Pointwise ? "matmul" : "convolution",
                               kernels[static_cast<int>(method)]);
    if (!made || method == Method::Direct) return made;
    // [O, KH, KW, C] is [O, KH * KW * C]: transposed, it is [KH, KW, C, O].
    auto weights = opencl::upload_transposed(context, info.inputs[1], info.constants[1], ws[0], ws[1] * ws[2] * ws[3]);
    if (!weights) return weights.status();
    made->constants_[1] = std::move(*weights);
    made->method_ = method;
    return made;
  }

  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ws = in[1].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const bool has_bias = in.size() > 2;
    const cl_mem bias = input(in, has_bias ? 2 : 1);
    const opencl::ActivationArgs act(params_.activation);
    const ops::Convolution2d::Params& p = params_;
    switch (method_) {
      case Method::Pointwise: {
        const auto pixels = static_cast<cl_uint>(ys.num_elements(0, 3));
        return launch_(context, opencl::gemm_range(pixels, ys[3]), input(in, 0), input(in, 1), bias,
                       opencl::buffer_of(out[0]), pixels, ys[3], xs[3], cl_int{has_bias}, act.function, act.a, act.b);
      }
      case Method::Tiled:
        return launch_(context, cl::NDRange((ys[3] + 7) / 8, (ys[2] + 3) / 4, std::size_t{ys[0]} * ys[1]), input(in, 0),
                       input(in, 1), bias, opencl::buffer_of(out[0]), xs[1], xs[2], xs[3], ys[1], ys[2], ys[3], ws[1],
                       ws[2], p.stride.height, p.stride.width, p.dilation.height, p.dilation.width, p.padding.top,
                       p.padding.left, cl_int{has_bias}, act.function, act.a, act.b);
      case Method::Direct: break;
    }
    return launch_(context, cl::NDRange(ys[3], ys[2], std::size_t{ys[0]} * ys[1]), input(in, 0), input(in, 1), bias,
                   opencl::buffer_of(out[0]), xs[1], xs[2], xs[3], ys[1], ws[1], ws[2], ws[3], ws[0] / p.groups,
                   p.stride.height, p.stride.width, p.dilation.height, p.dilation.width, p.padding.top, p.padding.left,
                   cl_int{has_bias}, act.function, act.a, act.b);
  }

 private:
  Method method_ = Method::Direct;
};

template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::Convolution2d, ClBackend, T>
    : opencl::Int8Kernel<ops::Convolution2d, Workload<ops::Convolution2d, ClBackend, T>> {
  static constexpr std::string_view kernel_name = "int8_convolution2d";
  using opencl::Int8Kernel<ops::Convolution2d, Workload>::Int8Kernel;

  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ws = in[1].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const ops::Convolution2d::Params& p = this->params_;
    return this->launch(context, cl::NDRange(ys[3], ys[2], std::size_t{ys[0]} * ys[1]), in, out, xs[1], xs[2], xs[3],
                        ys[1], ws[1], ws[2], ws[3], ws[0] / p.groups, p.stride.height, p.stride.width,
                        p.dilation.height, p.dilation.width, p.padding.top, p.padding.left);
  }
};

}  // namespace kiln
