// SPDX-License-Identifier: Apache-2.0
// ClBackend Reshape: a device-side copy of the bytes, any data type.
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

namespace opencl {

/// Moves bytes, so one class serves every data type.
class ReshapeBytes : public DataMovementKernel<ops::Reshape> {
 public:
  using DataMovementKernel::DataMovementKernel;

  static Expected<ReshapeBytes> create(const WorkloadInfo<ops::Reshape>& info, Context& context) {
    ReshapeBytes w(info);
    if (auto s = w.upload_constants(info, context); !s) return s;
    return w;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const std::size_t bytes = in[0].info.num_bytes();
    if (bytes == 0) return Status::ok();
    const cl_int err = clEnqueueCopyBuffer(context.queue()(), input(in, 0), opencl::buffer_of(out[0]), 0, 0, bytes, 0,
                                           nullptr, opencl::recorded_event());
    return err == CL_SUCCESS ? Status::ok() : opencl::cl_error("clEnqueueCopyBuffer", err);
  }
};

}  // namespace opencl

template <DataType T>
struct Workload<ops::Reshape, ClBackend, T> : opencl::ReshapeBytes {
  using ReshapeBytes::ReshapeBytes;
};

}  // namespace kiln
