// SPDX-License-Identifier: Apache-2.0
// Neon Pooling2d: max and average over windows, channels in vectors, output rows split over threads.
#pragma once

#include <algorithm>
#include <limits>

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

template <>
struct Kernel<ops::Pooling2d, DataType::Float32> : Float32Kernel<ops::Pooling2d> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const ops::Pooling2d::Params p = ops::Pooling2d::resolved(params_, xs);
    const std::ptrdiff_t height = xs[1], width = xs[2], channels = xs[3];
    context.parallel_for(
        std::size_t{ys[0]} * ys[1],
        [&](std::size_t row) {
          const std::ptrdiff_t n = row / ys[1], oy = row % ys[1];
          const float* x = floats(in[0]) + n * height * width * channels;
          float* y = floats(out[0]) + row * ys[2] * channels;
          const std::ptrdiff_t y0 = oy * p.stride.height - p.padding.top;
          const std::ptrdiff_t y_end = std::min<std::ptrdiff_t>(y0 + p.window.height, height + p.padding.bottom);
          const std::ptrdiff_t iy0 = std::max<std::ptrdiff_t>(y0, 0), iy1 = std::min(y_end, height);
          for (std::ptrdiff_t ox = 0; ox < ys[2]; ++ox, y += channels) {
            const std::ptrdiff_t x0 = ox * p.stride.width - p.padding.left;
            const std::ptrdiff_t x_end = std::min<std::ptrdiff_t>(x0 + p.window.width, width + p.padding.right);
            const std::ptrdiff_t ix0 = std::max<std::ptrdiff_t>(x0, 0), ix1 = std::min(x_end, width);
            const std::ptrdiff_t divisor =
                p.count_include_pad ? (y_end - y0) * (x_end - x0) : (iy1 - iy0) * (ix1 - ix0);
            auto window = [&](std::ptrdiff_t c, auto load, auto store) {
              if (p.kind == ops::PoolingKind::Max) {
                Vec acc(-std::numeric_limits<float>::infinity());
                for (std::ptrdiff_t iy = iy0; iy < iy1; ++iy)
                  for (std::ptrdiff_t ix = ix0; ix < ix1; ++ix)
                    acc = xsimd::max(acc, load(x + (iy * width + ix) * channels + c));
                store(y + c, acc);
              } else {
                Vec acc(0.0f);
                for (std::ptrdiff_t iy = iy0; iy < iy1; ++iy)
                  for (std::ptrdiff_t ix = ix0; ix < ix1; ++ix) acc += load(x + (iy * width + ix) * channels + c);
                store(y + c, acc / Vec(static_cast<float>(divisor)));
              }
            };
            auto full = [](const float* q) { return Vec::load_unaligned(q); };
            auto store_full = [](float* q, Vec v) { v.store_unaligned(q); };
            std::ptrdiff_t c = 0;
            for (; c + std::ptrdiff_t{lanes} <= channels; c += lanes) window(c, full, store_full);
            // The last channels: one more whole vector ending at the last channel, which computes a
            // few channels again (to the same values), since a partial vector's copies cost more.
            if (c < channels && channels >= std::ptrdiff_t{lanes}) {
              window(channels - std::ptrdiff_t{lanes}, full, store_full);
            } else if (c < channels) {
              const std::size_t rest = channels - c;
              window(
                  c, [rest](const float* q) { return load_tail(q, rest); },
                  [rest](float* q, Vec v) { store_tail(q, v, rest); });
            }
          }
        },
        std::size_t{ys[2]} * ys[3] * p.window.height * p.window.width);
  }
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
