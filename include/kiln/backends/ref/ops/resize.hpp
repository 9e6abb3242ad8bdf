// SPDX-License-Identifier: Apache-2.0
// Reference Resize: every output pixel samples the input at its transformed coordinates.
#pragma once

#include <algorithm>
#include <cmath>

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Resize, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::Resize> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const float* x = ref::floats(in[0]);
    float* y = ref::floats(out[0]);
    const std::uint32_t channels = xs[3];
    auto at = [&](std::uint32_t n, std::int64_t iy, std::int64_t ix, std::uint32_t c) {
      return x[((n * std::int64_t{xs[1]} + iy) * xs[2] + ix) * channels + c];
    };
    for (std::uint32_t n = 0; n < ys[0]; ++n)
      for (std::uint32_t oy = 0; oy < ys[1]; ++oy)
        for (std::uint32_t ox = 0; ox < ys[2]; ++ox) {
          const double sy = ops::Resize::source_coordinate(params_.transform, oy, xs[1], ys[1]);
          const double sx = ops::Resize::source_coordinate(params_.transform, ox, xs[2], ys[2]);
          float* yp = y + ((std::uint64_t{n} * ys[1] + oy) * ys[2] + ox) * channels;
          if (params_.method == ops::ResizeMethod::Nearest) {
            const std::int64_t iy = std::clamp<std::int64_t>(ops::Resize::nearest(params_.rounding, sy), 0, xs[1] - 1);
            const std::int64_t ix = std::clamp<std::int64_t>(ops::Resize::nearest(params_.rounding, sx), 0, xs[2] - 1);
            for (std::uint32_t c = 0; c < channels; ++c) yp[c] = at(n, iy, ix, c);
            continue;
          }
          const double cy = std::clamp(sy, 0.0, double(xs[1] - 1));
          const double cx = std::clamp(sx, 0.0, double(xs[2] - 1));
          const auto y0 = static_cast<std::int64_t>(std::floor(cy)), x0 = static_cast<std::int64_t>(std::floor(cx));
          const std::int64_t y1 = std::min<std::int64_t>(y0 + 1, xs[1] - 1),
                             x1 = std::min<std::int64_t>(x0 + 1, xs[2] - 1);
          const double fy = cy - y0, fx = cx - x0;
          for (std::uint32_t c = 0; c < channels; ++c) {
            const double top = at(n, y0, x0, c) * (1 - fx) + at(n, y0, x1, c) * fx;
            const double bottom = at(n, y1, x0, c) * (1 - fx) + at(n, y1, x1, c) * fx;
            yp[c] = static_cast<float>(top * (1 - fy) + bottom * fy);
          }
        }
  }
};

}  // namespace kiln
