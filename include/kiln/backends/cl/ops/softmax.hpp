// SPDX-License-Identifier: Apache-2.0
// ClBackend Softmax and log-softmax along any axis (kernels/reduction.cl), and int8 Softmax in integers.
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"
#include "kiln/backends/cl/ops/quantize.hpp"
#include "kiln/backends/quantized_softmax.hpp"

namespace kiln {

template <DataType F>
requires(opencl::is_float_kernel_type(F)) struct Workload<ops::Softmax, ClBackend, F>
    : opencl::FloatKernel<ops::Softmax> {
  using FloatKernel::FloatKernel;

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

/// int8: quantized::SoftmaxStage, RefBackend's integer rows, one work-item per row; the 256
/// exponentials uploaded at load.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::Softmax, ClBackend, T> : opencl::Kernel<ops::Softmax> {
  using Kernel::Kernel;

  static Status is_supported(const WorkloadInfo<ops::Softmax>& info) {
    if (auto s = quantized::check_softmax(info); !s) return s;
    return opencl::require_int_indices(info);
  }
  static Expected<Workload> create(const WorkloadInfo<ops::Softmax>& info, opencl::Context& context) {
    auto stage = quantized::SoftmaxStage::make(info);
    if (!stage) return stage.status();
    auto made = make<Workload>(info, context, "reduction", "int8_softmax",
                               detail::str_cat("-DQUANTIZED=", opencl::quantized_type(T)));
    if (!made) return made;
    const auto& exponentials = stage->exponentials();
    auto uploaded = context.upload(exponentials.data(), exponentials.size() * sizeof(exponentials[0]));
    if (!uploaded) return uploaded.status();
    made->exponentials_ = std::move(*uploaded);
    made->stage_ = opencl::stage_of(stage->to_output());
    made->y_zero_ = stage->zero_point();
    made->range_ = {stage->lo(), stage->hi()};
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const auto rows = quantized::SoftmaxRows::of(in[0].info.shape, params_.axis);
    if (rows.length == 0) return Status::ok();
    return launch_(context, cl::NDRange(rows.inner, rows.count / rows.inner), input(in, 0), opencl::buffer_of(out[0]),
                   exponentials_, static_cast<cl_uint>(rows.length), stage_, y_zero_, range_.lo, range_.hi);
  }

 private:
  cl::Buffer exponentials_;
  cl_int2 stage_{};
  cl_int y_zero_ = 0;
  quantized::OutputRange range_;
};

}  // namespace kiln
