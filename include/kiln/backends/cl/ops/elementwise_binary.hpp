// SPDX-License-Identifier: Apache-2.0
// ClBackend ElementwiseBinary: numpy broadcasting, in Float32 and Float16 and, for Add, Sub and Mul, in int8
// (kernels/elementwise.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"
#include "kiln/backends/cl/ops/quantize.hpp"
#include "kiln/backends/quantized_elementwise.hpp"

namespace kiln {

namespace opencl {

/// kernels/elementwise.cl's broadcasting arguments: the output's dimensions and each input's
/// element strides, 0 along the dimensions it is broadcast in.
struct BroadcastArgs {
  cl_uint8 dims{};
  cl_int8 a_strides{}, b_strides{};
  static BroadcastArgs of(const WorkloadInfo<ops::ElementwiseBinary>& info) {
    const std::size_t rank = info.outputs[0].rank();
    return {dims6(info.outputs[0].shape), strides6(ref::broadcast_strides_of(info.inputs[0].shape, rank), rank),
            strides6(ref::broadcast_strides_of(info.inputs[1].shape, rank), rank)};
  }
};

}  // namespace opencl

template <DataType F>
requires(opencl::is_float_kernel_type(F)) struct Workload<ops::ElementwiseBinary, ClBackend, F>
    : opencl::FloatKernel<ops::ElementwiseBinary> {
  static Expected<Workload> create(const WorkloadInfo<ops::ElementwiseBinary>& info, opencl::Context& context) {
    const bool same_shape =
        info.inputs[0].shape == info.outputs[0].shape && info.inputs[1].shape == info.outputs[0].shape;
    auto made = make<Workload>(info, context, "elementwise", same_shape ? "binary_same_shape" : "binary_broadcast");
    if (!made) return made;
    made->same_shape_ = same_shape;
    made->broadcast_ = opencl::BroadcastArgs::of(info);
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const opencl::ActivationArgs act(params_.activation);
    const auto op = static_cast<cl_int>(params_.operation);
    if (same_shape_)
      return launch_(context, opencl::elements_of(out[0].info), input(in, 0), input(in, 1), opencl::buffer_of(out[0]),
                     op, act.function, act.a, act.b);
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), input(in, 1), opencl::buffer_of(out[0]),
                   broadcast_.dims, broadcast_.a_strides, broadcast_.b_strides, op, act.function, act.a, act.b);
  }

  using FloatKernel::FloatKernel;

 private:
  bool same_shape_ = false;
  opencl::BroadcastArgs broadcast_;
};

template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::ElementwiseBinary, ClBackend, T>
    : opencl::Kernel<ops::ElementwiseBinary> {
  using Kernel::Kernel;

  static Status is_supported(const WorkloadInfo<ops::ElementwiseBinary>& info) {
    if (auto s = quantized::check_elementwise(info); !s) return s;
    return opencl::require_int_indices(info);
  }
  static Expected<Workload> create(const WorkloadInfo<ops::ElementwiseBinary>& info, opencl::Context& context) {
    auto stage = quantized::ElementwiseStage::make(info);
    if (!stage) return stage.status();
    auto made = make<Workload>(info, context, "elementwise", "int8_binary",
                               detail::str_cat("-DQUANTIZED=", opencl::quantized_type(T)));
    if (!made) return made;
    made->broadcast_ = opencl::BroadcastArgs::of(info);
    made->stage_ = *stage;
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const quantized::ElementwiseStage& s = stage_;
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), input(in, 1), opencl::buffer_of(out[0]),
                   broadcast_.dims, broadcast_.a_strides, broadcast_.b_strides, static_cast<cl_int>(s.operation()),
                   s.a_zero(), s.b_zero(), opencl::stage_of(s.a_multiplier()), opencl::stage_of(s.b_multiplier()),
                   opencl::stage_of(s.output_multiplier()), s.y_zero(), s.range().lo, s.range().hi);
  }

 private:
  opencl::BroadcastArgs broadcast_;
  quantized::ElementwiseStage stage_;
};

}  // namespace kiln
