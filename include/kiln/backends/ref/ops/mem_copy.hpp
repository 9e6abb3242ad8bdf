// SPDX-License-Identifier: Apache-2.0
// Reference MemCopy: host to host, every data type.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

namespace ref {

/// Moves bytes, so one class serves every data type.
class MemCopyBytes : public DataMovementKernel<ops::MemCopy> {
 public:
  using DataMovementKernel::DataMovementKernel;

  static Status is_supported(const WorkloadInfo<ops::MemCopy>& info) {
    if (info.params.direction != ops::CopyDirection::HostToHost)
      return Status::error(ErrorCode::Unsupported, "copies host memory only, not ",
                           ops::to_string(info.params.direction));
    return Status::ok();
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context&) const {
    if (in[0].data != out[0].data && in[0].info.num_bytes() != 0)
      std::memmove(out[0].data, in[0].data, in[0].info.num_bytes());
  }
};

}  // namespace ref

template <DataType T>
struct Workload<ops::MemCopy, RefBackend, T> : ref::MemCopyBytes {
  using MemCopyBytes::MemCopyBytes;
};

}  // namespace kiln
