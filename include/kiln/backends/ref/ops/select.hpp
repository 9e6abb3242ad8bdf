// SPDX-License-Identifier: Apache-2.0
// Reference Select: each output element copied from x or other, as its broadcast condition says.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

/// Moves elements, so one class serves every data type.
template <DataType T>
struct Workload<ops::Select, RefBackend, T> {
  explicit Workload(const WorkloadInfo<ops::Select>&) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const auto* condition = static_cast<const std::uint8_t*>(in[0].data);
    const std::size_t element = size_of(out[0].info.type);
    ref::for_each_broadcast<3>(in, out[0].info.shape, [&](std::uint64_t i, const auto& at) {
      const bool first = condition[at[0]] != 0;
      std::memcpy(ref::bytes(out[0]) + i * element, ref::bytes(in[first ? 1 : 2]) + at[first ? 1 : 2] * element,
                  element);
    });
  }
};

}  // namespace kiln
