// SPDX-License-Identifier: Apache-2.0
// What ClBackend's int8 layers with weights share (kernels/int8_layers.cl): the checks of decision
// 0014, the output stage of every channel on the device, and the launch arguments after the tensors.
#pragma once

#include <vector>

#include "kiln/backends/cl/ops/quantize.hpp"
#include "kiln/backends/quantized_layer.hpp"

namespace kiln::opencl {

/// Base of ClBackend's int8 Convolution2d, DepthwiseConvolution2d and FullyConnected (Derived):
/// weights and bias as they are (constants uploaded once, or tensors fed at run time), each output
/// channel's (multiplier, right shift) uploaded at load, and kernel Derived::kernel_name built for
/// the activations' type.
template <class Op, class Derived>
class Int8Kernel : public Kernel<Op> {
 public:
  static Status is_supported(const WorkloadInfo<Op>& info) {
    if (auto s = quantized::check_layer(info); !s) return s;
    return require_int_indices(info);
  }
  static Expected<Derived> create(const WorkloadInfo<Op>& info, Context& context) {
    auto stage = quantized::OutputStage::make(info);
    if (!stage) return stage.status();
    auto made =
        Kernel<Op>::template make<Derived>(info, context, "int8_layers", Derived::kernel_name,
                                           detail::str_cat("-DQUANTIZED=", quantized_type(info.inputs[0].type)));
    if (!made) return made;
    std::vector<Requantization> per_channel(info.outputs[0].shape.dim_from_end(0));
    for (std::size_t c = 0; c < per_channel.size(); ++c) per_channel[c] = stage->multiplier(c);
    auto uploaded = upload_output_stages(context, per_channel);
    if (!uploaded) return uploaded.status();
    made->stages_ = std::move(*uploaded);
    made->x_zero_ = info.inputs[0].quantization.offset;
    made->y_zero_ = stage->zero_point();
    made->range_ = {stage->lo(), stage->hi()};
    return made;
  }

  using Kernel<Op>::Kernel;

 protected:
  /// Launches the kernel over `global` with the tensors (x, w, bias, stages, y), then `shape`
  /// (the kernel's own arguments), then has_bias and the output stage's scalars.
  template <class... Shape>
  Status launch(Context& context, const cl::NDRange& global, std::span<const ConstTensor> in,
                std::span<const Tensor> out, const Shape&... shape) const {
    const bool has_bias = in.size() > 2;
    return this->launch_(context, global, this->input(in, 0), this->input(in, 1), this->input(in, has_bias ? 2 : 1),
                         stages_, buffer_of(out[0]), shape..., cl_int{has_bias}, x_zero_, y_zero_, range_.lo,
                         range_.hi);
  }

 private:
  cl::Buffer stages_;  // the multipliers live here; the scalars of the stage below
  cl_int x_zero_ = 0, y_zero_ = 0;
  quantized::OutputRange range_;
};

}  // namespace kiln::opencl
