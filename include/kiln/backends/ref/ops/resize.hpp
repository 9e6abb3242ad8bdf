// SPDX-License-Identifier: Apache-2.0
// Reference Resize: every output pixel samples the input at its transformed coordinates. Nearest
// moves elements, so it also runs on Float16 and 8-bit quantised tensors; bilinear computes in
// Float32 (Float16 widened, its result rounded back), and on 8-bit tensors of a network in
// TensorFlow Lite's arithmetic as TensorFlow Lite does (tflite_recipes::bilinear_weights).
#pragma once

#include <algorithm>
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
    for (std::uint32_t n = 0; n < ys[0]; ++n)
      for (std::uint32_t oy = 0; oy < ys[1]; ++oy)
        for (std::uint32_t ox = 0; ox < ys[2]; ++ox) {
          const double sy = ops::Resize::source_coordinate(params_.transform, oy, xs[1], ys[1]);
          const double sx = ops::Resize::source_coordinate(params_.transform, ox, xs[2], ys[2]);
          const std::uint64_t y_pixel = ((std::uint64_t{n} * ys[1] + oy) * ys[2] + ox) * channels;
          if (params_.method == ops::ResizeMethod::Nearest) {
            const std::int64_t iy = std::clamp<std::int64_t>(ops::Resize::nearest(params_.rounding, sy), 0, xs[1] - 1);
            const std::int64_t ix = std::clamp<std::int64_t>(ops::Resize::nearest(params_.rounding, sx), 0, xs[2] - 1);
            std::memcpy(bytes(out[0]) + y_pixel * element, bytes(in[0]) + pixel(n, iy, ix) * element,
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
          const bool half = in[0].info.type == DataType::Float16;
          auto x = [&](std::int64_t i) {
            return half ? half_to_float(static_cast<const Half*>(in[0].data)[i]) : floats(in[0])[i];
          };
          auto store = [&](std::uint32_t c, float value) {
            if (half)
              static_cast<Half*>(out[0].data)[y_pixel + c] = float_to_half(value);
            else
              floats(out[0])[y_pixel + c] = value;
          };
          const double cy = std::clamp(sy, 0.0, double(xs[1] - 1));
          const double cx = std::clamp(sx, 0.0, double(xs[2] - 1));
          const auto y0 = static_cast<std::int64_t>(std::floor(cy)), x0 = static_cast<std::int64_t>(std::floor(cx));
          const std::int64_t y1 = std::min<std::int64_t>(y0 + 1, xs[1] - 1),
                             x1 = std::min<std::int64_t>(x0 + 1, xs[2] - 1);
          const double fy = cy - y0, fx = cx - x0;
          for (std::uint32_t c = 0; c < channels; ++c) {
            const double top = x(pixel(n, y0, x0) + c) * (1 - fx) + x(pixel(n, y0, x1) + c) * fx;
            const double bottom = x(pixel(n, y1, x0) + c) * (1 - fx) + x(pixel(n, y1, x1) + c) * fx;
            store(c, static_cast<float>(top * (1 - fy) + bottom * fy));
          }
        }
  }

 private:
  ops::Resize::Params params_;
};

}  // namespace ref

template <DataType T>
struct Workload<ops::Resize, RefBackend, T> : ref::ResizeKernel {
  using ResizeKernel::ResizeKernel;
};

}  // namespace kiln
