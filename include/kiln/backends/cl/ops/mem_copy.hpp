// SPDX-License-Identifier: Apache-2.0
// ClBackend MemCopy: host memory to and from the device. Writes are enqueued; reads wait, and are the
// one wait of an inference whose result comes back to the host.
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

namespace opencl {

/// Moves bytes, so one class serves every data type.
class MemCopyBytes {
 public:
  static Status is_supported(const WorkloadInfo<ops::MemCopy>& info) {
    if (info.params.direction == ops::CopyDirection::HostToHost)
      return Status::error(ErrorCode::Unsupported, "copies to and from its device only");
    return Status::ok();
  }
  static Expected<MemCopyBytes> create(const WorkloadInfo<ops::MemCopy>& info, Context& context) {
    if (auto status = context.ready(); !status) return status;
    return MemCopyBytes(info.params.direction);
  }

  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const std::size_t bytes = in[0].info.num_bytes();
    if (bytes == 0) return Status::ok();
    // The source of a write stays untouched until the inference ends (arena_tensors keeps it
    // alive), so the write need not be waited for.
    if (direction_ == ops::CopyDirection::HostToDevice) {
      const cl_int err = clEnqueueWriteBuffer(context.queue()(), opencl::buffer_of(out[0]), CL_FALSE, 0, bytes,
                                              in[0].data, 0, nullptr, opencl::recorded_event());
      return err == CL_SUCCESS ? Status::ok() : opencl::cl_error("clEnqueueWriteBuffer", err);
    }
    const cl_int err = clEnqueueReadBuffer(context.queue()(), opencl::buffer_of(in[0]), CL_TRUE, 0, bytes, out[0].data,
                                           0, nullptr, opencl::recorded_event());
    return err == CL_SUCCESS ? Status::ok() : opencl::cl_error("clEnqueueReadBuffer", err);
  }

 private:
  explicit MemCopyBytes(ops::CopyDirection direction) : direction_(direction) {}
  ops::CopyDirection direction_;
};

}  // namespace opencl

template <DataType T>
struct Workload<ops::MemCopy, ClBackend, T> : opencl::MemCopyBytes {
  using MemCopyBytes::MemCopyBytes;
};

}  // namespace kiln
