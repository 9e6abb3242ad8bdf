// SPDX-License-Identifier: Apache-2.0
// ClBackend Pooling2d: max and average, padding, ceil mode, global (kernels/pooling.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Pooling2d, ClBackend, DataType::Float32> : opencl::Float32Kernel<ops::Pooling2d> {
  using Float32Kernel::Float32Kernel;

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

}  // namespace kiln
