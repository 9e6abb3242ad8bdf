// SPDX-License-Identifier: Apache-2.0
// ClBackend Pooling2d: max and average, padding, ceil mode, global, in Float32, Float16 and int8
// (kernels/pooling.cl); dilated windows are RefBackend's.
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"
#include "kiln/backends/cl/ops/quantize.hpp"
#include "kiln/backends/quantized_pooling.hpp"

namespace kiln {

namespace opencl {

/// kernels/pooling.cl walks dense windows; dilated ones run on RefBackend.
inline Status require_dense_window(const WorkloadInfo<ops::Pooling2d>& info) {
  if (info.params.dilation == ops::Size2d{1, 1} || info.params.global) return Status::ok();
  return Status::error(ErrorCode::Unsupported, "pools dense windows; dilation ", info.params.dilation.height, " x ",
                       info.params.dilation.width, " runs on RefBackend");
}

}  // namespace opencl

template <DataType F>
requires(opencl::is_float_kernel_type(F)) struct Workload<ops::Pooling2d, ClBackend, F>
    : opencl::FloatKernel<ops::Pooling2d> {
  using FloatKernel::FloatKernel;

  static Status is_supported(const WorkloadInfo<ops::Pooling2d>& info) {
    if (auto s = opencl::require_dense_window(info); !s) return s;
    return FloatKernel::is_supported(info);
  }
  static Expected<Workload> create(const WorkloadInfo<ops::Pooling2d>& info, opencl::Context& context) {
    auto made = make<Workload>(info, context, "pooling", "pooling2d");
    if (made) made->params_ = ops::Pooling2d::resolved(info.params, info.inputs[0].shape);
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const ops::Pooling2d::Params& p = params_;
    return launch_(context, cl::NDRange(ys[3], ys[2], std::size_t{ys[0]} * ys[1]), input(in, 0),
                   opencl::buffer_of(out[0]), xs[1], xs[2], ys[1], p.window.height, p.window.width, p.stride.height,
                   p.stride.width, p.padding.top, p.padding.bottom, p.padding.left, p.padding.right,
                   cl_int{p.kind == ops::PoolingKind::Average}, cl_int{p.count_include_pad});
  }
};

template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::Pooling2d, ClBackend, T>
    : opencl::Kernel<ops::Pooling2d> {
  using Kernel::Kernel;

  static Status is_supported(const WorkloadInfo<ops::Pooling2d>& info) {
    if (auto s = opencl::require_dense_window(info); !s) return s;
    if (auto s = quantized::check_pooling(info); !s) return s;
    return opencl::require_int_indices(info);
  }
  /// The output stage of every divisor on the device, (multiplier, right shift) each.
  static Expected<Workload> create(const WorkloadInfo<ops::Pooling2d>& info, opencl::Context& context) {
    auto stage = quantized::PoolingStage::make(info);
    if (!stage) return stage.status();
    auto made = make<Workload>(info, context, "pooling", "int8_pooling2d",
                               detail::str_cat("-DQUANTIZED=", opencl::quantized_type(T)));
    if (!made) return made;
    auto uploaded = opencl::upload_output_stages(context, stage->multipliers());
    if (!uploaded) return uploaded.status();
    made->stages_ = std::move(*uploaded);
    made->params_ = ops::Pooling2d::resolved(info.params, info.inputs[0].shape);
    made->first_divisor_ = static_cast<cl_uint>(stage->divisors().first);
    made->y_zero_ = stage->zero_point();
    made->range_ = {stage->lo(), stage->hi()};
    made->rounded_average_ = stage->rounded_average();
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const ops::Pooling2d::Params& p = params_;
    return launch_(context, cl::NDRange(ys[3], ys[2], std::size_t{ys[0]} * ys[1]), input(in, 0),
                   opencl::buffer_of(out[0]), stages_, first_divisor_, xs[1], xs[2], ys[1], p.window.height,
                   p.window.width, p.stride.height, p.stride.width, p.padding.top, p.padding.bottom, p.padding.left,
                   p.padding.right,
                   cl_int{p.kind != ops::PoolingKind::Average ? 0
                          : rounded_average_                  ? 2
                                                              : 1},
                   cl_int{p.count_include_pad}, in[0].info.quantization.offset, y_zero_, range_.lo, range_.hi);
  }

 private:
  cl::Buffer stages_;  // the multipliers live here; the scalars of the stage below
  cl_uint first_divisor_ = 1;
  cl_int y_zero_ = 0;
  quantized::OutputRange range_;
  bool rounded_average_ = false;
};

}  // namespace kiln
