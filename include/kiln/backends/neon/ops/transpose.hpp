// SPDX-License-Identifier: Apache-2.0
// Neon Transpose: a StridedCopy planned at load (runs of memcpy, or cache tiles when the innermost axis moves).
#pragma once

#include "kiln/backends/neon/strided_copy.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Moves bytes, so one class serves every data type.
class TransposeBytes {
 public:
  explicit TransposeBytes(const WorkloadInfo<ops::Transpose>& info) {
    const TensorShape& ys = info.outputs[0].shape;
    const auto perm = ops::Transpose::resolved(info.params, ys.rank());
    const auto x_strides = element_strides(info.inputs[0].shape);
    SignedStrides from{};
    for (std::size_t d = 0; d < ys.rank(); ++d) from[d] = x_strides[perm[d]];
    copy_ = StridedCopy(ys.dims(), from, element_strides(ys), size_of(info.outputs[0].type));
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    copy_.run(context, bytes(in[0]), bytes(out[0]));
  }

 private:
  StridedCopy copy_;
};

template <DataType T>
struct Kernel<ops::Transpose, T> : TransposeBytes {
  using TransposeBytes::TransposeBytes;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
