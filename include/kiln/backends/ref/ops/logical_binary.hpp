// SPDX-License-Identifier: Apache-2.0
// Reference LogicalBinary: each output element from its broadcast operands.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::LogicalBinary, RefBackend, DataType::Boolean> {
  explicit Workload(const WorkloadInfo<ops::LogicalBinary>& info) : operation(info.params.operation) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const auto* a = static_cast<const std::uint8_t*>(in[0].data);
    const auto* b = static_cast<const std::uint8_t*>(in[1].data);
    auto* y = static_cast<std::uint8_t*>(out[0].data);
    ref::for_each_broadcast<2>(in, out[0].info.shape, [&](std::uint64_t i, const auto& at) {
      y[i] = ops::LogicalBinary::apply(operation, a[at[0]] != 0, b[at[1]] != 0) ? 1 : 0;
    });
  }

  ops::LogicalOperation operation;
};

}  // namespace kiln
