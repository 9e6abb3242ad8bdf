// SPDX-License-Identifier: Apache-2.0
// ClBackend Transpose: any permutation, any data type (kernels/data_movement.cl, strided_copy).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

namespace opencl {

/// Moves bytes, so one class serves every data type.
class TransposeBytes : public DataMovementKernel<ops::Transpose> {
 public:
  using DataMovementKernel::DataMovementKernel;

  /// Output element (c0, c1, ...) reads input element with c_d at dimension permutation[d].
  static Expected<TransposeBytes> create(const WorkloadInfo<ops::Transpose>& info, Context& context) {
    auto made = make<TransposeBytes>(info, context, "data_movement", "strided_copy",
                                     opencl::element_option(info.inputs[0].type));
    if (!made) return made;
    const TensorShape& ys = info.outputs[0].shape;
    const auto permutation = ops::Transpose::resolved(info.params, ys.rank());
    const ref::Strides x_strides = ref::strides_of(info.inputs[0].shape);
    ref::Strides read{};
    for (std::size_t d = 0; d < ys.rank(); ++d) read[d] = x_strides[permutation[d]];
    made->copy_ = {opencl::dims6(ys), opencl::strides6(read, ys.rank()),
                   opencl::strides6(ref::strides_of(ys), ys.rank())};
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), opencl::buffer_of(out[0]), copy_.dims,
                   cl_int{0}, copy_.x_strides, cl_int{0}, copy_.y_strides);
  }

 private:
  opencl::StridedCopy copy_;
};

}  // namespace opencl

template <DataType T>
struct Workload<ops::Transpose, ClBackend, T> : opencl::TransposeBytes {
  using TransposeBytes::TransposeBytes;
};

}  // namespace kiln
