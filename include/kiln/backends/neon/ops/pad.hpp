// SPDX-License-Identifier: Apache-2.0
// Neon Pad: the input copied into the middle, then the borders of one dimension at a time, innermost
// first, each border slab filled or copied whole from the slab it mirrors (every mode, each element once).
#pragma once

#include <algorithm>

#include "kiln/backends/neon/strided_copy.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

template <>
struct Kernel<ops::Pad, DataType::Float32> : Float32Kernel<ops::Pad> {
  explicit Kernel(const WorkloadInfo<ops::Pad>& info)
      : Float32Kernel(info), x_(info.inputs[0].shape), y_(info.outputs[0].shape), y_strides_(element_strides(y_)) {
    const std::size_t rank = x_.rank();
    for (std::size_t d = 0; d < rank; ++d) interior_offset_ += ops::Pad::before_of(params_, d) * y_strides_[d];
    middle_ = StridedCopy(x_.dims(), element_strides(x_), y_strides_, 4);
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    float* y = floats(out[0]);
    middle_.run(context, bytes(in[0]), bytes(out[0]) + interior_offset_ * 4);
    for (std::size_t d = x_.rank(); d-- > 0;) fill_borders(context, y, d);
  }

 private:
  // Along dimension d, for every slab position outside the input: the slab of all inner dimensions
  // (contiguous, complete because they were done first) at every interior position of the outer ones.
  void fill_borders(Context& context, float* y, std::size_t d) const {
    const std::int64_t before = ops::Pad::before_of(params_, d), dim = x_[d];
    if (before == 0 && ops::Pad::after_of(params_, d) == 0) return;
    const std::uint64_t slab = static_cast<std::uint64_t>(y_strides_[d]);
    const std::uint64_t outer = x_.num_elements(0, d);
    const std::uint64_t borders = y_[d] - static_cast<std::uint64_t>(dim);
    context.parallel_for(
        outer,
        [&](std::size_t o) {
          std::int64_t base = 0;  // offset of interior outer position o, coordinate 0 along d
          for (std::size_t e = d, rest = o; e-- > 0; rest /= x_[e])
            base += (ops::Pad::before_of(params_, e) + static_cast<std::int64_t>(rest % x_[e])) * y_strides_[e];
          for (std::int64_t p = 0; p < y_[d]; ++p) {
            if (p == before) p += dim;  // skip the interior
            if (p >= y_[d]) break;
            float* target = y + base + p * y_strides_[d];
            const std::int64_t source = ops::Pad::source_index(params_.mode, p, before, dim);
            if (source < 0)
              std::fill_n(target, slab, params_.value);
            else
              std::memcpy(target, y + base + (before + source) * y_strides_[d], slab * sizeof(float));
          }
        },
        borders * slab);
  }

  TensorShape x_, y_;
  SignedStrides y_strides_;
  std::int64_t interior_offset_ = 0;
  StridedCopy middle_;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
