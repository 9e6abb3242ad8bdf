// SPDX-License-Identifier: Apache-2.0
// Neon Pooling2d: max and average over windows, channels in vectors, output rows split over threads
// (Float16 computed in Float32 lanes); int8 max pooling on bytes, averages and rescaled maxima a channel per int32
// lane.
#pragma once

#include <algorithm>
#include <limits>

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/int8_gemm.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"
#include "kiln/backends/quantized_pooling.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// The window of each output pixel, clipped to the input, as rows iy0, iy0 + dy, ... below iy1 and
/// columns ix0, ix0 + dx, ... below ix1 of the pixel's image (dy, dx: the dilation), how many
/// positions that is, and what an average divides by; output rows split over threads.
struct PoolingWindow {
  std::ptrdiff_t n, iy0, iy1, ix0, ix1, dy, dx, inside, divisor;
};

/// A window's positions along one axis, start, start + step, ... (count of them): the first inside
/// [0, size), the bound below which they stay inside, how many are inside, and how many are inside
/// [0, size + pad_after) (count_include_pad's).
struct WindowAxis {
  std::ptrdiff_t first, end, inside, padded;
  static WindowAxis of(std::ptrdiff_t start, std::ptrdiff_t count, std::ptrdiff_t step, std::ptrdiff_t size,
                       std::ptrdiff_t pad_after) {
    // Positions among a >= 0 pixels: no division per output pixel for the undilated windows of nearly every network.
    const auto positions = [step](std::ptrdiff_t a) { return step == 1 ? a : (a + step - 1) / step; };
    const std::ptrdiff_t reach = start + (count - 1) * step + 1;
    const std::ptrdiff_t skipped = start < 0 ? positions(-start) : 0;  // positions in the leading padding
    const std::ptrdiff_t first = start + skipped * step, end = std::min(reach, size);
    const std::ptrdiff_t inside = first < end ? positions(end - first) : 0;
    const std::ptrdiff_t padded = std::min(count, positions(size + pad_after - start));
    return {first, end, inside, padded};
  }
};

template <class PerPixel>
void for_each_window(const ops::Pooling2d::Params& params, const TensorShape& xs, const TensorShape& ys,
                     Context& context, PerPixel&& per_pixel) {
  const ops::Pooling2d::Params p = ops::Pooling2d::resolved(params, xs);
  const std::ptrdiff_t height = xs[1], width = xs[2];
  const std::ptrdiff_t dy = signed_extent(p.dilation.height), dx = signed_extent(p.dilation.width);
  context.parallel_for(
      std::size_t{ys[0]} * ys[1],
      [&](std::size_t row) {
        const std::ptrdiff_t n = row / ys[1], oy = row % ys[1];
        const WindowAxis rows =
            WindowAxis::of(oy * signed_extent(p.stride.height) - signed_extent(p.padding.top),
                           signed_extent(p.window.height), dy, height, signed_extent(p.padding.bottom));
        for (std::ptrdiff_t ox = 0; ox < signed_extent(ys[2]); ++ox) {
          const WindowAxis columns =
              WindowAxis::of(ox * signed_extent(p.stride.width) - signed_extent(p.padding.left),
                             signed_extent(p.window.width), dx, width, signed_extent(p.padding.right));
          const std::ptrdiff_t inside = rows.inside * columns.inside;
          per_pixel(row * ys[2] + ox, PoolingWindow{n, rows.first, rows.end, columns.first, columns.end, dy, dx, inside,
                                                    p.count_include_pad ? rows.padded * columns.padded : inside});
        }
      },
      std::size_t{ys[2]} * ys[3] * p.window.height * p.window.width);
}

/// Max or average pooling on elements E: floats, or halves computed in Float32 lanes (a result
/// rounded once, RefBackend's arithmetic).
template <class E>
void pool(const ops::Pooling2d::Params& params, const ConstTensor& in, const Tensor& out, Context& context) {
  const TensorShape& xs = in.info.shape;
  const std::ptrdiff_t width = xs[2], channels = xs[3];
  const bool max = params.kind == ops::PoolingKind::Max;
  for_each_window(params, xs, out.info.shape, context, [&](std::size_t pixel, const PoolingWindow& w) {
    const E* x = static_cast<const E*>(in.data) + w.n * xs[1] * width * channels;
    E* y = static_cast<E*>(out.data) + pixel * channels;
    // `count` channels from c on: lanes, or fewer for the last ones.
    auto window = [&](std::ptrdiff_t c, std::size_t count) {
      if (max) {
        Vec acc(-std::numeric_limits<float>::infinity());
        for (std::ptrdiff_t iy = w.iy0; iy < w.iy1; iy += w.dy)
          for (std::ptrdiff_t ix = w.ix0; ix < w.ix1; ix += w.dx)
            acc = xsimd::max(acc, load_upto(x + (iy * width + ix) * channels + c, count));
        store_upto(y + c, acc, count);
      } else {
        Vec acc(0.0f);
        for (std::ptrdiff_t iy = w.iy0; iy < w.iy1; iy += w.dy)
          for (std::ptrdiff_t ix = w.ix0; ix < w.ix1; ix += w.dx)
            acc += load_upto(x + (iy * width + ix) * channels + c, count);
        store_upto(y + c, acc / Vec(static_cast<float>(w.divisor)), count);
      }
    };
    std::ptrdiff_t c = 0;
    for (; c + std::ptrdiff_t{lanes} <= channels; c += lanes) window(c, lanes);
    // The last channels: one more whole vector ending at the last channel, which computes a few
    // channels again (to the same values), since a partial vector's copies cost more.
    if (c < channels && channels >= std::ptrdiff_t{lanes})
      window(channels - std::ptrdiff_t{lanes}, lanes);
    else if (c < channels)
      window(c, channels - c);
  });
}

template <>
struct Kernel<ops::Pooling2d, DataType::Float32> : Float32Kernel<ops::Pooling2d> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    pool<float>(params_, in[0], out[0], context);
  }
};

/// Float16: halves read and written in place, with no Float32 buffers.
template <>
struct Kernel<ops::Pooling2d, DataType::Float16> : Float16Kernel<ops::Pooling2d> {
  using Float16Kernel::Float16Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    pool<Half>(params_, in[0], out[0], context);
  }
};

/// int8 (decision 0014, quantized::PoolingStage). A max of one scale and zero point in and out is
/// the window's largest byte (the stage's multiplier is exactly 1), a byte vector of channels at a
/// time. Averages and rescaled maxima work a channel per int32 lane: the window's sum of x less
/// (positions inside) x zx, or its max less zx, then Int8Dot's output stage with the multiplier of
/// the window's divisor (a stage per divisor, made at load: at most max_divisors of them).
template <DataType T>
requires(quantized::is_activation_type(T)) struct Kernel<ops::Pooling2d, T> {
  static constexpr std::uint64_t max_divisors = 64;
  static Status is_supported(const WorkloadInfo<ops::Pooling2d>& info) {
    if (bytes_only(info)) return Status::ok();
    if (auto s = quantized::check_pooling(info); !s) return s;
    const quantized::PoolingDivisors d = quantized::PoolingDivisors::of(info.params, info.inputs[0].shape);
    if (d.last - d.first >= max_divisors)
      return Status::error(ErrorCode::Unsupported, "runs int8 averages of windows of at most ", max_divisors,
                           " positions (or global ones); this one has ", d.last, " (it runs on CpuRef)");
    if (info.arithmetic == QuantizedArithmetic::TfLite && info.params.kind == ops::PoolingKind::Average)
      return Status::error(ErrorCode::Unsupported,
                           "runs int8 averages in kiln's arithmetic; TensorFlow Lite's divide (it runs on CpuRef)");
    return Status::ok();
  }
  static Expected<Kernel> create(const WorkloadInfo<ops::Pooling2d>& info, Context&) {
    Kernel kernel{info.params, info.inputs[0].quantization.offset, 0, {}};
    if (bytes_only(info)) return kernel;
    auto stage = quantized::PoolingStage::make(info);
    if (!stage) return stage.status();
    kernel.first_divisor = stage->divisors().first;
    for (const Requantization& m : stage->multipliers()) {
      Int8OutputStages& s = kernel.stages.emplace_back(stage->lo(), stage->hi(), stage->zero_point(), Int8Dot::lanes);
      for (std::size_t column = 0; column < Int8Dot::lanes; ++column) s.set(column, m);
    }
    return kernel;
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    if (stages.empty())
      largest_bytes(in[0], out[0], context);
    else
      rescaled(in[0], out[0], context);
  }

  ops::Pooling2d::Params params;
  std::int32_t input_zero_point;
  std::uint64_t first_divisor;
  std::vector<Int8OutputStages> stages;  // by divisor from first_divisor on; none for bytes_only

 private:
  static bool bytes_only(const WorkloadInfo<ops::Pooling2d>& info) {
    const TensorInfo &x = info.inputs[0], &y = info.outputs[0];
    return info.params.kind == ops::PoolingKind::Max && x.type == y.type && x.quantization == y.quantization &&
           quantized::require_activation(x, "input");
  }

  void largest_bytes(const ConstTensor& in, const Tensor& out, Context& context) const {
    using Element = element_type_t<T>;
    using Bytes = xsimd::batch<Element>;
    constexpr std::ptrdiff_t byte_lanes = Bytes::size;
    const TensorShape& xs = in.info.shape;
    const std::ptrdiff_t width = xs[2], channels = xs[3];
    for_each_window(params, xs, out.info.shape, context, [&](std::size_t pixel, const PoolingWindow& w) {
      const auto* x = static_cast<const Element*>(in.data) + w.n * xs[1] * width * channels;
      auto* y = static_cast<Element*>(out.data) + pixel * channels;
      std::ptrdiff_t c = 0;
      for (; c + byte_lanes <= channels; c += byte_lanes) {
        Bytes acc(std::numeric_limits<Element>::lowest());
        for (std::ptrdiff_t iy = w.iy0; iy < w.iy1; iy += w.dy)
          for (std::ptrdiff_t ix = w.ix0; ix < w.ix1; ix += w.dx)
            acc = xsimd::max(acc, Bytes::load_unaligned(x + (iy * width + ix) * channels + c));
        acc.store_unaligned(y + c);
      }
      for (; c < channels; ++c) {
        Element acc = std::numeric_limits<Element>::lowest();
        for (std::ptrdiff_t iy = w.iy0; iy < w.iy1; iy += w.dy)
          for (std::ptrdiff_t ix = w.ix0; ix < w.ix1; ix += w.dx)
            acc = std::max(acc, x[(iy * width + ix) * channels + c]);
        y[c] = acc;
      }
    });
  }

  void rescaled(const ConstTensor& in, const Tensor& out, Context& context) const {
    constexpr bool signed_input = T == DataType::QAsymmS8;
    const bool max = params.kind == ops::PoolingKind::Max;
    const TensorShape& xs = in.info.shape;
    const std::ptrdiff_t width = xs[2], channels = xs[3];
    for_each_window(params, xs, out.info.shape, context, [&](std::size_t pixel, const PoolingWindow& w) {
      const auto* x = static_cast<const std::uint8_t*>(in.data) + w.n * xs[1] * width * channels;
      auto* y = static_cast<std::uint8_t*>(out.data) + pixel * channels;
      const Int8OutputStage stage = stages[max ? 0 : w.divisor - first_divisor].from(0);
      const auto inside = static_cast<std::int32_t>(w.inside);
      const auto zero_points = Int8Dot::splat(max ? input_zero_point : inside * input_zero_point);
      for (std::ptrdiff_t c = 0; c < channels; c += Int8Dot::lanes) {
        const std::size_t count = std::min<std::size_t>(Int8Dot::lanes, channels - c);
        auto acc = Int8Dot::splat(max ? std::numeric_limits<std::int32_t>::min() : 0);
        for (std::ptrdiff_t iy = w.iy0; iy < w.iy1; iy += w.dy)
          for (std::ptrdiff_t ix = w.ix0; ix < w.ix1; ix += w.dx) {
            const auto v = Int8Dot::widen(x + (iy * width + ix) * channels + c, count, signed_input);
            acc = max ? Int8Dot::max(acc, v) : Int8Dot::add(acc, v);
          }
        Int8Dot::store(Int8Dot::subtract(acc, zero_points), stage, 0, y + c, count);
      }
    });
  }
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
