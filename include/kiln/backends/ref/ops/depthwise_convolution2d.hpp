// SPDX-License-Identifier: Apache-2.0
// Reference DepthwiseConvolution2d: each output channel convolves one input channel.
#pragma once

#include "kiln/backends/ref/ops/activation.hpp"

namespace kiln {

template <>
struct Workload<ops::DepthwiseConvolution2d, RefBackend, DataType::Float32>
    : ref::Float32Kernel<ops::DepthwiseConvolution2d> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ws = in[1].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const float* x = ref::floats(in[0]);
    const float* w = ref::floats(in[1]);
    const float* bias = in.size() > 2 ? ref::floats(in[2]) : nullptr;
    float* y = ref::floats(out[0]);
    const std::uint32_t multiplier = ys[3] / xs[3];
    const std::int64_t height = xs[1], width = xs[2];
    for (std::uint32_t n = 0; n < ys[0]; ++n)
      for (std::uint32_t oy = 0; oy < ys[1]; ++oy)
        for (std::uint32_t ox = 0; ox < ys[2]; ++ox)
          for (std::uint32_t oc = 0; oc < ys[3]; ++oc) {
            const std::uint32_t ic = oc / multiplier;
            float sum = bias ? bias[oc] : 0.0f;
            for (std::uint32_t ky = 0; ky < ws[1]; ++ky) {
              const std::int64_t iy = std::int64_t{oy} * params_.stride.height - params_.padding.top +
                                      std::int64_t{ky} * params_.dilation.height;
              if (iy < 0 || iy >= height) continue;
              for (std::uint32_t kx = 0; kx < ws[2]; ++kx) {
                const std::int64_t ix = std::int64_t{ox} * params_.stride.width - params_.padding.left +
                                        std::int64_t{kx} * params_.dilation.width;
                if (ix < 0 || ix >= width) continue;
                sum +=
                    x[((n * height + iy) * width + ix) * xs[3] + ic] * w[(std::uint64_t{ky} * ws[2] + kx) * ws[3] + oc];
              }
            }
            y[((std::uint64_t{n} * ys[1] + oy) * ys[2] + ox) * ys[3] + oc] = sum;
          }
    ref::apply_activation(params_.activation, ref::floats(out[0]), out[0].info.num_elements());
  }
};

}  // namespace kiln
