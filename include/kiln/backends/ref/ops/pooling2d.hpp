// SPDX-License-Identifier: Apache-2.0
// Reference Pooling2d: each output scans its window, skipping positions in the padding.
#pragma once

#include <algorithm>
#include <limits>

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Pooling2d, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::Pooling2d> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const ops::Pooling2d::Params p = ops::Pooling2d::resolved(params_, xs);
    const float* x = ref::floats(in[0]);
    float* y = ref::floats(out[0]);
    const std::int64_t height = xs[1], width = xs[2];
    for (std::uint32_t n = 0; n < ys[0]; ++n)
      for (std::uint32_t oy = 0; oy < ys[1]; ++oy)
        for (std::uint32_t ox = 0; ox < ys[2]; ++ox)
          for (std::uint32_t c = 0; c < ys[3]; ++c) {
            const std::int64_t y0 = std::int64_t{oy} * p.stride.height - p.padding.top;
            const std::int64_t x0 = std::int64_t{ox} * p.stride.width - p.padding.left;
            // The window clipped to the padded input (count_include_pad divisor) and to the input.
            const std::int64_t y_end = std::min<std::int64_t>(y0 + p.window.height, height + p.padding.bottom);
            const std::int64_t x_end = std::min<std::int64_t>(x0 + p.window.width, width + p.padding.right);
            float max = -std::numeric_limits<float>::infinity();
            float sum = 0.0f;
            std::int64_t inside = 0;
            for (std::int64_t iy = std::max<std::int64_t>(y0, 0); iy < std::min(y_end, height); ++iy)
              for (std::int64_t ix = std::max<std::int64_t>(x0, 0); ix < std::min(x_end, width); ++ix) {
                const float v = x[((n * height + iy) * width + ix) * xs[3] + c];
                max = std::max(max, v);
                sum += v;
                ++inside;
              }
            float result = max;
            if (p.kind == ops::PoolingKind::Average) {
              const std::int64_t divisor = p.count_include_pad ? (y_end - y0) * (x_end - x0) : inside;
              result = sum / static_cast<float>(divisor);
            }
            y[((std::uint64_t{n} * ys[1] + oy) * ys[2] + ox) * ys[3] + c] = result;
          }
  }
};

}  // namespace kiln
