// SPDX-License-Identifier: Apache-2.0
// Neon Split: each output copied out of its slab of the input by a StridedCopy planned at load.
#pragma once

#include "kiln/backends/neon/strided_copy.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Moves bytes, so one class serves every data type.
class SplitBytes {
 public:
  explicit SplitBytes(const WorkloadInfo<ops::Split>& info)
      : pieces_(info.inputs[0].shape, info.outputs,
                *kiln::detail::normalize_axis(info.params.axis, info.inputs[0].shape.rank()), false) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    for (std::size_t i = 0; i < out.size(); ++i)
      pieces_.copies[i].run(context, bytes(in[0]) + pieces_.offsets[i], bytes(out[i]));
  }

 private:
  AxisPieces pieces_;
};

template <DataType T>
struct Kernel<ops::Split, T> : SplitBytes {
  using SplitBytes::SplitBytes;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
