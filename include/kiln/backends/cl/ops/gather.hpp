// SPDX-License-Identifier: Apache-2.0
// ClBackend Gather: constant indices, checked at load; any data type (kernels/data_movement.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

namespace opencl {

/// Moves bytes, so one class serves every data type.
class GatherBytes : public DataMovementKernel<ops::Gather> {
 public:
  using DataMovementKernel::DataMovementKernel;

  /// The device cannot report a bad index without a wait, so ClBackend gathers only with indices
  /// known at load, which it checks then; other layers go to the next backend.
  static Status is_supported(const WorkloadInfo<ops::Gather>& info) {
    if (info.constants[1] == nullptr)
      return Status::error(ErrorCode::Unsupported, "gathers with constant indices only");
    return DataMovementKernel::is_supported(info);
  }
  static Expected<GatherBytes> create(const WorkloadInfo<ops::Gather>& info, Context& context) {
    const TensorShape& xs = info.inputs[0].shape;
    const std::size_t axis = *detail::normalize_axis(info.params.axis, xs.rank());
    const auto dim = static_cast<std::int64_t>(xs[axis]);
    const auto* indices = static_cast<const std::int32_t*>(info.constants[1]);
    for (std::uint64_t j = 0; j < info.inputs[1].num_elements(); ++j)
      if (indices[j] < -dim || indices[j] >= dim)
        return Status::error(ErrorCode::InvalidArgument, "Gather index ", indices[j], " at position ", j,
                             " is out of range for axis ", axis, " of size ", dim);
    auto made =
        make<GatherBytes>(info, context, "data_movement", "gather", opencl::element_option(info.inputs[0].type));
    if (made) made->axis_ = axis;
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const cl::NDRange global(xs.num_elements(axis_ + 1, xs.rank()), in[1].info.num_elements(),
                             xs.num_elements(0, axis_));
    return launch_(context, global, input(in, 0), input(in, 1), opencl::buffer_of(out[0]), cl_uint{xs[axis_]});
  }

 private:
  std::size_t axis_ = 0;
};

}  // namespace opencl

template <DataType T>
struct Workload<ops::Gather, ClBackend, T> : opencl::GatherBytes {
  using GatherBytes::GatherBytes;
};

}  // namespace kiln
