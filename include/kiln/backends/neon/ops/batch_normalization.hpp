// SPDX-License-Identifier: Apache-2.0
// Neon BatchNormalization: one multiply-add per element with per-channel scale and shift made at load.
#pragma once

#include <cmath>
#include <vector>

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Deviation from Ref: scale = gamma / sqrt(variance + epsilon) and shift = beta - mean * scale are
/// folded once, so results differ from Ref's formula by rounding. Needs constant statistics.
template <>
struct Kernel<ops::BatchNormalization, DataType::Float32> : Float32Kernel<ops::BatchNormalization> {
  static constexpr std::size_t inputs_read_at_run = 1;  // the constants after it are prepared at load
  static Status is_supported(const WorkloadInfo<ops::BatchNormalization>& info) {
    return require_constants_of(info, DataType::Float32, inputs_read_at_run);
  }

  explicit Kernel(const WorkloadInfo<ops::BatchNormalization>& info) : Float32Kernel(info) {
    const std::uint32_t channels = info.inputs[0].shape.dim_from_end(0);
    auto stat = [&](std::size_t i) { return static_cast<const float*>(info.constants[i]); };
    for (std::uint32_t c = 0; c < channels; ++c) {
      const float s = stat(4)[c] / std::sqrt(stat(2)[c] + params_.epsilon);
      scale_.push_back(s);
      shift_.push_back(stat(3)[c] - stat(1)[c] * s);
    }
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const std::size_t channels = scale_.size();
    if (channels == 0) return;
    const float* x = floats(in[0]);
    float* y = floats(out[0]);
    const std::size_t rows = in[0].info.num_elements() / channels;
    parallel_chunks(
        context, rows,
        [&](std::size_t first, std::size_t last) {
          for (std::size_t r = first; r < last; ++r) scale_shift(x + r * channels, y + r * channels);
        },
        std::max<std::size_t>(1, stream_chunk / channels), channels);
  }

 private:
  void scale_shift(const float* x, float* y) const {
    const std::size_t channels = scale_.size();
    std::size_t c = 0;
    for (; c + lanes <= channels; c += lanes)
      xsimd::fma(Vec::load_unaligned(x + c), Vec::load_unaligned(&scale_[c]), Vec::load_unaligned(&shift_[c]))
          .store_unaligned(y + c);
    if (c < channels) {
      const std::size_t n = channels - c;
      store_tail(y + c, xsimd::fma(load_tail(x + c, n), load_tail(&scale_[c], n), load_tail(&shift_[c], n)), n);
    }
  }

  std::vector<float> scale_, shift_;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
