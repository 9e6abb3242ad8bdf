// SPDX-License-Identifier: Apache-2.0
// ClBackend ElementwiseBinary: numpy broadcasting (kernels/elementwise.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::ElementwiseBinary, ClBackend, DataType::Float32> : opencl::Float32Kernel<ops::ElementwiseBinary> {
  static Expected<Workload> create(const WorkloadInfo<ops::ElementwiseBinary>& info, opencl::Context& context) {
    const bool same_shape =
        info.inputs[0].shape == info.outputs[0].shape && info.inputs[1].shape == info.outputs[0].shape;
    auto made = make<Workload>(info, context, "elementwise", same_shape ? "binary_same_shape" : "binary_broadcast");
    if (!made) return made;
    Workload& w = *made;
    w.same_shape_ = same_shape;
    const std::size_t rank = info.outputs[0].rank();
    w.dims_ = opencl::dims6(info.outputs[0].shape);
    w.a_strides_ = opencl::strides6(ref::broadcast_strides_of(info.inputs[0].shape, rank), rank);
    w.b_strides_ = opencl::strides6(ref::broadcast_strides_of(info.inputs[1].shape, rank), rank);
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const opencl::ActivationArgs act(params_.activation);
    const auto op = static_cast<cl_int>(params_.operation);
    if (same_shape_)
      return launch_(context, opencl::elements_of(out[0].info), input(in, 0), input(in, 1), opencl::buffer_of(out[0]),
                     op, act.function, act.a, act.b);
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), input(in, 1), opencl::buffer_of(out[0]),
                   dims_, a_strides_, b_strides_, op, act.function, act.a, act.b);
  }

  using Float32Kernel::Float32Kernel;

 private:
  bool same_shape_ = false;
  cl_uint8 dims_{};
  cl_int8 a_strides_{}, b_strides_{};
};

}  // namespace kiln
