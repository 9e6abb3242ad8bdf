// SPDX-License-Identifier: Apache-2.0
// Reference TransposeConvolution2d, in Float32 and in int8 (decision 0014): each output gathers the
// input pixels whose weighted kernels reach it.
#pragma once

#include "kiln/backends/ref/ops/quantize.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

namespace ref {

/// TransposeConvolution2d for every element type: store(index, sum, oc) receives each output's
/// bias[oc] + the sum, over the taps (ky, kx) that reach it from a whole input pixel (iy =
/// (oy + top - ky) / stride, exactly, inside the input), of (x - x_zero) w, accumulated in Acc.
template <class Acc, class X, class W, class Bias, class Store>
void transpose_convolve(const ops::TransposeConvolution2d::Params& p, std::span<const ConstTensor> in,
                        const TensorShape& ys, Acc x_zero, Store&& store) {
  const TensorShape& xs = in[0].info.shape;
  const TensorShape& ws = in[1].info.shape;
  const auto* x = static_cast<const X*>(in[0].data);
  const auto* w = static_cast<const W*>(in[1].data);
  const auto* bias = in.size() > 2 ? static_cast<const Bias*>(in[2].data) : nullptr;
  const std::int64_t height = xs[1], width = xs[2];
  // The input pixel a tap reaches output coordinate o from, or -1.
  auto source = [](std::int64_t o, std::uint32_t pad, std::uint32_t k, std::uint32_t stride, std::int64_t size) {
    const std::int64_t t = o + pad - k;
    return t < 0 || t % stride != 0 || t / stride >= size ? std::int64_t{-1} : t / stride;
  };
  for (std::uint32_t n = 0; n < ys[0]; ++n)
    for (std::uint32_t oy = 0; oy < ys[1]; ++oy)
      for (std::uint32_t ox = 0; ox < ys[2]; ++ox)
        for (std::uint32_t oc = 0; oc < ys[3]; ++oc) {
          Acc sum = bias ? static_cast<Acc>(bias[oc]) : Acc{0};
          for (std::uint32_t ky = 0; ky < ws[1]; ++ky) {
            const std::int64_t iy = source(oy, p.padding.top, ky, p.stride.height, height);
            if (iy < 0) continue;
            for (std::uint32_t kx = 0; kx < ws[2]; ++kx) {
              const std::int64_t ix = source(ox, p.padding.left, kx, p.stride.width, width);
              if (ix < 0) continue;
              const X* xp = x + ((n * height + iy) * width + ix) * xs[3];
              const W* wp = w + ((std::uint64_t{oc} * ws[1] + ky) * ws[2] + kx) * ws[3];
              for (std::uint32_t ic = 0; ic < xs[3]; ++ic) sum += (static_cast<Acc>(xp[ic]) - x_zero) * wp[ic];
            }
          }
          store(((std::uint64_t{n} * ys[1] + oy) * ys[2] + ox) * ys[3] + oc, sum, oc);
        }
}

}  // namespace ref

template <>
struct Workload<ops::TransposeConvolution2d, RefBackend, DataType::Float32>
    : ref::Float32Kernel<ops::TransposeConvolution2d> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    float* y = ref::floats(out[0]);
    ref::transpose_convolve<float, float, float, float>(params_, in, out[0].info.shape, 0.0f,
                                                        [&](std::uint64_t i, float sum, std::uint32_t) { y[i] = sum; });
  }
};

template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::TransposeConvolution2d, RefBackend, T>
    : ref::Int8Kernel<ops::TransposeConvolution2d, Workload<ops::TransposeConvolution2d, RefBackend, T>> {
  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    ref::transpose_convolve<std::int64_t, element_type_t<T>, std::int8_t, std::int32_t>(
        this->params_, in, out[0].info.shape, in[0].info.quantization.offset, this->store_to(out[0]));
  }
};

}  // namespace kiln
