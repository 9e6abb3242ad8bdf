// SPDX-License-Identifier: Apache-2.0
// Reference Pooling2d: each output scans its window's (dilated) positions, skipping those in the
// padding, in Float32 and in int8 (decision 0014).
#pragma once

#include <algorithm>
#include <limits>

#include "kiln/backends/quantized_pooling.hpp"
#include "kiln/backends/ref/ops/quantize.hpp"

namespace kiln {

namespace ref {

/// Pooling2d for every element type: visit(output index, max, sum, divisor) receives each output's
/// window max and sum (in Sum) over the positions inside the input, and what an average divides
/// by (the count of those positions, or of the window clipped to the padded input with
/// count_include_pad). Element i of the input is element(i).
template <class Sum, class Element, class Visit>
void pool(const ops::Pooling2d::Params& params, const TensorShape& xs, const TensorShape& ys, Element&& element,
          Visit&& visit) {
  const ops::Pooling2d::Params p = ops::Pooling2d::resolved(params, xs);
  const std::int64_t height = xs[1], width = xs[2];
  for (std::uint32_t n = 0; n < ys[0]; ++n)
    for (std::uint32_t oy = 0; oy < ys[1]; ++oy)
      for (std::uint32_t ox = 0; ox < ys[2]; ++ox)
        for (std::uint32_t c = 0; c < ys[3]; ++c) {
          const std::int64_t y0 = std::int64_t{oy} * p.stride.height - p.padding.top;
          const std::int64_t x0 = std::int64_t{ox} * p.stride.width - p.padding.left;
          Sum max = std::numeric_limits<Sum>::has_infinity ? -std::numeric_limits<Sum>::infinity()
                                                           : std::numeric_limits<Sum>::lowest();
          Sum sum{0};
          // Window positions inside the input, and inside the padded input (count_include_pad's divisor).
          std::int64_t inside = 0, padded_rows = 0, padded_columns = 0;
          for (std::uint32_t ky = 0; ky < p.window.height; ++ky) {
            const std::int64_t iy = y0 + std::int64_t{ky} * p.dilation.height;
            if (iy >= height + p.padding.bottom) break;
            ++padded_rows;
            padded_columns = 0;
            for (std::uint32_t kx = 0; kx < p.window.width; ++kx) {
              const std::int64_t ix = x0 + std::int64_t{kx} * p.dilation.width;
              if (ix >= width + p.padding.right) break;
              ++padded_columns;
              if (iy < 0 || iy >= height || ix < 0 || ix >= width) continue;
              const Sum v = element(((n * height + iy) * width + ix) * xs[3] + c);
              max = std::max(max, v);
              sum += v;
              ++inside;
            }
          }
          const std::int64_t divisor = p.count_include_pad ? padded_rows * padded_columns : inside;
          visit(((std::uint64_t{n} * ys[1] + oy) * ys[2] + ox) * ys[3] + c, max, sum, divisor);
        }
}

}  // namespace ref

template <>
struct Workload<ops::Pooling2d, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::Pooling2d> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const float* x = ref::floats(in[0]);
    float* y = ref::floats(out[0]);
    const bool max = params_.kind == ops::PoolingKind::Max;
    ref::pool<float>(
        params_, in[0].info.shape, out[0].info.shape, [x](std::uint64_t i) { return x[i]; },
        [&](std::uint64_t i, float window_max, float sum, std::int64_t divisor) {
          y[i] = max ? window_max : sum / static_cast<float>(divisor);
        });
  }
};

/// int8: the window's max less the input zero point, or its sum of (x - zx), through the output
/// stage of its divisor (quantized::PoolingStage).
template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::Pooling2d, RefBackend, T> {
  static Status is_supported(const WorkloadInfo<ops::Pooling2d>& info) { return quantized::check_pooling(info); }
  static Expected<Workload> create(const WorkloadInfo<ops::Pooling2d>& info, ref::Context&) {
    auto stage = quantized::PoolingStage::make(info);
    if (!stage) return stage.status();
    return Workload{info.params, std::move(*stage)};
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const std::int32_t x_zero = in[0].info.quantization.offset;
    const bool max = params.kind == ops::PoolingKind::Max;
    // Elements less the zero point: the max and the sum are then the accumulators themselves,
    // which check_pooling's window bound keeps within int32.
    ref::pool<std::int64_t>(
        params, in[0].info.shape, out[0].info.shape, [&](std::uint64_t i) { return integer_at(in[0], i) - x_zero; },
        [&](std::uint64_t i, std::int64_t window_max, std::int64_t sum, std::int64_t divisor) {
          ref::store_8bit(out[0], i,
                          max ? stage(static_cast<std::int32_t>(window_max), 1)
                              : stage(static_cast<std::int32_t>(sum), static_cast<std::uint64_t>(divisor)));
        });
  }

  ops::Pooling2d::Params params;
  quantized::PoolingStage stage;
};

}  // namespace kiln
