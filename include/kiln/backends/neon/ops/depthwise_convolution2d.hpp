// SPDX-License-Identifier: Apache-2.0
// Neon DepthwiseConvolution2d: channels in vectors, taps unrolled for 3x3 and 5x5, no bounds checks inside.
#pragma once

#include <algorithm>
#include <vector>

#include "kiln/backends/neon/simd/gemm.hpp"

namespace kiln {

/// Deviation from Ref: channel multiplier 1 only (others run Ref's kernel); weights and bias are
/// copied at load, so they must be constants. Sums taps in the same (ky, kx) order as Ref.
template <>
struct Workload<ops::DepthwiseConvolution2d, NeonBackend> : neon::Float32Kernel<ops::DepthwiseConvolution2d> {
  static Status is_supported(const WorkloadInfo<ops::DepthwiseConvolution2d>& info) {
    if (info.inputs[1].shape[3] != info.inputs[0].shape[3])
      return Status::error(ErrorCode::Unsupported, NeonBackend::id, " runs DepthwiseConvolution2d with channel multiplier 1 only");
    return neon::require_float32_constants(info, 1);
  }

  explicit Workload(const WorkloadInfo<ops::DepthwiseConvolution2d>& info)
      : Float32Kernel(info), epilogue_(neon::Epilogue::from(params_.activation)) {
    const TensorShape& ws = info.inputs[1].shape;
    kernel_ = {ws[1], ws[2]};
    const auto* w = static_cast<const float*>(info.constants[1]);
    weights_.assign(w, w + ws.num_elements());
    bias_.assign(ws[3], 0.0f);
    if (info.inputs.size() > 2) std::copy_n(static_cast<const float*>(info.constants[2]), ws[3], bias_.begin());
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, neon::Context& context) const {
    const ops::Size2d k = kernel_, s = params_.stride, d = params_.dilation;
    if (k == ops::Size2d{3, 3} && d == ops::Size2d{1, 1} && s == ops::Size2d{1, 1}) return rows<3, 3, 1>(in, out, context);
    if (k == ops::Size2d{3, 3} && d == ops::Size2d{1, 1} && s == ops::Size2d{2, 2}) return rows<3, 3, 2>(in, out, context);
    if (k == ops::Size2d{5, 5} && d == ops::Size2d{1, 1} && s == ops::Size2d{1, 1}) return rows<5, 5, 1>(in, out, context);
    if (k == ops::Size2d{5, 5} && d == ops::Size2d{1, 1} && s == ops::Size2d{2, 2}) return rows<5, 5, 2>(in, out, context);
    rows<0, 0, 0>(in, out, context);
  }

 private:
  // KH, KW, Stride > 0: compile-time window (unrolled taps); 0: the window read at run time.
  template <std::uint32_t KH, std::uint32_t KW, std::uint32_t Stride>
  void rows(std::span<const ConstTensor> in, std::span<const Tensor> out, neon::Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const std::size_t out_rows = std::size_t{ys[0]} * ys[1];
    context.parallel_for(out_rows, [&](std::size_t row) {
      const std::size_t n = row / ys[1], oy = row % ys[1];
      float* y = neon::floats(out[0]) + row * ys[2] * ys[3];
      for (std::size_t ox = 0; ox < ys[2]; ++ox, y += ys[3])
        pixel<KH, KW, Stride>(neon::floats(in[0]) + n * xs[1] * xs[2] * xs[3], xs, oy, ox, y);
      neon::apply_activation(epilogue_.activation, neon::floats(out[0]) + row * ys[2] * ys[3], std::size_t{ys[2]} * ys[3]);
    }, std::size_t{ys[2]} * ys[3] * kernel_.height * kernel_.width);
  }

  template <std::uint32_t KH, std::uint32_t KW, std::uint32_t Stride>
  void pixel(const float* x, const TensorShape& xs, std::size_t oy, std::size_t ox, float* y) const {
    using neon::Vec;
    const std::ptrdiff_t kh = KH ? KH : kernel_.height, kw = KW ? KW : kernel_.width;
    const std::ptrdiff_t sh = Stride ? Stride : params_.stride.height, sw = Stride ? Stride : params_.stride.width;
    const std::ptrdiff_t dh = Stride ? 1 : params_.dilation.height, dw = Stride ? 1 : params_.dilation.width;
    const std::ptrdiff_t y0 = std::ptrdiff_t(oy) * sh - params_.padding.top;
    const std::ptrdiff_t x0 = std::ptrdiff_t(ox) * sw - params_.padding.left;
    const std::ptrdiff_t height = xs[1], width = xs[2], channels = xs[3];
    // The taps inside the input: a full window (the common case) runs the loop with constant bounds.
    auto first_tap = [](std::ptrdiff_t start, std::ptrdiff_t dilation) {
      return start >= 0 ? 0 : (-start + dilation - 1) / dilation;
    };
    auto end_tap = [](std::ptrdiff_t start, std::ptrdiff_t dilation, std::ptrdiff_t taps, std::ptrdiff_t size) {
      return std::min(taps, start >= size ? 0 : (size - 1 - start) / dilation + 1);
    };
    const std::ptrdiff_t ky0 = first_tap(y0, dh), ky1 = end_tap(y0, dh, kh, height);
    const std::ptrdiff_t kx0 = first_tap(x0, dw), kx1 = end_tap(x0, dw, kw, width);
    const Vec lo(epilogue_.min), hi(epilogue_.max);
    auto channel_block = [&](std::ptrdiff_t c, auto load, auto store) {
      Vec acc = load(&bias_[c]);
      if (KH && ky0 == 0 && ky1 == kh && kx0 == 0 && kx1 == kw) {
#pragma GCC unroll 5
        for (std::ptrdiff_t ky = 0; ky < std::ptrdiff_t{KH}; ++ky)
#pragma GCC unroll 5
          for (std::ptrdiff_t kx = 0; kx < std::ptrdiff_t{KW}; ++kx)
            acc = xsimd::fma(load(x + ((y0 + ky) * width + x0 + kx) * channels + c), load(&weights_[(ky * KW + kx) * channels + c]), acc);
      } else {
        for (std::ptrdiff_t ky = ky0; ky < ky1; ++ky)
          for (std::ptrdiff_t kx = kx0; kx < kx1; ++kx)
            acc = xsimd::fma(load(x + ((y0 + ky * dh) * width + x0 + kx * dw) * channels + c),
                             load(&weights_[(ky * kw + kx) * channels + c]), acc);
      }
      store(y + c, xsimd::min(xsimd::max(acc, lo), hi));
    };
    std::ptrdiff_t c = 0;
    for (; c + std::ptrdiff_t{neon::lanes} <= channels; c += neon::lanes)
      channel_block(c, [](const float* p) { return Vec::load_unaligned(p); }, [](float* p, Vec v) { v.store_unaligned(p); });
    if (c < channels) {
      const std::size_t n = channels - c;
      channel_block(c, [n](const float* p) { return neon::load_tail(p, n); }, [n](float* p, Vec v) { neon::store_tail(p, v, n); });
    }
  }

  ops::Size2d kernel_;
  neon::Epilogue epilogue_;
  std::vector<float> weights_, bias_;
};

}  // namespace kiln
