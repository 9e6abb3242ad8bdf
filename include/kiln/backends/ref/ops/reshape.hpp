// SPDX-License-Identifier: Apache-2.0
// Reference Reshape: the bytes are unchanged; only the shape differs.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

namespace ref {

/// Moves bytes, so one class serves every data type.
class ReshapeBytes : public DataMovementKernel<ops::Reshape> {
 public:
  using DataMovementKernel::DataMovementKernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context&) const {
    if (in[0].data != out[0].data && in[0].info.num_bytes() != 0)
      std::memmove(out[0].data, in[0].data, in[0].info.num_bytes());
  }
};

}  // namespace ref

template <DataType T>
struct Workload<ops::Reshape, RefBackend, T> : ref::ReshapeBytes {
  using ReshapeBytes::ReshapeBytes;
};

}  // namespace kiln
