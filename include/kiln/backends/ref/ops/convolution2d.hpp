// SPDX-License-Identifier: Apache-2.0
// Reference Convolution2d: the direct seven-loop convolution, skipping taps that fall in the padding,
// in Float32, in int8 (decision 0014)
// and in Signed32 (ONNX ConvInteger).
#pragma once

#include "kiln/backends/ref/ops/activation.hpp"
#include "kiln/backends/ref/ops/quantize.hpp"

namespace kiln {

namespace ref {

/// Convolution2d for every element type: store(index, sum, oc) receives each output's
/// bias[oc] + sum over taps of (x - x_zero) w, accumulated in Acc. A tap in the padding adds
/// nothing, which for quantised x is padding with its zero point.
template <class Acc, class X, class W, class Bias, class Store>
void convolve(const ops::Convolution2d::Params& p, std::span<const ConstTensor> in, const TensorShape& ys, Acc x_zero,
              Store&& store) {
  const TensorShape& xs = in[0].info.shape;
  const TensorShape& ws = in[1].info.shape;
  const auto* x = static_cast<const X*>(in[0].data);
  const auto* w = static_cast<const W*>(in[1].data);
  const auto* bias = in.size() > 2 ? static_cast<const Bias*>(in[2].data) : nullptr;
  const std::uint32_t group_in = ws[3], group_out = ws[0] / p.groups;
  const std::int64_t height = xs[1], width = xs[2];
  for (std::uint32_t n = 0; n < ys[0]; ++n)
    for (std::uint32_t oy = 0; oy < ys[1]; ++oy)
      for (std::uint32_t ox = 0; ox < ys[2]; ++ox)
        for (std::uint32_t oc = 0; oc < ys[3]; ++oc) {
          const std::uint32_t first_channel = (oc / group_out) * group_in;
          Acc sum = bias ? static_cast<Acc>(bias[oc]) : Acc{0};
          for (std::uint32_t ky = 0; ky < ws[1]; ++ky) {
            const std::int64_t iy =
                std::int64_t{oy} * p.stride.height - p.padding.top + std::int64_t{ky} * p.dilation.height;
            if (iy < 0 || iy >= height) continue;
            for (std::uint32_t kx = 0; kx < ws[2]; ++kx) {
              const std::int64_t ix =
                  std::int64_t{ox} * p.stride.width - p.padding.left + std::int64_t{kx} * p.dilation.width;
              if (ix < 0 || ix >= width) continue;
              const X* xp = x + ((n * height + iy) * width + ix) * xs[3] + first_channel;
              const W* wp = w + ((std::uint64_t{oc} * ws[1] + ky) * ws[2] + kx) * group_in;
              for (std::uint32_t ic = 0; ic < group_in; ++ic) sum += (static_cast<Acc>(xp[ic]) - x_zero) * wp[ic];
            }
          }
          store(((std::uint64_t{n} * ys[1] + oy) * ys[2] + ox) * ys[3] + oc, sum, oc);
        }
}

}  // namespace ref

template <>
struct Workload<ops::Convolution2d, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::Convolution2d> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    float* y = ref::floats(out[0]);
    ref::convolve<float, float, float, float>(params_, in, out[0].info.shape, 0.0f,
                                              [&](std::uint64_t i, float sum, std::uint32_t) { y[i] = sum; });
    ref::apply_activation(params_.activation, y, out[0].info.num_elements());
  }
};

template <>
struct Workload<ops::Convolution2d, RefBackend, DataType::Signed32> : ref::Signed32Kernel<ops::Convolution2d> {
  using Signed32Kernel::Signed32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    ref::convolve<std::uint32_t, std::int32_t, std::int32_t, std::int32_t>(params_, in, out[0].info.shape, 0u,
                                                                           store_to(out[0]));
  }
};

template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::Convolution2d, RefBackend, T>
    : ref::Int8Kernel<ops::Convolution2d, Workload<ops::Convolution2d, RefBackend, T>> {
  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    ref::convolve<std::int64_t, element_type_t<T>, std::int8_t, std::int32_t>(
        this->params_, in, out[0].info.shape, in[0].info.quantization.offset, this->store_to(out[0]));
  }
};

}  // namespace kiln
