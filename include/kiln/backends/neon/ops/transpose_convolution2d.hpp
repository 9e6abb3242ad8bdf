// SPDX-License-Identifier: Apache-2.0
// Neon TransposeConvolution2d: one packed GEMM gives every input pixel's contribution to every
// kernel tap (a "column" per tap and output channel), then each output row sums the columns that land on it.
#pragma once

#include <algorithm>
#include <vector>

#include "kiln/backends/neon/simd/gemm.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Deviation from Ref: weights are packed at load, so they (and the bias) must be constants; the
/// sums of overlapping taps (kernel larger than the stride) are added in another order.
template <>
struct Kernel<ops::TransposeConvolution2d, DataType::Float32> : Float32Kernel<ops::TransposeConvolution2d> {
  static constexpr std::size_t inputs_read_at_run = 1;  // the constants after it are prepared at load
  static Status is_supported(const WorkloadInfo<ops::TransposeConvolution2d>& info) {
    return require_constants_of(info, DataType::Float32, inputs_read_at_run);
  }

  explicit Kernel(const WorkloadInfo<ops::TransposeConvolution2d>& info)
      : Float32Kernel(info),
        input_(info.inputs[0].shape),
        output_(info.outputs[0].shape),
        kernel_h_(info.inputs[1].shape[1]),
        kernel_w_(info.inputs[1].shape[2]),
        weights_(tap_major(info).data(), nullptr, 1, taps() * output_[3], input_[3]) {
    if (info.inputs.size() > 2) {
      const auto* bias = static_cast<const float*>(info.constants[2]);
      bias_.assign(bias, bias + output_[3]);
    } else {
      bias_.assign(output_[3], 0.0f);
    }
  }

  /// The columns of a band of input rows: as many rows as keep it near 256 KiB (at least one).
  ScratchSize scratch(const Context&) const {
    return {band_rows() * input_[2] * columns() * sizeof(float), alignof(Vec)};
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context,
           std::span<std::byte> scratch) const {
    float* band = reinterpret_cast<float*>(scratch.data());
    const std::size_t out_row = std::size_t{output_[2]} * output_[3];
    for (std::uint32_t n = 0; n < input_[0]; ++n) {
      const float* x = floats(in[0]) + std::size_t{n} * input_[1] * input_[2] * input_[3];
      float* y = floats(out[0]) + std::size_t{n} * output_[1] * out_row;
      context.parallel_for(
          output_[1], [&](std::size_t oy) { fill_bias(y + oy * out_row); }, out_row);
      for (std::size_t first = 0; first < input_[1]; first += band_rows()) {
        const std::size_t rows = std::min<std::size_t>(band_rows(), input_[1] - first);
        gemm(context, DenseRows{x + first * input_[2] * input_[3], input_[3]}, rows * input_[2], weights_, band,
             columns(), {}, {});
        // Output rows [top, bottom] receive from this band; each task owns one of them.
        const std::int64_t top =
            std::max<std::int64_t>(0, std::int64_t(first * params_.stride.height) - params_.padding.top);
        const std::int64_t bottom =
            std::min<std::int64_t>(output_[1] - 1, std::int64_t((first + rows - 1) * params_.stride.height) +
                                                       kernel_h_ - 1 - params_.padding.top);
        if (bottom < top) continue;
        context.parallel_for(
            static_cast<std::size_t>(bottom - top + 1),
            [&](std::size_t task) { add_band(band, first, rows, top + static_cast<std::int64_t>(task), y); },
            input_[2] * columns());
      }
    }
  }

 private:
  std::size_t taps() const { return std::size_t{kernel_h_} * kernel_w_; }
  std::size_t columns() const { return taps() * output_[3]; }
  std::size_t band_rows() const {
    const std::size_t per_row = std::max<std::size_t>(1, std::size_t{input_[2]} * columns());
    return std::clamp<std::size_t>((64u << 10) / per_row, 1, input_[1]);
  }

  /// OHWI weights as [KH, KW, O, C]: GEMM column (ky * KW + kx) * O + o is tap (ky, kx) of output channel o.
  static std::vector<float> tap_major(const WorkloadInfo<ops::TransposeConvolution2d>& info) {
    const TensorShape& ws = info.inputs[1].shape;
    const auto* w = static_cast<const float*>(info.constants[1]);
    std::vector<float> out(ws.num_elements());
    for (std::uint32_t o = 0; o < ws[0]; ++o)
      for (std::uint32_t t = 0; t < ws[1] * ws[2]; ++t)
        std::copy_n(w + (std::size_t{o} * ws[1] * ws[2] + t) * ws[3], ws[3],
                    out.data() + (std::size_t{t} * ws[0] + o) * ws[3]);
    return out;
  }
  void fill_bias(float* row) const {
    for (std::uint32_t ox = 0; ox < output_[2]; ++ox) std::copy_n(bias_.data(), output_[3], row + ox * output_[3]);
  }

  /// Output row oy += every column of the band that lands on it.
  void add_band(const float* band, std::size_t first, std::size_t rows, std::int64_t oy, float* y) const {
    const std::size_t channels = output_[3];
    float* out_row = y + static_cast<std::size_t>(oy) * output_[2] * channels;
    for (std::uint32_t ky = 0; ky < kernel_h_; ++ky) {
      const std::int64_t from_input = oy + params_.padding.top - ky;
      if (from_input < 0 || from_input % params_.stride.height != 0) continue;
      const std::size_t iy = static_cast<std::size_t>(from_input / params_.stride.height);
      if (iy < first || iy >= first + rows) continue;
      const float* band_row = band + (iy - first) * input_[2] * columns();
      for (std::uint32_t ix = 0; ix < input_[2]; ++ix)
        for (std::uint32_t kx = 0; kx < kernel_w_; ++kx) {
          const std::int64_t ox = std::int64_t{ix} * params_.stride.width + kx - params_.padding.left;
          if (ox < 0 || ox >= output_[2]) continue;
          add_into(band_row + ix * columns() + (std::size_t{ky} * kernel_w_ + kx) * channels,
                   out_row + static_cast<std::size_t>(ox) * channels, channels);
        }
    }
  }

  static void add_into(const float* x, float* y, std::size_t n) {
    std::size_t i = 0;
    for (; i + lanes <= n; i += lanes) (Vec::load_unaligned(y + i) + Vec::load_unaligned(x + i)).store_unaligned(y + i);
    if (i < n) store_tail(y + i, load_tail(y + i, n - i) + load_tail(x + i, n - i), n - i);
  }

  TensorShape input_, output_;
  std::uint32_t kernel_h_, kernel_w_;
  PackedWeights weights_;
  std::vector<float> bias_;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
