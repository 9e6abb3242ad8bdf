// SPDX-License-Identifier: Apache-2.0
// Neon Convolution2d: GEMM on packed weights; 1x1 reads the input directly, k x k through an indirection
// table, 3x3 stride 1 by Winograd F(2x2, 3x3); int8 by the int8 GEMM through the same table.
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

#include "kiln/backends/neon/simd/gemm.hpp"
#include "kiln/backends/neon/simd/int8_gemm.hpp"
#include "kiln/backends/neon/simd/winograd.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Rows of A read through an indirection table built at load (indirect GEMM, as XNNPACK does):
/// for output pixel m and tap t, the offset of the input it reads; -1 for padding, which reads a
/// row of zeros; -2 - e for entry e of `edges`, the windows that straddle the left or right border,
/// assembled with their zeros once per inference in the workload's scratch (see RowTaps).
template <class E>
struct IndirectRows {
  using Element = E;
  const E* input;
  const std::ptrdiff_t* offsets;
  std::size_t tap_count;
  const E* zeros;
  const E* edges = nullptr;
  std::size_t taps() const noexcept { return tap_count; }
  const E* row(std::size_t m, std::size_t t) const noexcept {
    const std::ptrdiff_t offset = offsets[m * tap_count + t];
    if (offset >= 0) return input + offset;
    return offset == -1 ? zeros : edges + (-2 - offset);
  }
  /// The same rows from channel `first` on; `zeros` must hold the channels of every group and
  /// row taps (with `edges`) have one group only.
  IndirectRows from_column(std::size_t first) const noexcept {
    return {input + first, offsets, tap_count, zeros, edges};
  }
};

/// The indirection table of a convolution window over an NHWC input, one tap per kernel element.
inline std::vector<std::ptrdiff_t> window_offsets(const TensorShape& x, const TensorShape& y, std::uint32_t kh,
                                                  std::uint32_t kw, const ops::Size2d& stride,
                                                  const ops::Size2d& dilation, const ops::Padding2d& padding) {
  std::vector<std::ptrdiff_t> offsets;
  offsets.reserve(std::size_t{y[0]} * y[1] * y[2] * kh * kw);
  const std::ptrdiff_t height = signed_extent(x[1]), width = signed_extent(x[2]), channels = signed_extent(x[3]);
  for (std::ptrdiff_t n = 0; n < signed_extent(y[0]); ++n)
    for (std::ptrdiff_t oy = 0; oy < signed_extent(y[1]); ++oy)
      for (std::ptrdiff_t ox = 0; ox < signed_extent(y[2]); ++ox)
        for (std::ptrdiff_t ky = 0; ky < signed_extent(kh); ++ky)
          for (std::ptrdiff_t kx = 0; kx < signed_extent(kw); ++kx) {
            const std::ptrdiff_t iy =
                oy * signed_extent(stride.height) - signed_extent(padding.top) + ky * signed_extent(dilation.height);
            const std::ptrdiff_t ix =
                ox * signed_extent(stride.width) - signed_extent(padding.left) + kx * signed_extent(dilation.width);
            const bool inside = iy >= 0 && iy < height && ix >= 0 && ix < width;
            offsets.push_back(inside ? ((n * height + iy) * width + ix) * channels : -1);
          }
  return offsets;
}

/// Inputs with few channels (a first layer's RGB): one tap per kernel *row*, whose kw x C values
/// lie next to each other in NHWC memory, so the GEMM's inner loop runs kw x C steps between
/// pointer loads instead of C. A window row that straddles the left or right border has no such
/// run in the input; those (a column or two per side) are assembled with their zeros into
/// `edges` once per inference, a few kilobytes.
struct RowTaps {
  RowTaps() = default;
  RowTaps(const TensorShape& x, const TensorShape& y, std::uint32_t kh, std::uint32_t kw,
          const ops::Convolution2d::Params& p)
      : window(std::size_t{kw} * x[3]), kernel_width(kw) {
    const std::ptrdiff_t height = signed_extent(x[1]), width = signed_extent(x[2]), channels = signed_extent(x[3]);
    const auto column = [&](std::ptrdiff_t ox) {
      return ox * signed_extent(p.stride.width) - signed_extent(p.padding.left);
    };
    for (std::ptrdiff_t ox = 0; ox < signed_extent(y[2]); ++ox)
      if (column(ox) < 0 || column(ox) + signed_extent(kw) > width) straddling.push_back(column(ox));
    offsets.reserve(std::size_t{y[0]} * y[1] * y[2] * kh);
    for (std::ptrdiff_t n = 0; n < signed_extent(y[0]); ++n)
      for (std::ptrdiff_t oy = 0; oy < signed_extent(y[1]); ++oy) {
        std::size_t edge = 0;  // index into `straddling` of the next border window of this row
        for (std::ptrdiff_t ox = 0; ox < signed_extent(y[2]); ++ox) {
          const std::ptrdiff_t ix = column(ox);
          const bool straddles = edge < straddling.size() && straddling[edge] == ix;
          for (std::ptrdiff_t ky = 0; ky < signed_extent(kh); ++ky) {
            const std::ptrdiff_t iy = oy * signed_extent(p.stride.height) - signed_extent(p.padding.top) +
                                      ky * signed_extent(p.dilation.height);
            const std::ptrdiff_t input_row = n * height + iy;
            if (iy < 0 || iy >= height)
              offsets.push_back(-1);
            else if (straddles)
              offsets.push_back(-2 - static_cast<std::ptrdiff_t>((input_row * straddling.size() + edge) * window));
            else
              offsets.push_back((input_row * width + ix) * channels);
          }
          if (straddles) ++edge;
        }
      }
  }

  /// Elements the border windows of an input of rows x[0] * x[1] take.
  std::size_t edge_elements(const TensorShape& x) const {
    return std::size_t{x[0]} * x[1] * straddling.size() * window;
  }

  /// Writes the border windows of every input row to `out`, zeros where they reach outside.
  template <class E>
  void gather_edges(const E* input, const TensorShape& x, E* out) const {
    const std::size_t channels = x[3];
    for (std::size_t row = 0; row < std::size_t{x[0]} * x[1]; ++row)
      for (const std::ptrdiff_t ix : straddling) {
        for (std::ptrdiff_t kx = 0; kx < kernel_width; ++kx) {
          E* to = out + kx * channels;
          if (ix + kx >= 0 && ix + kx < signed_extent(x[2]))
            std::memcpy(to, input + (row * x[2] + ix + kx) * channels, channels * sizeof(E));
          else
            std::memset(to, 0, channels * sizeof(E));
        }
        out += window;
      }
  }

  std::size_t window = 0;  // elements in one window row: kw x C; 0 when this layout is not used
  std::ptrdiff_t kernel_width = 0;
  std::vector<std::ptrdiff_t> straddling;  // first input column of each border window of a row
  std::vector<std::ptrdiff_t> offsets;
};

/// A convolution as a GEMM on packed weights in elements E (float; Float16 where the target has
/// half-precision arithmetic): 1x1 stride 1 reads the input directly, inputs with few channels
/// through row taps, other windows through an indirection table. Scratch: the border windows of
/// row taps, then a gathered tile per thread for inputs with few channels (gemm_scratch_elements).
template <class E>
class GemmConvolution {
 public:
  GemmConvolution() = default;
  explicit GemmConvolution(const WorkloadInfo<ops::Convolution2d>& info)
      : groups_(info.params.groups),
        input_shape_(info.inputs[0].shape),
        epilogue_(Epilogue::from(info.params.activation)) {
    const ops::Convolution2d::Params& p = info.params;
    const TensorShape& xs = info.inputs[0].shape;
    const TensorShape& ws = info.inputs[1].shape;
    const auto* weights = static_cast<const E*>(info.constants[1]);
    const auto* bias = info.inputs.size() > 2 ? static_cast<const E*>(info.constants[2]) : nullptr;
    weights_ = BasicPackedWeights<E>(weights, bias, groups_, ws[0] / groups_, std::size_t{ws[1]} * ws[2] * ws[3]);
    const bool pointwise = ws[1] == 1 && ws[2] == 1 && p.stride == ops::Size2d{1, 1} && p.padding == ops::Padding2d{};
    if (pointwise) return;
    const TensorShape& ys = info.outputs[0].shape;
    if (ws[3] < min_tap_channels && groups_ == 1 && p.dilation.width == 1) {
      row_taps_ = RowTaps(xs, ys, ws[1], ws[2], p);
      zeros_.assign(std::size_t{ws[2]} * ws[3], E{});
      return;
    }
    offsets_ = window_offsets(xs, ys, ws[1], ws[2], p.stride, p.dilation, p.padding);
    zeros_.assign(ws[3], E{});
  }

  ScratchSize scratch(const Context& context) const {
    return {(edge_elements() + context.threads() * gemm_scratch_elements<E>(taps(), weights_.k())) * sizeof(E),
            alignof(GemmVec<E>)};
  }

  void run(const E* x, const TensorShape& xs, E* y, const TensorShape& ys, Context& context,
           std::span<std::byte> scratch) const {
    const std::span<E> elements_of_scratch(reinterpret_cast<E*>(scratch.data()), scratch.size() / sizeof(E));
    const std::size_t pixels = std::size_t{ys[0]} * ys[1] * ys[2];
    const std::size_t group_in = xs[3] / groups_;
    const std::span<E> edges = elements_of_scratch.first(edge_elements()),
                       tiles = elements_of_scratch.subspan(edge_elements());
    if (row_taps_.window > 0) {
      row_taps_.gather_edges(x, xs, edges.data());
      gemm(context, IndirectRows<E>{x, row_taps_.offsets.data(), taps(), zeros_.data(), edges.data()}, pixels, weights_,
           y, ys[3], epilogue_, tiles);
    } else if (offsets_.empty()) {
      gemm(context, BasicDenseRows<E>{x, xs[3]}, pixels, weights_, y, ys[3], epilogue_, tiles, group_in);
    } else {
      gemm(context, IndirectRows<E>{x, offsets_.data(), taps(), zeros_.data()}, pixels, weights_, y, ys[3], epilogue_,
           tiles, group_in);
    }
  }

 private:
  /// Rows of A the GEMM reads per output pixel: kernel rows (row taps), kernel elements, or one.
  std::size_t taps() const noexcept {
    if (row_taps_.window > 0) return weights_.k() / row_taps_.window;
    return offsets_.empty() ? 1 : weights_.k() / (input_shape_[3] / groups_);
  }
  /// The border windows' part of the scratch, in whole cache lines.
  std::size_t edge_elements() const noexcept {
    constexpr std::size_t per_line = 64 / sizeof(E);
    return row_taps_.window > 0 ? (row_taps_.edge_elements(input_shape_) + per_line - 1) / per_line * per_line : 0;
  }

  std::uint32_t groups_ = 1;
  TensorShape input_shape_;
  BasicPackedWeights<E> weights_;
  Epilogue epilogue_;
  RowTaps row_taps_;
  std::vector<std::ptrdiff_t> offsets_;  // one tap per kernel element; empty for 1x1 and row taps
  std::vector<E> zeros_;
};

/// Deviation from Ref: weights are packed at load, so they (and the bias) must be constants.
/// 3x3 stride 1 where Winograd3x3::suits by Winograd F(2x2, 3x3), the rest by GemmConvolution.
template <>
struct Kernel<ops::Convolution2d, DataType::Float32> : Float32Kernel<ops::Convolution2d> {
  static constexpr std::size_t inputs_read_at_run = 1;  // the constants after it are prepared at load
  static Status is_supported(const WorkloadInfo<ops::Convolution2d>& info) {
    return require_constants_of(info, DataType::Float32, inputs_read_at_run);
  }

  explicit Kernel(const WorkloadInfo<ops::Convolution2d>& info)
      : Float32Kernel(info), output_shape_(info.outputs[0].shape) {
    const TensorShape& ws = info.inputs[1].shape;
    if (Winograd3x3::suits(ws, params_, output_shape_))
      winograd_ =
          Winograd3x3(static_cast<const float*>(info.constants[1]),
                      info.inputs.size() > 2 ? static_cast<const float*>(info.constants[2]) : nullptr, ws[0], ws[3]);
    else
      gemm_ = GemmConvolution<float>(info);
  }

  ScratchSize scratch(const Context& context) const {
    if (winograd_) return {winograd_->scratch_floats(output_shape_, context.threads()) * sizeof(float), alignof(Vec)};
    return gemm_.scratch(context);
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context,
           std::span<std::byte> scratch) const {
    if (winograd_)
      return winograd_->run(context, floats(in[0]), in[0].info.shape, floats(out[0]), out[0].info.shape,
                            params_.padding, Epilogue::from(params_.activation),
                            {reinterpret_cast<float*>(scratch.data()), scratch.size() / sizeof(float)});
    gemm_.run(floats(in[0]), in[0].info.shape, floats(out[0]), out[0].info.shape, context, scratch);
  }

 private:
  TensorShape output_shape_;
  std::optional<Winograd3x3> winograd_;  // where Winograd3x3::suits; gemm_ otherwise
  GemmConvolution<float> gemm_;
};

#if KILN_NEON_HALF_ARITHMETIC
/// Float16 with half-precision arithmetic: GemmConvolution on halves, accumulating in Float16
/// (decision 0020); no Winograd, whose transforms lose more than Float16 has to lose.
template <>
struct Kernel<ops::Convolution2d, DataType::Float16> : GemmConvolution<Half> {
  static constexpr std::size_t inputs_read_at_run = 1;
  static Status is_supported(const WorkloadInfo<ops::Convolution2d>& info) {
    return require_constants_of(info, DataType::Float16, inputs_read_at_run);
  }
  explicit Kernel(const WorkloadInfo<ops::Convolution2d>& info) : GemmConvolution<Half>(info) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context,
           std::span<std::byte> scratch) const {
    GemmConvolution<Half>::run(static_cast<const Half*>(in[0].data), in[0].info.shape, static_cast<Half*>(out[0].data),
                               out[0].info.shape, context, scratch);
  }
};
#endif

/// int8 (decision 0014): the int8 GEMM, 1x1 stride 1 reading the input directly, other windows
/// through window_offsets merged into runs (Int8Windows), whose padding reads the zero point.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Kernel<ops::Convolution2d, T>
    : Int8GemmKernel<ops::Convolution2d, Kernel<ops::Convolution2d, T>> {
  Kernel(const WorkloadInfo<ops::Convolution2d>& info, const quantized::OutputStage& stage)
      : Int8GemmKernel<ops::Convolution2d, Kernel>(
            info, stage, info.params.groups, info.inputs[1].shape[0] / info.params.groups,
            quantized::reduction_length<ops::Convolution2d>(info.inputs[1].shape)),
        params_(info.params),
        input_channels_(info.inputs[0].shape[3]) {
    const TensorShape& ws = info.inputs[1].shape;
    const bool pointwise =
        ws[1] == 1 && ws[2] == 1 && params_.stride == ops::Size2d{1, 1} && params_.padding == ops::Padding2d{};
    if (!pointwise)
      windows_ = Int8Windows(window_offsets(info.inputs[0].shape, info.outputs[0].shape, ws[1], ws[2], params_.stride,
                                            params_.dilation, params_.padding),
                             std::size_t{ws[1]} * ws[2], input_channels_ / params_.groups);
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context,
           std::span<std::byte> scratch) const {
    const TensorShape& ys = out[0].info.shape;
    const auto* x = static_cast<const std::uint8_t*>(in[0].data);
    const Int8Rows rows = windows_.runs.empty() ? Int8Rows{x, input_channels_} : windows_.rows(x);
    int8_gemm(context, rows, std::size_t{ys[0]} * ys[1] * ys[2], this->weights_,
              static_cast<std::uint8_t*>(out[0].data), ys[3], scratch, input_channels_ / params_.groups);
  }

 private:
  ops::Convolution2d::Params params_;
  std::size_t input_channels_;
  Int8Windows windows_;  // the windows' runs of bytes; none for 1x1 stride 1
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
