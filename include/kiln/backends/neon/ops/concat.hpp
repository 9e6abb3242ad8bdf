// SPDX-License-Identifier: Apache-2.0
// Neon Concat: each input copied into its slab of the output by a StridedCopy planned at load.
#pragma once

#include "kiln/backends/neon/strided_copy.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Moves bytes, so one class serves every data type.
class ConcatBytes {
 public:
  static Status is_supported(const WorkloadInfo<ops::Concat>& info) {
    return ops::Concat::check_quantization(info.inputs, info.outputs[0]);
  }
  explicit ConcatBytes(const WorkloadInfo<ops::Concat>& info)
      : pieces_(info.outputs[0].shape, info.inputs,
                *kiln::detail::normalize_axis(info.params.axis, info.outputs[0].shape.rank()), true) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    for (std::size_t i = 0; i < in.size(); ++i)
      pieces_.copies[i].run(context, bytes(in[i]), bytes(out[0]) + pieces_.offsets[i]);
  }

 private:
  AxisPieces pieces_;
};

template <DataType T>
struct Kernel<ops::Concat, T> : ConcatBytes {
  using ConcatBytes::ConcatBytes;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
