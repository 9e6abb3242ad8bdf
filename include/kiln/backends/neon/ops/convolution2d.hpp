// SPDX-License-Identifier: Apache-2.0
// Neon Convolution2d: GEMM on packed weights; 1x1 reads the input directly, k x k through an indirection table.
#pragma once

#include <cstddef>
#include <vector>

#include "kiln/backends/neon/simd/gemm.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {


/// Rows of A read through an indirection table built at load (indirect GEMM, as XNNPACK does):
/// for output pixel m and kernel tap t, the offset of the input pixel it reads, or -1 for padding,
/// which reads a row of zeros. No im2col buffer, no per-inference work.
struct IndirectRows {
  const float* input;
  const std::ptrdiff_t* offsets;
  std::size_t tap_count;
  const float* zeros;
  std::size_t taps() const noexcept { return tap_count; }
  const float* row(std::size_t m, std::size_t t) const noexcept {
    const std::ptrdiff_t offset = offsets[m * tap_count + t];
    return offset < 0 ? zeros : input + offset;
  }
};

/// The indirection table of a convolution window over an NHWC input (also used by depthwise).
inline std::vector<std::ptrdiff_t> window_offsets(const TensorShape& x, const TensorShape& y, std::uint32_t kh,
                                                  std::uint32_t kw, const ops::Size2d& stride,
                                                  const ops::Size2d& dilation, const ops::Padding2d& padding) {
  std::vector<std::ptrdiff_t> offsets;
  offsets.reserve(std::size_t{y[0]} * y[1] * y[2] * kh * kw);
  for (std::ptrdiff_t n = 0; n < y[0]; ++n)
    for (std::ptrdiff_t oy = 0; oy < y[1]; ++oy)
      for (std::ptrdiff_t ox = 0; ox < y[2]; ++ox)
        for (std::ptrdiff_t ky = 0; ky < kh; ++ky)
          for (std::ptrdiff_t kx = 0; kx < kw; ++kx) {
            const std::ptrdiff_t iy = oy * stride.height - padding.top + ky * dilation.height;
            const std::ptrdiff_t ix = ox * stride.width - padding.left + kx * dilation.width;
            const bool inside = iy >= 0 && iy < x[1] && ix >= 0 && ix < x[2];
            offsets.push_back(inside ? ((n * x[1] + iy) * x[2] + ix) * std::ptrdiff_t{x[3]} : -1);
          }
  return offsets;
}


/// Deviation from Ref: weights are packed at load, so they (and the bias) must be constants.
template <>
struct Kernel<ops::Convolution2d> : Float32Kernel<ops::Convolution2d> {
  static Status is_supported(const WorkloadInfo<ops::Convolution2d>& info) {
    return require_float32_constants(info, 1);
  }

  explicit Kernel(const WorkloadInfo<ops::Convolution2d>& info)
      : Float32Kernel(info), epilogue_(Epilogue::from(params_.activation)) {
    const TensorShape& xs = info.inputs[0].shape;
    const TensorShape& ws = info.inputs[1].shape;
    const std::uint32_t groups = params_.groups;
    weights_ = PackedWeights(static_cast<const float*>(info.constants[1]),
                                   info.inputs.size() > 2 ? static_cast<const float*>(info.constants[2]) : nullptr,
                                   groups, ws[0] / groups, std::size_t{ws[1]} * ws[2] * ws[3]);
    const bool pointwise = ws[1] == 1 && ws[2] == 1 && params_.stride == ops::Size2d{1, 1} &&
                           params_.padding == ops::Padding2d{};
    if (!pointwise) {
      offsets_ = window_offsets(xs, info.outputs[0].shape, ws[1], ws[2], params_.stride, params_.dilation,
                                      params_.padding);
      zeros_.assign(ws[3], 0.0f);
    }
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const std::size_t pixels = std::size_t{ys[0]} * ys[1] * ys[2];
    const std::size_t group_in = xs[3] / params_.groups, group_out = weights_.n();
    for (std::size_t g = 0; g < params_.groups; ++g) {
      const float* x = floats(in[0]) + g * group_in;
      float* y = floats(out[0]) + g * group_out;
      if (offsets_.empty())
        gemm(context, DenseRows{x, xs[3]}, pixels, weights_, g, y, ys[3], epilogue_);
      else
        gemm(context, IndirectRows{x, offsets_.data(), weights_.k() / group_in, zeros_.data()},
                   pixels, weights_, g, y, ys[3], epilogue_);
    }
  }

 private:
  PackedWeights weights_;
  Epilogue epilogue_;
  std::vector<std::ptrdiff_t> offsets_;
  std::vector<float> zeros_;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
