// SPDX-License-Identifier: Apache-2.0
// Reference Comparison: each output element from its broadcast operands.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <DataType T>
requires(ops::Comparison::compares(T)) struct Workload<ops::Comparison, RefBackend, T> {
  explicit Workload(const WorkloadInfo<ops::Comparison>& info) : operation(info.params.operation) {}

  template <class E>
  static bool compare(ops::ComparisonOperation op, E a, E b) {
    using O = ops::ComparisonOperation;
    switch (op) {
      case O::Equal: return a == b;
      case O::NotEqual: return a != b;
      case O::Less: return a < b;
      case O::LessOrEqual: return a <= b;
      case O::Greater: return a > b;
      case O::GreaterOrEqual: return a >= b;
    }
    return false;
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const auto* a = static_cast<const element_type_t<T>*>(in[0].data);
    const auto* b = static_cast<const element_type_t<T>*>(in[1].data);
    auto* y = static_cast<std::uint8_t*>(out[0].data);
    ref::for_each_broadcast<2>(in, out[0].info.shape, [&](std::uint64_t i, const auto& at) {
      y[i] = compare(operation, a[at[0]], b[at[1]]) ? 1 : 0;
    });
  }

  ops::ComparisonOperation operation;
};

}  // namespace kiln
