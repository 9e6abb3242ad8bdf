// SPDX-License-Identifier: Apache-2.0
// Neon DepthwiseConvolution2d: channels in vectors, weights held in registers along a row, taps
// unrolled for 3x3 and 5x5, and no bounds checks for the output pixels whose window is inside
// (Float16 on halves where the target has their arithmetic, else widened to Float32 lanes); int8
// with a channel in each int32 lane.
#pragma once

#include <algorithm>
#include <concepts>
#include <numeric>
#include <span>
#include <type_traits>
#include <vector>

#include "kiln/backends/neon/simd/gemm.hpp"
#include "kiln/backends/neon/simd/int8_gemm.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// The first and one-past-last kernel taps of a window starting at input coordinate `start`
/// whose coordinates start + tap x dilation are inside [0, size).
inline std::ptrdiff_t first_tap(std::ptrdiff_t start, std::ptrdiff_t dilation) {
  return start >= 0 ? 0 : (-start + dilation - 1) / dilation;
}
inline std::ptrdiff_t end_tap(std::ptrdiff_t start, std::ptrdiff_t dilation, std::ptrdiff_t taps, std::ptrdiff_t size) {
  return std::min(taps, start >= size ? 0 : (size - 1 - start) / dilation + 1);
}

/// Output columns [begin, end) whose whole window row lies inside an input row of `width`.
struct InteriorColumns {
  std::ptrdiff_t begin, end;
};
inline InteriorColumns interior_columns(std::ptrdiff_t width, std::ptrdiff_t out_width, std::ptrdiff_t stride,
                                        std::ptrdiff_t dilation, std::ptrdiff_t kernel_width, std::ptrdiff_t left) {
  std::ptrdiff_t begin = (left + stride - 1) / stride, end = out_width;
  while (end > begin && (end - 1) * stride - left + (kernel_width - 1) * dilation >= width) --end;
  return {std::min(begin, end), end};
}

/// The window the kernels unroll: 3 or 5 for a 3x3 or 5x5 window with stride 1 or 2 and no
/// dilation; 0 for any other window, read at run time.
inline std::uint32_t unrolled_window(const ops::Size2d& kernel, const ops::DepthwiseConvolution2d::Params& p) {
  const bool plain = p.dilation == ops::Size2d{1, 1};
  const bool square_stride = p.stride.height == p.stride.width && (p.stride.width == 1 || p.stride.width == 2);
  if (!plain || !square_stride || kernel.height != kernel.width) return 0;
  return kernel.width == 3 || kernel.width == 5 ? kernel.width : 0;
}

/// Calls f.template operator()<K, Stride>() with K = unrolled_window (Stride 1 or 2; 0 with K 0).
template <class F>
void with_unrolled_window(const ops::Size2d& kernel, const ops::DepthwiseConvolution2d::Params& p, F&& f) {
  const bool stride_1 = p.stride.width == 1;
  switch (unrolled_window(kernel, p)) {
    case 3: return stride_1 ? f.template operator()<3, 1>() : f.template operator()<3, 2>();
    case 5: return stride_1 ? f.template operator()<5, 1>() : f.template operator()<5, 2>();
    default: return f.template operator()<0, 0>();
  }
}

/// Walks one output row for one block of channels: border_pixel(ox) for the columns whose window
/// crosses the input's edge, and for every column when K is 0 (any window) or the row's window
/// misses kernel rows; for the others the function interior_pixels() returns, made once the row
/// is known to have some (it loads the unrolled window's weights into registers).
template <std::uint32_t K, class Border, class Interior>
void walk_row(std::ptrdiff_t out_width, InteriorColumns interior, bool all_kernel_rows, Border&& border_pixel,
              Interior&& interior_pixels) {
  if (K == 0 || !all_kernel_rows) {
    for (std::ptrdiff_t ox = 0; ox < out_width; ++ox) border_pixel(ox);
    return;
  }
  auto interior_pixel = interior_pixels();
  for (std::ptrdiff_t ox = 0; ox < interior.begin; ++ox) border_pixel(ox);
  for (std::ptrdiff_t ox = interior.begin; ox < interior.end; ++ox) interior_pixel(ox);
  for (std::ptrdiff_t ox = interior.end; ox < out_width; ++ox) border_pixel(ox);
}

/// How many slices of whole vectors a depthwise layer's channels split into, so that a layer of few
/// output rows (7x7, 14x14) still has tasks for every thread: with rows alone, two threads shared
/// a 7x7 layer 4 rows to 3. It depends on the shape only, like every split (decision 0008).
inline std::size_t channel_slices(std::size_t rows, std::size_t full_vectors) {
  constexpr std::size_t tasks_wanted = 16;
  if (rows >= tasks_wanted) return 1;
  return std::clamp<std::size_t>((tasks_wanted + rows - 1) / rows, 1, std::max<std::size_t>(full_vectors, 1));
}

/// Slice `slice` of `slices` of [0, count): the part of a layer's vectors (or lane blocks) one task takes.
struct SliceBounds {
  std::size_t begin, end;
};
inline SliceBounds slice_bounds(std::size_t count, std::size_t slice, std::size_t slices) {
  return {count * slice / slices, count * (slice + 1) / slices};
}

/// Fails unless a depthwise layer's channel multiplier is 1, the case Neon's kernels cover.
inline Status require_channel_multiplier_1(const WorkloadInfo<ops::DepthwiseConvolution2d>& info) {
  if (info.inputs[1].shape[3] != info.inputs[0].shape[3])
    return Status::error(ErrorCode::Unsupported, "runs DepthwiseConvolution2d with channel multiplier 1 only");
  return Status::ok();
}

/// The vector a depthwise convolution on elements E computes in: HalfVec for Float16 where the
/// target has half-precision arithmetic (summing in Float16), else Vec (floats, or halves widened).
template <class E>
struct DepthwiseVector {
  using type = Vec;
};
#if KILN_NEON_HALF_ARITHMETIC
template <>
struct DepthwiseVector<Half> {
  using type = HalfVec;
};
#endif

/// A depthwise convolution with channel multiplier 1 on elements E (float or Float16), channels in
/// DepthwiseVector<E> vectors. Weights and bias are copied at load. Sums taps in the same (ky, kx)
/// order as Ref.
template <class E>
class DepthwiseConvolution {
  using V = typename DepthwiseVector<E>::type;
  static constexpr std::size_t lanes = V::size;
  // Halves computed in Float32 lanes take a fused activation before their one rounding; floats
  // (exact in the output) and Float16 arithmetic take it on the output row.
  static constexpr bool activation_in_lanes = std::same_as<E, Half> && std::same_as<V, Vec>;

 public:
  explicit DepthwiseConvolution(const WorkloadInfo<ops::DepthwiseConvolution2d>& info)
      : params_(info.params), epilogue_(Epilogue::from(params_.activation)) {
    const TensorShape& ws = info.inputs[1].shape;
    kernel_ = {ws[1], ws[2]};
    const auto* w = static_cast<const E*>(info.constants[1]);
    weights_.assign(w, w + ws.num_elements());
    bias_.assign(ws[3], E{});
    if (info.inputs.size() > 2) std::copy_n(static_cast<const E*>(info.constants[2]), ws[3], bias_.begin());
  }

  void run(const ConstTensor& in, const Tensor& out, Context& context) const {
    with_unrolled_window(kernel_, params_,
                         [&]<std::uint32_t K, std::uint32_t Stride>() { rows<K, Stride>(in, out, context); });
  }

 private:
  // K > 0: a K x K window with stride Stride and no dilation, taps unrolled with the weights in
  // registers; K == 0: any window, read at run time.
  template <std::uint32_t K, std::uint32_t Stride>
  void rows(const ConstTensor& in, const Tensor& out, Context& context) const {
    const TensorShape& xs = in.info.shape;
    const TensorShape& ys = out.info.shape;
    const std::ptrdiff_t width = xs[2], channels = xs[3], out_width = ys[2];
    const InteriorColumns interior = interior_columns(width, out_width, params_.stride.width, params_.dilation.width,
                                                      kernel_.width, params_.padding.left);
    const std::size_t out_rows = std::size_t{ys[0]} * ys[1], full_vectors = channels / std::ptrdiff_t{lanes};
    const std::size_t slices = channel_slices(out_rows, full_vectors);
    context.parallel_for(
        out_rows * slices,
        [&](std::size_t task) {
          const std::size_t row = task / slices, slice = task % slices;
          const std::ptrdiff_t n = row / ys[1], oy = row % ys[1];
          const E* x = static_cast<const E*>(in.data) + n * xs[1] * width * channels;
          E* y = static_cast<E*>(out.data) + row * out_width * channels;
          const std::ptrdiff_t y0 = oy * params_.stride.height - params_.padding.top;
          const std::ptrdiff_t ky0 = first_tap(y0, params_.dilation.height),
                               ky1 = end_tap(y0, params_.dilation.height, kernel_.height, xs[1]);
          const SliceBounds vectors = slice_bounds(full_vectors, slice, slices);
          const std::ptrdiff_t begin = vectors.begin * lanes,
                               end = slice + 1 == slices ? channels : vectors.end * lanes;
          std::ptrdiff_t c = begin;
          for (; c + std::ptrdiff_t{lanes} <= end; c += lanes)
            channel_block<K, Stride, false>(x, y, xs, ys, c, y0, ky0, ky1, interior, lanes);
          // The last channels as one whole vector ending at the last channel: it computes a few
          // channels again, to the same values (in the same task), where a partial vector would
          // copy every load.
          if (c < end && channels >= std::ptrdiff_t{lanes})
            channel_block<K, Stride, false>(x, y, xs, ys, channels - std::ptrdiff_t{lanes}, y0, ky0, ky1, interior,
                                            lanes);
          // Fewer channels than a vector: the loop for any window, as unrolled taps of partial
          // vectors would each keep a buffer in one frame (over 4 KiB at 16 lanes).
          else if (c < end)
            channel_block<0, 0, true>(x, y, xs, ys, c, y0, ky0, ky1, interior, end - c);
          if constexpr (!activation_in_lanes) {
            if (slices == 1)
              apply_activation(epilogue_.activation, y, std::size_t(out_width * channels));
            else
              for (std::ptrdiff_t ox = 0; ox < out_width; ++ox)
                apply_activation(epilogue_.activation, y + ox * channels + begin, std::size_t(end - begin));
          }
        },
        std::size_t{ys[2]} * (channels / slices) * kernel_.height * kernel_.width);
  }

  // One vector of `count` channels starting at c, across a whole output row.
  template <std::uint32_t K, std::uint32_t Stride, bool Tail>
  void channel_block(const E* x, E* y, const TensorShape& xs, const TensorShape& ys, std::ptrdiff_t c,
                     std::ptrdiff_t y0, std::ptrdiff_t ky0, std::ptrdiff_t ky1, InteriorColumns interior,
                     std::size_t count) const {
    auto load = [&](const E* p) -> V {     // [&]: `count` goes unused when !Tail
      if constexpr (std::same_as<V, Vec>)  // floats, or halves widened
        return load_upto(p, Tail ? count : lanes);
      else if constexpr (Tail)
        return load_tail(p, count);
      else
        return V::load_unaligned(p);
    };
    auto store = [&](E* p, V v) {
      if constexpr (activation_in_lanes)
        if (epilogue_.activation) v = activate(*epilogue_.activation, v);
      if constexpr (std::same_as<V, Vec>)
        store_upto(p, v, Tail ? count : lanes);
      else if constexpr (Tail)
        store_tail(p, v, count);
      else
        v.store_unaligned(p);
    };
    const std::ptrdiff_t width = xs[2], channels = xs[3], out_width = ys[2];
    const std::ptrdiff_t kw = kernel_.width, sw = params_.stride.width, dh = params_.dilation.height,
                         dw = params_.dilation.width;
    const V lo(epilogue_.min), hi(epilogue_.max), bias = load(&bias_[c]);
    // Any window: the taps inside the input, found per pixel.
    auto border_pixel = [&](std::ptrdiff_t ox) {
      const std::ptrdiff_t x0 = ox * sw - static_cast<std::ptrdiff_t>(params_.padding.left);
      const std::ptrdiff_t kx0 = first_tap(x0, dw), kx1 = end_tap(x0, dw, kw, width);
      V acc = bias;
      for (std::ptrdiff_t ky = ky0; ky < ky1; ++ky)
        for (std::ptrdiff_t kx = kx0; kx < kx1; ++kx)
          acc = multiply_add(load(x + ((y0 + ky * dh) * width + x0 + kx * dw) * channels + c),
                             load(&weights_[(ky * kw + kx) * channels + c]), acc);
      store(y + ox * channels + c, clamp_lanes(acc, lo, hi));
    };
    if constexpr (K == 0) {
      for (std::ptrdiff_t ox = 0; ox < out_width; ++ox) border_pixel(ox);
    } else {
      V w[K * K];
#pragma GCC unroll 25
      for (std::size_t t = 0; t < K * K; ++t) w[t] = load(&weights_[t * channels + c]);
      // Pixels whose window rows lie inside the input row, in groups of P along the row: each input
      // column a group's windows share is loaded once, and the group's P sums are independent
      // chains. Kernel rows outside the input (the same for the whole row) are skipped.
      auto interior_pixels = [&]<std::ptrdiff_t P>(std::ptrdiff_t ox) {
        constexpr std::ptrdiff_t columns = (P - 1) * std::ptrdiff_t{Stride} + std::ptrdiff_t{K};
        const std::ptrdiff_t x0 = ox * std::ptrdiff_t{Stride} - static_cast<std::ptrdiff_t>(params_.padding.left);
        V acc[P];
#pragma GCC unroll 8
        for (std::ptrdiff_t p = 0; p < P; ++p) acc[p] = bias;
#pragma GCC unroll 5
        for (std::ptrdiff_t ky = 0; ky < std::ptrdiff_t{K}; ++ky) {
          if (ky < ky0 || ky >= ky1) continue;
          const E* row = x + ((y0 + ky) * width + x0) * channels + c;
#pragma GCC unroll 16
          for (std::ptrdiff_t j = 0; j < columns; ++j) {
            const V v = load(row + j * channels);
#pragma GCC unroll 8
            for (std::ptrdiff_t p = 0; p < P; ++p)
              if (const std::ptrdiff_t kx = j - p * std::ptrdiff_t{Stride}; kx >= 0 && kx < std::ptrdiff_t{K})
                acc[p] = multiply_add(v, w[ky * K + kx], acc[p]);
          }
        }
#pragma GCC unroll 8
        for (std::ptrdiff_t p = 0; p < P; ++p) store(y + (ox + p) * channels + c, clamp_lanes(acc[p], lo, hi));
      };
      constexpr std::ptrdiff_t group = 4;
      std::ptrdiff_t ox = 0;
      for (; ox < interior.begin; ++ox) border_pixel(ox);
      for (; ox + group <= interior.end; ox += group) interior_pixels.template operator()<group>(ox);
      for (; ox < interior.end; ++ox) interior_pixels.template operator()<1>(ox);
      for (; ox < out_width; ++ox) border_pixel(ox);
    }
  }

  ops::DepthwiseConvolution2d::Params params_;
  Epilogue epilogue_;
  ops::Size2d kernel_;
  std::vector<E> weights_, bias_;
};

/// Deviation from Ref: channel multiplier 1 only (others run Ref's kernel); weights and bias are
/// copied at load, so they must be constants.
template <>
struct Kernel<ops::DepthwiseConvolution2d, DataType::Float32> : Float32Kernel<ops::DepthwiseConvolution2d> {
  static constexpr std::size_t inputs_read_at_run = 1;  // the constants after it are prepared at load
  static Status is_supported(const WorkloadInfo<ops::DepthwiseConvolution2d>& info) {
    if (auto s = require_channel_multiplier_1(info); !s) return s;
    return require_constants_of(info, DataType::Float32, inputs_read_at_run);
  }
  explicit Kernel(const WorkloadInfo<ops::DepthwiseConvolution2d>& info) : Float32Kernel(info), depthwise_(info) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    depthwise_.run(in[0], out[0], context);
  }

 private:
  DepthwiseConvolution<float> depthwise_;
};

/// Float16: halves read and written in place, with no Float32 buffers; with half-precision
/// arithmetic eight channels a vector, summing in Float16 (decision 0020), else in Float32 lanes.
template <>
struct Kernel<ops::DepthwiseConvolution2d, DataType::Float16> : DepthwiseConvolution<Half> {
  static constexpr std::size_t inputs_read_at_run = 1;
  static Status is_supported(const WorkloadInfo<ops::DepthwiseConvolution2d>& info) {
    if (auto s = require_channel_multiplier_1(info); !s) return s;
    return require_constants_of(info, DataType::Float16, inputs_read_at_run);
  }
  explicit Kernel(const WorkloadInfo<ops::DepthwiseConvolution2d>& info) : DepthwiseConvolution<Half>(info) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    DepthwiseConvolution<Half>::run(in[0], out[0], context);
  }
};

/// int8 (decision 0014): the Float32 kernel's structure, along an output row one block of channels
/// at a time. Where the whole window is inside the input the zero point's share is folded into the
/// bias (sum x w), and 3x3 and 5x5 windows are unrolled: four taps at a time where the instruction
/// set has Int8DepthwiseQuads (AVX512-VNNI), else a channel in each int32 lane with the widened
/// weights in registers; their border pixels take the same taps, reading the zero point for those
/// outside the input. Any other window adds (x - zero point) x w for the taps inside, a channel a
/// lane (border_pixel). Sums are exact in int32; then Int8Dot's output stage. Channel multiplier 1;
/// weights and bias constants, laid out at load.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Kernel<ops::DepthwiseConvolution2d, T> {
  static constexpr std::size_t inputs_read_at_run = 1;  // the constants after it are prepared at load
  static constexpr std::size_t lanes = Int8Dot::lanes;
  static Status is_supported(const WorkloadInfo<ops::DepthwiseConvolution2d>& info) {
    if (auto s = require_channel_multiplier_1(info); !s) return s;
    if (auto s = quantized::check_layer(info); !s) return s;
    return require_constants(info, inputs_read_at_run);
  }
  static Expected<Kernel> create(const WorkloadInfo<ops::DepthwiseConvolution2d>& info, Context&) {
    auto stage = quantized::OutputStage::make(info);
    if (!stage) return stage.status();
    return Kernel(info, *stage);
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    with_unrolled_window(kernel_, params_, [&]<std::uint32_t K, std::uint32_t Stride>() {
      const TensorShape& xs = in[0].info.shape;
      const TensorShape& ys = out[0].info.shape;
      const InteriorColumns interior = interior_columns(xs[2], ys[2], params_.stride.width, params_.dilation.width,
                                                        kernel_.width, params_.padding.left);
      const auto* input = static_cast<const std::uint8_t*>(in[0].data);
      auto* output = static_cast<std::uint8_t*>(out[0].data);
      // A row's quads run in blocks that cross pixels, so they take whole rows; lane blocks also
      // split a row's channels where the layer has few rows.
      constexpr bool quads = K > 0 && Int8DepthwiseQuads::available;
      const std::size_t rows = std::size_t{ys[0]} * ys[1], blocks = (xs[3] + lanes - 1) / lanes;
      const std::size_t slices = quads ? 1 : channel_slices(rows, blocks);
      context.parallel_for(
          rows * slices,
          [&](std::size_t task) {
            const std::size_t row = task / slices, slice = task % slices;
            const std::size_t n = row / ys[1], oy = row % ys[1];
            const std::uint8_t* x = input + n * xs[1] * xs[2] * xs[3];
            std::uint8_t* y = output + row * ys[2] * ys[3];
            if constexpr (quads) {
              quad_row<K, Stride, Int8DepthwiseQuads>(x, y, xs, ys, oy, interior);
            } else {
              const SliceBounds own = slice_bounds(blocks, slice, slices);
              for (std::size_t b = own.begin; b < own.end; ++b)
                lane_block<K, Stride>(x, y, xs, ys, b * lanes, oy, interior);
            }
          },
          std::size_t{ys[2]} * (ys[3] / slices) * kernel_.height * kernel_.width);
    });
  }

 private:
  /// Where output row oy's windows start and which of their rows lie inside the input.
  struct WindowRows {
    std::ptrdiff_t y0, ky0, ky1;
  };
  WindowRows window_rows(std::size_t oy, std::ptrdiff_t height) const {
    const std::ptrdiff_t y0 = std::ptrdiff_t(oy) * params_.stride.height - params_.padding.top;
    return {y0, first_tap(y0, params_.dilation.height), end_tap(y0, params_.dilation.height, kernel_.height, height)};
  }

  /// Output pixel ox of channels [c, c + lanes) (those below the input's count), through the taps
  /// of its window inside the input.
  void border_pixel(const std::uint8_t* x, std::uint8_t* y, const TensorShape& xs, std::size_t c,
                    const WindowRows& rows, std::ptrdiff_t ox) const {
    const std::ptrdiff_t width = xs[2], channels = xs[3], kw = kernel_.width, dh = params_.dilation.height,
                         dw = params_.dilation.width;
    const std::size_t count = std::min<std::size_t>(lanes, xs[3] - c);
    const std::ptrdiff_t x0 = ox * params_.stride.width - static_cast<std::ptrdiff_t>(params_.padding.left);
    const std::ptrdiff_t kx0 = first_tap(x0, dw), kx1 = end_tap(x0, dw, kw, width);
    const auto zero_point = Int8Dot::splat(zero_point_);
    auto acc = Int8Dot::load(&bias_[c]);
    for (std::ptrdiff_t ky = rows.ky0; ky < rows.ky1; ++ky)
      for (std::ptrdiff_t kx = kx0; kx < kx1; ++kx) {
        const std::uint8_t* tap = x + ((rows.y0 + ky * dh) * width + x0 + kx * dw) * channels + c;
        acc = Int8Dot::multiply_add(acc, Int8Dot::subtract(Int8Dot::widen(tap, count, signed_input), zero_point),
                                    Int8Dot::load(&weights_[(ky * kw + kx) * padded_channels_ + c]));
      }
    Int8Dot::store(acc, stages_.from(c), 0, y + ox * channels + c, count);
  }

  /// Output row oy of channels [c, c + lanes), a channel a lane. An unrolled window takes the
  /// border's pixels through the interior's taps too, with the weights in registers: a tap outside
  /// the input reads the zero point instead, which the folded bias (bias - zero point x the sum of
  /// every weight) takes back out, so the sum is border_pixel's, exactly. (A border pixel through
  /// border_pixel cost several interior ones: DS-CNN's 25x5 planes are 40 % border.)
  template <std::uint32_t K, std::uint32_t Stride>
  void lane_block(const std::uint8_t* x, std::uint8_t* y, const TensorShape& xs, const TensorShape& ys, std::size_t c,
                  std::size_t oy, InteriorColumns interior) const {
    const WindowRows rows = window_rows(oy, xs[1]);
    if constexpr (K == 0) {
      for (std::ptrdiff_t ox = 0; ox < signed_extent(ys[2]); ++ox) border_pixel(x, y, xs, c, rows, ox);
    } else {
      const std::ptrdiff_t width = xs[2], channels = xs[3], left = params_.padding.left;
      const std::size_t count = std::min<std::size_t>(lanes, xs[3] - c);
      const Int8OutputStage stage = stages_.from(c);
      typename Int8Dot::Acc w[K * K];
#pragma GCC unroll 25
      for (std::size_t t = 0; t < K * K; ++t) w[t] = Int8Dot::load(&weights_[t * padded_channels_ + c]);
      const auto folded_bias = Int8Dot::load(&folded_bias_[c]);
      const auto zero_point = Int8Dot::splat(zero_point_);
      auto pixel = [&]<bool Border>(std::ptrdiff_t ox, std::bool_constant<Border>) {
        const std::ptrdiff_t x0 = ox * std::ptrdiff_t{Stride} - left;
        const std::ptrdiff_t kx0 = Border ? std::max<std::ptrdiff_t>(0, -x0) : 0;
        const std::ptrdiff_t kx1 = Border ? std::min<std::ptrdiff_t>(K, width - x0) : K;
        // The window's first byte as an offset from x: a pointer is made only for taps inside.
        const std::ptrdiff_t first = (rows.y0 * width + x0) * channels + static_cast<std::ptrdiff_t>(c);
        auto acc = folded_bias;
#pragma GCC unroll 5
        for (std::ptrdiff_t ky = 0; ky < std::ptrdiff_t{K}; ++ky)
#pragma GCC unroll 5
          for (std::ptrdiff_t kx = 0; kx < std::ptrdiff_t{K}; ++kx) {
            const bool inside = !Border || (ky >= rows.ky0 && ky < rows.ky1 && kx >= kx0 && kx < kx1);
            const auto tap =
                inside ? Int8Dot::widen(x + first + (ky * width + kx) * channels, count, signed_input) : zero_point;
            acc = Int8Dot::multiply_add(acc, tap, w[ky * K + kx]);
          }
        Int8Dot::store(acc, stage, 0, y + ox * channels + c, count);
      };
      walk_row<K>(
          ys[2], interior, rows.ky0 == 0 && rows.ky1 == std::ptrdiff_t{K},
          [&](std::ptrdiff_t ox) { pixel(ox, std::true_type{}); },
          [&] { return [&](std::ptrdiff_t ox) { pixel(ox, std::false_type{}); }; });
    }
  }

  /// The taps of a window inside the input: rows [ky0, ky1), columns [kx0, kx1).
  struct TapsInside {
    std::ptrdiff_t ky0, ky1, kx0, kx1;
  };

  /// Output row oy with Int8DepthwiseQuads, in blocks of Quads::block output bytes, four taps at a
  /// time. At stride 1 an output byte's taps sit at fixed distances from it, so the interior's
  /// bytes run in blocks regardless of where pixels end, each block laid out for its phase (where
  /// it starts within a pixel); at other strides, and for border pixels, a block is Quads::block
  /// channels of one pixel, and a border pixel's taps outside the input read the zero point.
  template <std::uint32_t K, std::uint32_t Stride, class Quads>
  void quad_row(const std::uint8_t* x, std::uint8_t* y, const TensorShape& xs, const TensorShape& ys, std::size_t oy,
                InteriorColumns interior) const {
    constexpr std::ptrdiff_t block = Quads::block;
    const std::ptrdiff_t width = xs[2], channels = xs[3], row = width * channels;
    const WindowRows rows = window_rows(oy, xs[1]);
    // The input byte under output byte 0's first tap (for the taps inside the input).
    const std::uint8_t* taps = x + (rows.y0 * width - static_cast<std::ptrdiff_t>(params_.padding.left)) * channels;
    // Border: std::true_type for a pixel whose window may cross the input's edge.
    auto pixel = [&]<class Border>(std::ptrdiff_t ox, Border) {
      const std::ptrdiff_t x0 = ox * std::ptrdiff_t{Stride} - static_cast<std::ptrdiff_t>(params_.padding.left);
      const TapsInside inside{rows.ky0, rows.ky1, first_tap(x0, 1), end_tap(x0, 1, K, width)};
      for (std::ptrdiff_t c = 0; c < channels; c += block)
        quad_block<K, Quads, Border::value>(taps + ox * std::ptrdiff_t{Stride} * channels + c, y + ox * channels + c,
                                            row, channels, layout_of_channel<Quads>(c),
                                            std::size_t(std::min(block, channels - c)), inside);
    };
    if (rows.ky0 != 0 || rows.ky1 != std::ptrdiff_t{K}) {
      for (std::ptrdiff_t ox = 0; ox < ys[2]; ++ox) pixel(ox, std::true_type{});
      return;
    }
    for (std::ptrdiff_t ox = 0; ox < interior.begin; ++ox) pixel(ox, std::true_type{});
    for (std::ptrdiff_t ox = interior.end; ox < ys[2]; ++ox) pixel(ox, std::true_type{});
    if (quad_phases_ == 0) {
      for (std::ptrdiff_t ox = interior.begin; ox < interior.end; ++ox) pixel(ox, std::false_type{});
      return;
    }
    const std::ptrdiff_t end = interior.end * channels;
    for (std::ptrdiff_t p = interior.begin * channels, b = 0; p < end; p += block, ++b)
      quad_block<K, Quads, false>(taps + p, y + p, row, channels, std::size_t(b) % quad_phases_,
                                  std::size_t(std::min(block, end - p)), {});
  }
  /// The layout of the block of a pixel's channels from c on.
  template <class Quads>
  std::size_t layout_of_channel(std::size_t c) const {
    return quad_phases_ > 0 ? c / Quads::block % quad_phases_ : c / Quads::block;
  }

  /// `bytes` output bytes from `out` on, with quad layout `layout`: tap (ky, kx) of the first at
  /// taps + ky x row + kx x pixel, the others' following it; with Border, only the taps `inside`.
  template <std::uint32_t K, class Quads, bool Border>
  void quad_block(const std::uint8_t* taps, std::uint8_t* out, std::ptrdiff_t row, std::ptrdiff_t pixel,
                  std::size_t layout, std::size_t bytes, const TapsInside& inside) const {
    constexpr std::size_t groups = (K + Quads::taps - 1) / Quads::taps;
    const auto mask = Quads::mask(bytes);
    typename Quads::Vector acc[Quads::vectors];
    for (std::size_t v = 0; v < Quads::vectors; ++v)
      acc[v] = Quads::load(&quad_bias_[layout * Quads::block + v * Quads::lanes]);
    const std::int8_t* w = quad_weights_.data() + layout * K * groups * Quads::vectors * Quads::block;
#pragma GCC unroll 5
    for (std::ptrdiff_t ky = 0; ky < std::ptrdiff_t{K}; ++ky)
#pragma GCC unroll 2
      for (std::size_t g = 0; g < groups; ++g) {
        typename Quads::Vector tap[Quads::taps], quads[Quads::vectors];
#pragma GCC unroll 4
        for (std::size_t t = 0; t < Quads::taps; ++t) {
          // Taps past the window repeat its last one, against zero weights.
          const std::ptrdiff_t kx = std::min<std::ptrdiff_t>(g * Quads::taps + t, K - 1);
          if (!Border || (ky >= inside.ky0 && ky < inside.ky1 && kx >= inside.kx0 && kx < inside.kx1))
            tap[t] = Quads::load_tap(taps + ky * row + kx * pixel, mask, signed_input);
          else
            tap[t] = Quads::splat(quad_padding_);
        }
        Quads::interleave(tap, quads);
#pragma GCC unroll 4
        for (std::size_t v = 0; v < Quads::vectors; ++v, w += Quads::block) acc[v] = Quads::dot(acc[v], quads[v], w);
      }
    Quads::template store<signed_input>(acc, quad_stages_.from(layout * Quads::block), out, bytes);
  }

  /// Lays out the weights, biases and stages of the one path run will take: quad_block's where
  /// Int8DepthwiseQuads is available and the window unrolled, else lane_block's.
  Kernel(const WorkloadInfo<ops::DepthwiseConvolution2d>& info, const quantized::OutputStage& stage)
      : params_(info.params),
        kernel_{info.inputs[1].shape[1], info.inputs[1].shape[2]},
        zero_point_(info.inputs[0].quantization.offset) {
    const std::size_t channels = info.inputs[1].shape[3], taps = std::size_t{kernel_.height} * kernel_.width;
    const auto* w = static_cast<const std::int8_t*>(info.constants[1]);
    const auto* bias = info.inputs.size() > 2 ? static_cast<const std::int32_t*>(info.constants[2]) : nullptr;
    // Each channel's bias and sum of weights, which the zero point's share is folded in with.
    std::vector<std::int32_t> biases(channels, 0);
    std::vector<std::int64_t> sums(channels, 0);
    for (std::size_t c = 0; c < channels; ++c) {
      biases[c] = bias != nullptr ? bias[c] : 0;
      for (std::size_t t = 0; t < taps; ++t) sums[c] += w[t * channels + c];
    }
    if constexpr (Int8DepthwiseQuads::available) {
      if (unrolled_window(kernel_, params_) > 0) {
        lay_out_quads<Int8DepthwiseQuads>(w, channels, stage, biases, sums);
        return;
      }
    }
    padded_channels_ = (channels + lanes - 1) / lanes * lanes;
    weights_.assign(taps * padded_channels_, 0);
    bias_.assign(padded_channels_, 0);
    folded_bias_.assign(padded_channels_, 0);
    stages_ = Int8OutputStages(stage, padded_channels_);
    for (std::size_t c = 0; c < channels; ++c) {
      for (std::size_t t = 0; t < taps; ++t) weights_[t * padded_channels_ + c] = w[t * channels + c];
      bias_[c] = biases[c];
      // Within decision 0014's bounds, as the sums it starts are.
      folded_bias_[c] = static_cast<std::int32_t>(biases[c] - zero_point_ * sums[c]);
      stages_.set(c, stage.multiplier(c));
    }
  }

  /// The weights, folded biases and stages of quad_block: per layout block, kernel row and group
  /// of taps, Quads::vectors vectors of each lane's taps. A block is Quads::block consecutive
  /// channels, or at stride 1 Quads::block consecutive bytes of a row starting at a multiple of
  /// Quads::block: C / gcd(C, Quads::block) phases, up to max_quad_phases.
  template <class Quads>
  void lay_out_quads(const std::int8_t* w, std::size_t channels, const quantized::OutputStage& stage,
                     std::span<const std::int32_t> biases, std::span<const std::int64_t> sums) {
    const std::size_t kh = kernel_.height, kw = kernel_.width;
    // Channel counts with many phases (an odd count has C) would take C layouts: channel blocks.
    const std::size_t phases = channels / std::gcd(channels, Quads::block);
    const bool flat = params_.stride == ops::Size2d{1, 1} && phases <= max_quad_phases;
    if (flat) quad_phases_ = phases;
    const std::size_t groups = (kw + Quads::taps - 1) / Quads::taps, taps = Quads::taps;
    const std::size_t blocks = flat ? quad_phases_ : (channels + Quads::block - 1) / Quads::block;
    quad_weights_.assign(blocks * kh * groups * Quads::vectors * Quads::block, 0);
    quad_bias_.assign(blocks * Quads::block, 0);
    quad_stages_ = Int8OutputStages(stage, blocks * Quads::block);
    const std::int64_t offset = zero_point_ + Int8Dot::offset(signed_input);
    quad_padding_ = static_cast<std::uint8_t>(offset);
    for (std::size_t b = 0; b < blocks; ++b)
      for (std::size_t v = 0; v < Quads::vectors; ++v)
        for (std::size_t d = 0; d < Quads::lanes; ++d) {
          const std::size_t lane = b * Quads::block + v * Quads::lanes + d;
          const std::size_t position = b * Quads::block + Quads::channel(v, d), c = position % channels;
          if (!flat && position >= channels) continue;
          for (std::size_t ky = 0; ky < kh; ++ky)
            for (std::size_t kx = 0; kx < kw; ++kx)
              quad_weights_[(((b * kh + ky) * groups + kx / taps) * Quads::vectors + v) * Quads::block + d * taps +
                            kx % taps] = w[(ky * kw + kx) * channels + c];
          quad_bias_[lane] = static_cast<std::int32_t>(biases[c] - offset * sums[c]);
          quad_stages_.set(lane, stage.multiplier(c));
        }
  }

  static constexpr bool signed_input = T == DataType::QAsymmS8;
  ops::DepthwiseConvolution2d::Params params_;
  ops::Size2d kernel_;
  std::int32_t zero_point_;
  // lane_block's (empty where quad_block runs)
  std::size_t padded_channels_ = 0;
  std::vector<std::int32_t> weights_;  // [taps][padded channels], widened
  std::vector<std::int32_t> bias_, folded_bias_;
  Int8OutputStages stages_;
  // quad_block's, in Int8DepthwiseQuads' lane order (empty where lane_block runs)
  std::vector<std::int8_t> quad_weights_;
  std::vector<std::int32_t> quad_bias_;
  Int8OutputStages quad_stages_;
  static constexpr std::size_t max_quad_phases = 16;  // 960 channels take 15
  // At stride 1, the layouts of blocks of a row's bytes; else 0.
  std::size_t quad_phases_ = 0;
  // What a tap outside the input reads: the zero point, as quad_block's byte.
  std::uint8_t quad_padding_ = 0;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
