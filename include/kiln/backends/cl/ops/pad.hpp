// SPDX-License-Identifier: Apache-2.0
// ClBackend Pad: constant, reflect, symmetric and edge modes (kernels/data_movement.cl); Float32, Float16 and
// 8-bit quantised elements alike, as bytes.
#pragma once

#include <cstring>

#include "kiln/backends/cl/cl_kernel.hpp"
#include "kiln/backends/moved_elements.hpp"

namespace kiln {

namespace opencl {

class PadBytes : public Kernel<ops::Pad> {
 public:
  using Kernel::Kernel;
  static Status is_supported(const WorkloadInfo<ops::Pad>& info) { return check_pad_types(info); }

  static Expected<PadBytes> create(const WorkloadInfo<ops::Pad>& info, Context& context) {
    auto made = make<PadBytes>(info, context, "data_movement", "pad", element_option(info.inputs[0].type));
    if (!made) return made;
    const TensorShape& xs = info.inputs[0].shape;
    std::array<std::int64_t, TensorShape::max_rank> before{};
    for (std::size_t d = 0; d < xs.rank(); ++d) before[d] = ops::Pad::before_of(info.params, d);
    made->in_dims_ = dims6(xs);
    made->out_dims_ = dims6(info.outputs[0].shape);
    made->before_ = strides6(before, xs.rank());
    made->x_strides_ = strides6(ref::strides_of(xs), xs.rank());
    // The kernel takes the element as a uint and narrows it to ELEMENT: the float's bits, the half's, or the byte.
    const auto element = pad_element(info);
    if (size_of(info.outputs[0].type) == 1)
      made->fill_ = std::to_integer<cl_uint>(element[0]);
    else
      std::memcpy(&made->fill_, element.data(), sizeof made->fill_);
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    return launch_(context, elements_of(out[0].info), input(in, 0), buffer_of(out[0]), in_dims_, out_dims_, before_,
                   x_strides_, static_cast<cl_int>(params_.mode), fill_);
  }

 private:
  cl_uint8 in_dims_{}, out_dims_{};
  cl_int8 before_{}, x_strides_{};
  cl_uint fill_ = 0;
};

}  // namespace opencl

template <DataType T>
struct Workload<ops::Pad, ClBackend, T> : opencl::PadBytes {
  using PadBytes::PadBytes;
};

}  // namespace kiln
