// SPDX-License-Identifier: Apache-2.0
// Neon Pad: the input copied into the middle, then the borders of one dimension at a time, innermost
// first, each border slab filled or copied whole from the slab it mirrors (every mode, each element
// once). Float32, Float16 and 8-bit quantised elements alike: it moves bytes.
#pragma once

#include <algorithm>

#include "kiln/backends/moved_elements.hpp"
#include "kiln/backends/neon/strided_copy.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

class PadBytes {
 public:
  explicit PadBytes(const WorkloadInfo<ops::Pad>& info)
      : params_(info.params),
        x_(info.inputs[0].shape),
        y_(info.outputs[0].shape),
        y_strides_(element_strides(y_)),
        element_(size_of(info.outputs[0].type)),
        fill_(pad_element(info)) {
    const std::size_t rank = x_.rank();
    for (std::size_t d = 0; d < rank; ++d) interior_offset_ += ops::Pad::before_of(params_, d) * y_strides_[d];
    middle_ = StridedCopy(x_.dims(), element_strides(x_), y_strides_, element_);
  }
  static Status is_supported(const WorkloadInfo<ops::Pad>& info) { return check_pad_types(info); }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    std::byte* y = bytes(out[0]);
    middle_.run(context, bytes(in[0]), y + interior_offset_ * static_cast<std::int64_t>(element_));
    for (std::size_t d = x_.rank(); d-- > 0;) fill_borders(context, y, d);
  }

 private:
  // `count` elements of the constant at `target`.
  void fill(std::byte* target, std::uint64_t count) const {
    if (element_ == 1) {
      std::memset(target, std::to_integer<int>(fill_[0]), count);
    } else {
      for (std::uint64_t i = 0; i < count; ++i) std::memcpy(target + i * element_, fill_.data(), element_);
    }
  }

  // Along dimension d, for every slab position outside the input: the slab of all inner dimensions
  // (contiguous, complete because they were done first) at every interior position of the outer ones.
  void fill_borders(Context& context, std::byte* y, std::size_t d) const {
    const std::int64_t before = ops::Pad::before_of(params_, d), dim = x_[d];
    if (before == 0 && ops::Pad::after_of(params_, d) == 0) return;
    const std::uint64_t slab = static_cast<std::uint64_t>(y_strides_[d]);
    const std::uint64_t outer = x_.num_elements(0, d);
    const std::uint64_t borders = y_[d] - static_cast<std::uint64_t>(dim);
    const auto element = static_cast<std::int64_t>(element_);
    context.parallel_for(
        outer,
        [&](std::size_t o) {
          std::int64_t base = 0;  // offset of interior outer position o, coordinate 0 along d
          for (std::size_t e = d, rest = o; e-- > 0; rest /= x_[e])
            base += (ops::Pad::before_of(params_, e) + static_cast<std::int64_t>(rest % x_[e])) * y_strides_[e];
          for (std::int64_t p = 0; p < y_[d]; ++p) {
            if (p == before) p += dim;  // skip the interior
            if (p >= y_[d]) break;
            std::byte* target = y + (base + p * y_strides_[d]) * element;
            const std::int64_t source = ops::Pad::source_index(params_.mode, p, before, dim);
            if (source < 0)
              fill(target, slab);
            else
              std::memcpy(target, y + (base + (before + source) * y_strides_[d]) * element, slab * element_);
          }
        },
        borders * slab);
  }

  ops::Pad::Params params_;
  TensorShape x_, y_;
  SignedStrides y_strides_;
  std::size_t element_;
  std::array<std::byte, 4> fill_;
  std::int64_t interior_offset_ = 0;
  StridedCopy middle_;
};

template <DataType T>
struct Kernel<ops::Pad, T> : PadBytes {
  using PadBytes::PadBytes;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
