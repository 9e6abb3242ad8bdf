// SPDX-License-Identifier: Apache-2.0
// Neon Resize: sampling positions and weights computed at load; each output pixel is a channel run
// copied (nearest, any element size: Float32 or 8-bit) or blended from four input pixels a vector at
// a time (bilinear, Float32).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "kiln/backends/moved_elements.hpp"
#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

class ResizeKernel {
 public:
  explicit ResizeKernel(const WorkloadInfo<ops::Resize>& info)
      : params_(info.params),
        x_(info.inputs[0].shape),
        y_(info.outputs[0].shape),
        element_(size_of(info.outputs[0].type)),
        rows_(samples(true, y_[1], x_[1])),
        columns_(samples(false, y_[2], x_[2])) {}
  static Status is_supported(const WorkloadInfo<ops::Resize>& info) { return check_accelerated_resize(info); }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const std::uint64_t channels = x_[3];
    const std::uint64_t x_row = std::uint64_t{x_[2]} * channels, x_image = x_[1] * x_row;
    const bool nearest = params_.method == ops::ResizeMethod::Nearest;
    context.parallel_for(
        std::size_t{y_[0]} * y_[1],
        [&](std::size_t task) {
          const std::size_t n = task / y_[1], oy = task % y_[1];
          const Sample& r = rows_[oy];
          const std::uint64_t image = n * x_image, first_output = task * y_[2] * channels;
          if (nearest) {
            const std::byte* top = bytes(in[0]) + (image + r.first * x_row) * element_;
            std::byte* yp = bytes(out[0]) + first_output * element_;
            for (const Sample& c : columns_) {
              std::memcpy(yp, top + c.first * channels * element_, channels * element_);
              yp += channels * element_;
            }
            return;
          }
          const float* top = floats(in[0]) + image + r.first * x_row;
          const float* bottom = floats(in[0]) + image + r.second * x_row;
          float* yp = floats(out[0]) + first_output;
          for (const Sample& c : columns_) {
            blend(top + c.first * channels, top + c.second * channels, bottom + c.first * channels,
                  bottom + c.second * channels, r.weight, c.weight, yp, channels);
            yp += channels;
          }
        },
        std::uint64_t{y_[2]} * channels * (nearest ? 1 : 8));
  }

 private:
  /// ops::Resize::Sample with its weight in Float32, as blend() takes it.
  struct Sample {
    std::int64_t first = 0, second = 0;
    float weight = 0.0f;
  };

  std::vector<Sample> samples(bool rows, std::uint32_t out, std::uint32_t in) const {
    std::vector<Sample> result(out);
    for (std::uint32_t o = 0; o < out; ++o) {
      const auto s = ops::Resize::sample(params_, rows, o, in, out);
      result[o] = {s.first, s.second, static_cast<float>(s.weight)};
    }
    return result;
  }

  static void blend(const float* a, const float* b, const float* c, const float* d, float fy, float fx, float* y,
                    std::size_t n) {
    const Vec wx(fx), wy(fy);
    auto mix = [&](Vec va, Vec vb, Vec vc, Vec vd) {
      const Vec top = xsimd::fma(vb - va, wx, va), bottom = xsimd::fma(vd - vc, wx, vc);
      return xsimd::fma(bottom - top, wy, top);
    };
    for (std::size_t i = 0; i < n; i += lanes) {
      const std::size_t count = std::min(lanes, n - i);
      store_upto(
          y + i,
          mix(load_upto(a + i, count), load_upto(b + i, count), load_upto(c + i, count), load_upto(d + i, count)),
          count);
    }
  }

  ops::Resize::Params params_;
  TensorShape x_, y_;
  std::size_t element_;
  std::vector<Sample> rows_, columns_;
};

template <DataType T>
struct Kernel<ops::Resize, T> : ResizeKernel {
  using ResizeKernel::ResizeKernel;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
