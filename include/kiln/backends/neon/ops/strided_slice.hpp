// SPDX-License-Identifier: Apache-2.0
// Neon StridedSlice: the window resolved at load into one StridedCopy (negative steps included).
#pragma once

#include "kiln/backends/neon/strided_copy.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Moves bytes, so one class serves every data type.
class StridedSliceBytes {
 public:
  explicit StridedSliceBytes(const WorkloadInfo<ops::StridedSlice>& info) {
    const TensorShape& xs = info.inputs[0].shape;
    const auto window = *ops::StridedSlice::resolve(info.params, xs);
    const auto x_strides = element_strides(xs);
    const TensorShape box(std::span<const std::uint32_t>(window.count, xs.rank()));
    SignedStrides from{};
    for (std::size_t d = 0; d < xs.rank(); ++d) {
      from[d] = window.step[d] * x_strides[d];
      start_ += window.start[d] * x_strides[d];
    }
    element_ = static_cast<std::int64_t>(size_of(info.outputs[0].type));
    copy_ = StridedCopy(box.dims(), from, element_strides(box), size_of(info.outputs[0].type));
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    copy_.run(context, bytes(in[0]) + start_ * element_, bytes(out[0]));
  }

 private:
  StridedCopy copy_;
  std::int64_t start_ = 0, element_ = 4;
};

template <DataType T>
struct Kernel<ops::StridedSlice, T> : StridedSliceBytes {
  using StridedSliceBytes::StridedSliceBytes;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
