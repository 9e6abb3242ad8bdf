// SPDX-License-Identifier: Apache-2.0
// Reference Comparison: each output element from its broadcast operands.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <DataType T>
requires(ops::Comparison::compares(T)) struct Workload<ops::Comparison, RefBackend, T> {
  explicit Workload(const WorkloadInfo<ops::Comparison>& info) : operation(info.params.operation) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const auto* a = static_cast<const element_type_t<T>*>(in[0].data);
    const auto* b = static_cast<const element_type_t<T>*>(in[1].data);
    auto* y = static_cast<std::uint8_t*>(out[0].data);
    ref::for_each_broadcast<2>(in, out[0].info.shape, [&](std::uint64_t i, const auto& at) {
      y[i] = ops::Comparison::holds(operation, a[at[0]], b[at[1]]) ? 1 : 0;
    });
  }

  ops::ComparisonOperation operation;
};

}  // namespace kiln
