// SPDX-License-Identifier: Apache-2.0
// Reference TransposeConvolution2d: every input pixel scatters its weighted kernel into the output.
#pragma once

#include <algorithm>

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::TransposeConvolution2d, RefBackend, DataType::Float32>
    : ref::Float32Kernel<ops::TransposeConvolution2d> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ws = in[1].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const float* x = ref::floats(in[0]);
    const float* w = ref::floats(in[1]);
    const float* bias = in.size() > 2 ? ref::floats(in[2]) : nullptr;
    float* y = ref::floats(out[0]);
    const std::uint64_t pixels = ys.num_elements(0, 3);
    for (std::uint64_t p = 0; p < pixels; ++p)
      for (std::uint32_t oc = 0; oc < ys[3]; ++oc) y[p * ys[3] + oc] = bias ? bias[oc] : 0.0f;
    const std::int64_t out_h = ys[1], out_w = ys[2];
    for (std::uint32_t n = 0; n < xs[0]; ++n)
      for (std::uint32_t iy = 0; iy < xs[1]; ++iy)
        for (std::uint32_t ix = 0; ix < xs[2]; ++ix)
          for (std::uint32_t ky = 0; ky < ws[1]; ++ky) {
            const std::int64_t oy = std::int64_t{iy} * params_.stride.height + ky - params_.padding.top;
            if (oy < 0 || oy >= out_h) continue;
            for (std::uint32_t kx = 0; kx < ws[2]; ++kx) {
              const std::int64_t ox = std::int64_t{ix} * params_.stride.width + kx - params_.padding.left;
              if (ox < 0 || ox >= out_w) continue;
              const float* xp = x + ((std::uint64_t{n} * xs[1] + iy) * xs[2] + ix) * xs[3];
              float* yp = y + ((n * out_h + oy) * out_w + ox) * ys[3];
              for (std::uint32_t oc = 0; oc < ys[3]; ++oc) {
                const float* wp = w + ((std::uint64_t{oc} * ws[1] + ky) * ws[2] + kx) * ws[3];
                float sum = 0.0f;
                for (std::uint32_t ic = 0; ic < xs[3]; ++ic) sum += xp[ic] * wp[ic];
                yp[oc] += sum;
              }
            }
          }
  }
};

}  // namespace kiln
