// SPDX-License-Identifier: Apache-2.0
// Reference Resize: every output pixel samples the input at its transformed coordinates. Nearest
// moves elements, so it also runs on Float16 and 8-bit quantised tensors; bilinear and bicubic
// compute in double (Float16 widened, the result rounded back), and on 8-bit tensors of a network in
// TensorFlow Lite's arithmetic as TensorFlow Lite does (tflite_recipes::bilinear_weights).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "kiln/backends/moved_elements.hpp"
#include "kiln/backends/ref/ops/quantize.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"
#include "kiln/backends/tflite_recipes.hpp"

namespace kiln {

namespace ref {

class ResizeKernel {
 public:
  explicit ResizeKernel(const WorkloadInfo<ops::Resize>& info) : params_(info.params) {}
  static Status is_supported(const WorkloadInfo<ops::Resize>& info) {
    if (info.inputs[0].type == DataType::Float16 || tflite_recipes::is_integer_bilinear(info)) return Status::ok();
    return check_resize_types(info);
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context&) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const std::uint32_t channels = xs[3];
    const std::size_t element = size_of(out[0].info.type);
    auto pixel = [&](std::uint32_t n, std::int64_t iy, std::int64_t ix) {
      return ((n * std::int64_t{xs[1]} + iy) * xs[2] + ix) * channels;
    };
    const bool half = in[0].info.type == DataType::Float16;
    auto x = [&](std::int64_t i) -> double {
      return half ? half_to_float(static_cast<const Half*>(in[0].data)[i]) : floats(in[0])[i];
    };
    auto store = [&](std::uint64_t i, double value) {
      if (half)
        static_cast<Half*>(out[0].data)[i] = float_to_half(static_cast<float>(value));
      else
        floats(out[0])[i] = static_cast<float>(value);
    };
    for (std::uint32_t n = 0; n < ys[0]; ++n)
      for (std::uint32_t oy = 0; oy < ys[1]; ++oy)
        for (std::uint32_t ox = 0; ox < ys[2]; ++ox) {
          const std::uint64_t y_pixel = ((std::uint64_t{n} * ys[1] + oy) * ys[2] + ox) * channels;
          if (params_.method == ops::ResizeMethod::Bicubic) {
            const Taps rows = bicubic_taps(true, oy, xs[1], ys[1]), columns = bicubic_taps(false, ox, xs[2], ys[2]);
            for (std::uint32_t c = 0; c < channels; ++c) {
              double sum = 0.0;
              for (std::size_t i = 0; i < 4; ++i)
                for (std::size_t j = 0; j < 4; ++j)
                  sum += rows.weight[i] * columns.weight[j] * x(pixel(n, rows.index[i], columns.index[j]) + c);
              store(y_pixel + c, sum);
            }
            continue;
          }
          const auto row = ops::Resize::sample(params_, true, oy, xs[1], ys[1]);
          const auto column = ops::Resize::sample(params_, false, ox, xs[2], ys[2]);
          if (params_.method == ops::ResizeMethod::Nearest) {
            std::memcpy(bytes(out[0]) + y_pixel * element, bytes(in[0]) + pixel(n, row.first, column.first) * element,
                        channels * element);
            continue;
          }
          if (is_quantized(in[0].info.type)) {  // TensorFlow Lite's integer bilinear
            const auto [iy, y0, y1] = tflite_recipes::bilinear_weights(params_, oy, xs[1], ys[1]);
            const auto [ix, x0, x1] = tflite_recipes::bilinear_weights(params_, ox, xs[2], ys[2]);
            for (std::uint32_t c = 0; c < channels; ++c)
              store_8bit(out[0], y_pixel + c,
                         tflite_recipes::bilinear(
                             integer_at(in[0], pixel(n, y0, x0) + c), integer_at(in[0], pixel(n, y0, x1) + c),
                             integer_at(in[0], pixel(n, y1, x0) + c), integer_at(in[0], pixel(n, y1, x1) + c),
                             iy - 1024 * y0, ix - 1024 * x0));
            continue;
          }
          const double fy = row.weight, fx = column.weight;
          for (std::uint32_t c = 0; c < channels; ++c) {
            const double top =
                x(pixel(n, row.first, column.first) + c) * (1 - fx) + x(pixel(n, row.first, column.second) + c) * fx;
            const double bottom =
                x(pixel(n, row.second, column.first) + c) * (1 - fx) + x(pixel(n, row.second, column.second) + c) * fx;
            store(y_pixel + c, top * (1 - fy) + bottom * fy);
          }
        }
  }

 private:
  /// The four input indices (clamped to the axis) and weights of one output row or column.
  struct Taps {
    std::array<std::int64_t, 4> index{};
    std::array<double, 4> weight{};
  };

  /// Keys' cubic convolution kernel with coefficient a at distance d (|d| < 2).
  static double cubic(double a, double d) {
    d = std::abs(d);
    if (d <= 1.0) return ((a + 2) * d - (a + 3)) * d * d + 1;
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  }

  /// Taps floor(s) - 1 .. floor(s) + 2 around source coordinate s; with exclude_outside, those off
  /// the axis weigh nothing and the others are scaled to sum to 1.
  Taps bicubic_taps(bool rows, std::uint32_t o, std::uint32_t in, std::uint32_t out) const {
    const double s = ops::Resize::source_coordinate(params_.transform,
                                                    rows ? params_.height_scale : params_.width_scale, o, in, out);
    const auto base = static_cast<std::int64_t>(std::floor(s)) - 1;
    Taps taps;
    double total = 0.0;
    for (std::size_t i = 0; i < 4; ++i) {
      const std::int64_t at = base + static_cast<std::int64_t>(i);
      const bool outside = at < 0 || at >= std::int64_t{in};
      taps.index[i] = std::clamp<std::int64_t>(at, 0, std::int64_t{in} - 1);
      taps.weight[i] = outside && params_.exclude_outside ? 0.0 : cubic(params_.cubic_coefficient, s - double(at));
      total += taps.weight[i];
    }
    if (params_.exclude_outside)
      for (double& w : taps.weight) w /= total;
    return taps;
  }

  ops::Resize::Params params_;
};

}  // namespace ref

template <DataType T>
struct Workload<ops::Resize, RefBackend, T> : ref::ResizeKernel {
  using ResizeKernel::ResizeKernel;
};

}  // namespace kiln
