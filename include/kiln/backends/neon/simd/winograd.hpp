// SPDX-License-Identifier: Apache-2.0
// 3x3 stride-1 convolution by Winograd's F(2x2, 3x3): 16 multiplies per 2x2 output tile and
// channel pair instead of 36, in cache-sized blocks of tiles.
#pragma once

#include <algorithm>
#include <array>
#include <span>
#include <vector>

#include "kiln/backends/neon/simd/gemm.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Convolution with a 3x3 kernel, stride 1 and no dilation over NHWC input (Lavin and Gray, "Fast
/// Algorithms for Convolutional Neural Networks", 2015). Each 4x4 input patch d becomes
/// V = Bᵀ d B and each 3x3 kernel g becomes U = G g Gᵀ (once, at load); the 16 points of the
/// transformed tiles are 16 independent GEMMs over the channels, M = V U, and each output tile is
/// Aᵀ M A. Blocks of tiles are transformed, multiplied and written back while they stay in L2.
///
/// Deviation from Ref: the sums run in another order and through the transforms, so results
/// differ from RefBackend's by rounding — under 1e-7 of the largest possible sum of |x w| over
/// a window (tests/ops/test_convolution2d.cpp). F(2x2, 3x3)'s transforms have no factor larger
/// than 1, which is why it is used rather than F(4x4, 3x3), whose error grows tenfold.
class Winograd3x3 {
 public:
  /// Whether Winograd pays for a convolution of these weights writing an output of shape `y`:
  /// - enough channels on both sides that the 16 GEMMs dominate the transforms;
  /// - U fits in L2, or enough tiles share it. U (16/9 of the weights' bytes) is read once an
  ///   inference and each of its floats serves one multiply-add per tile, where the direct
  ///   convolution reads 9/16 as many bytes and uses each for every output pixel (about 4x as
  ///   many). On a small image a large U streams from memory slower than the GEMMs use it:
  ///   ResNet-18's 7x7x512 layers (16 tiles, 16 MiB of U) took 4.0 ms by Winograd and 1.3 ms direct.
  static bool suits(const TensorShape& weights, const ops::Convolution2d::Params& p, const TensorShape& y) {
    const bool shape = weights[1] == 3 && weights[2] == 3 && p.stride == ops::Size2d{1, 1} &&
                       p.dilation == ops::Size2d{1, 1} && p.groups == 1 && weights[0] >= min_channels &&
                       weights[3] >= min_channels;
    const std::size_t u_bytes = points * std::size_t{weights[0]} * weights[3] * sizeof(float);
    return shape && (u_bytes <= cached_u_bytes || tile_count(y) >= min_tiles_streaming_u);
  }

  Winograd3x3() = default;
  /// weights: OHWI [out, 3, 3, in]; bias: `out` floats or null.
  Winograd3x3(const float* weights, const float* bias, std::size_t out, std::size_t in)
      : in_(in), out_(out), u_(points, out, in), bias_((out + lanes - 1) / lanes * lanes, 0.0f) {
    // A few output channels at a time, so that their U stays in L2 until it is packed.
    const std::size_t chunk = std::clamp<std::size_t>(chunk_floats / (points * in), 1, gemm_nr);
    std::vector<float> u(points * chunk * in);
    for (std::size_t first = 0; first < out; first += chunk) {
      // Point p of channel first + j at u[(p * count + j) * in].
      const std::size_t count = std::min(chunk, out - first);
      for (std::size_t j = 0; j < count; ++j)
        for (std::size_t c = 0; c < in; c += lanes)
          transform_weights(weights + (first + j) * 9 * in + c, in, std::min(lanes, in - c), u.data() + j * in + c,
                            count * in);
      for (std::size_t point = 0; point < points; ++point)
        u_.set_columns(point, first, count, u.data() + point * count * in, in, nullptr);
    }
    if (bias) std::copy_n(bias, out, bias_.begin());
  }

  /// Floats of scratch for an output of shape `y` on `threads` threads.
  std::size_t scratch_floats(const TensorShape& y, unsigned threads) const {
    return threads * block_floats(block_tiles(tile_count(y), threads));
  }

  /// y = conv(x) + bias, then the epilogue, with padding `pad`; `scratch` as scratch_floats says.
  void run(Context& context, const float* x, const TensorShape& xs, float* y, const TensorShape& ys,
           const ops::Padding2d& pad, const Epilogue& epilogue, std::span<float> scratch) const {
    const std::size_t tiles = tile_count(ys), block = block_tiles(tiles, context.threads());
    const std::size_t blocks = (tiles + block - 1) / block;
    context.parallel_for(
        blocks,
        [&](std::size_t b, unsigned thread) {
          float* v = scratch.data() + thread * block_floats(block);
          float* m = v + points * block * in_;
          const std::size_t first = b * block, count = std::min(block, tiles - first);
          for (std::size_t t = 0; t < count; ++t) transform_input(x, xs, ys, pad, first + t, v + t * in_, block);
          for (std::size_t point = 0; point < points; ++point)
            gemm_on_this_thread(DenseRows{v + point * block * in_, in_}, count, u_, point, m + point * block * out_,
                                out_, Epilogue{});
          auto write = [&](auto activation) {
            for (std::size_t t = 0; t < count; ++t)
              transform_output(m + t * out_, block, ys, first + t, y, epilogue, activation);
          };
          if (epilogue.activation)
            visit_activation(*epilogue.activation, write);
          else
            write([](Vec value) { return value; });
        },
        block * points * in_ * out_);
  }

 private:
  static constexpr std::size_t points = 16;  // a 4x4 transformed tile
  static constexpr std::uint32_t min_channels = 16;
  static constexpr std::size_t cached_u_bytes = std::size_t{1} << 20;  // the L2 the blocks assume
  static constexpr std::size_t min_tiles_streaming_u = 64;             // 16x16 outputs and more
  static constexpr std::size_t chunk_floats = std::size_t{64} << 10;   // of U at load: a quarter of L2

  /// U = G g Gᵀ, G's rows (1, 0, 0), (½, ½, ½), (½, -½, ½), (0, 0, 1), for `count` <= lanes
  /// channels: tap t of channel c at g[t * in + c]; point p of it stored at u[p * point_stride + c].
  static void transform_weights(const float* g, std::size_t in, std::size_t count, float* u, std::size_t point_stride) {
    std::array<Vec, 4> gg[3];  // G g, column by column
    for (std::size_t kx = 0; kx < 3; ++kx)
      gg[kx] = times_g(load_upto(g + kx * in, count), load_upto(g + (3 + kx) * in, count),
                       load_upto(g + (6 + kx) * in, count));
    for (std::size_t i = 0; i < 4; ++i) {  // (G g) Gᵀ: the same combinations of its rows
      const std::array<Vec, 4> row = times_g(gg[0][i], gg[1][i], gg[2][i]);
      for (std::size_t j = 0; j < 4; ++j) store_upto(u + (i * 4 + j) * point_stride, row[j], count);
    }
  }
  /// The 1-D transforms of F(2, 3): G (a b c)ᵀ, Bᵀ (a b c d)ᵀ and Aᵀ (a b c d)ᵀ. Each 2-D transform
  /// applies one to the columns of a tile and then to the rows of the result.
  static std::array<Vec, 4> times_g(Vec a, Vec b, Vec c) {
    const Vec half(0.5f);
    return {a, half * (a + b + c), half * (a - b + c), c};
  }
  static std::array<Vec, 4> times_bt(Vec a, Vec b, Vec c, Vec d) { return {a - c, b + c, c - b, b - d}; }
  static std::array<Vec, 2> times_at(Vec a, Vec b, Vec c, Vec d) { return {a + b + c, b - c - d}; }

  static std::size_t tile_count(const TensorShape& y) {
    return std::size_t{y[0]} * ((y[1] + 1) / 2) * ((y[2] + 1) / 2);
  }
  /// Where tile `tile` (batch, tile row, tile column, in row-major order) puts its top-left output.
  struct TileOrigin {
    std::ptrdiff_t n, oy, ox;
  };
  static TileOrigin origin(const TensorShape& y, std::size_t tile) {
    const std::size_t tiles_x = (y[2] + 1) / 2, tiles_y = (y[1] + 1) / 2;
    return {static_cast<std::ptrdiff_t>(tile / (tiles_x * tiles_y)),
            static_cast<std::ptrdiff_t>(2 * (tile / tiles_x % tiles_y)),
            static_cast<std::ptrdiff_t>(2 * (tile % tiles_x))};
  }
  /// Tiles per block: what keeps a block's V and M within half of a 1 MiB L2, in whole GEMM row
  /// tiles, but no more than gives each thread a block.
  std::size_t block_tiles(std::size_t tiles, unsigned threads) const {
    const std::size_t budget = (std::size_t{128} << 10) / (points * (in_ + out_));
    const std::size_t fits = std::max<std::size_t>(1, budget / gemm_mr) * gemm_mr;
    const std::size_t per_thread = (tiles + threads - 1) / threads;
    return std::max<std::size_t>(1, std::min(fits, (per_thread + gemm_mr - 1) / gemm_mr * gemm_mr));
  }
  /// One thread's V and M for a block, in whole cache lines, and a vector more: the output
  /// transform reads whole vectors of M's last row.
  std::size_t block_floats(std::size_t block) const { return (points * block * (in_ + out_) + lanes + 15) / 16 * 16; }

  /// V = Bᵀ d B for tile `tile`, every channel; point p of it at v[p * stride * in_].
  void transform_input(const float* x, const TensorShape& xs, const TensorShape& ys, const ops::Padding2d& pad,
                       std::size_t tile, float* v, std::size_t stride) const {
    const auto [n, oy, ox] = origin(ys, tile);
    const std::ptrdiff_t y0 = oy - pad.top, x0 = ox - pad.left;
    std::array<const float*, 16> at{};  // each patch element's input pixel, or null outside the input
    for (std::ptrdiff_t i = 0; i < 4; ++i)
      for (std::ptrdiff_t j = 0; j < 4; ++j) {
        const std::ptrdiff_t iy = y0 + i, ix = x0 + j;
        if (iy >= 0 && iy < signed_extent(xs[1]) && ix >= 0 && ix < signed_extent(xs[2]))
          at[i * 4 + j] = x + ((n * xs[1] + iy) * xs[2] + ix) * in_;
      }
    for (std::size_t c = 0; c < in_; c += lanes) {
      const std::size_t count = std::min(lanes, in_ - c);
      auto load = [&](std::size_t e) { return at[e] == nullptr ? Vec(0.0f) : load_upto(at[e] + c, count); };
      std::array<Vec, 4> t[4];  // Bᵀ d, column by column
      for (std::size_t j = 0; j < 4; ++j) t[j] = times_bt(load(j), load(4 + j), load(8 + j), load(12 + j));
      for (std::size_t i = 0; i < 4; ++i) {  // (Bᵀ d) B: the same combinations of its rows
        const std::array<Vec, 4> row = times_bt(t[0][i], t[1][i], t[2][i], t[3][i]);
        for (std::size_t j = 0; j < 4; ++j) store_upto(v + (i * 4 + j) * stride * in_ + c, row[j], count);
      }
    }
  }

  /// y's 2x2 pixels of tile `tile` = Aᵀ M A + bias, clamped and activated; point p of M at
  /// m[p * stride * out_]. Pixels past the output's edge are not written.
  template <class Activation>
  void transform_output(const float* m, std::size_t stride, const TensorShape& ys, std::size_t tile, float* y,
                        const Epilogue& epilogue, Activation activation) const {
    const auto [n, oy, ox] = origin(ys, tile);
    const bool second_row = oy + 1 < signed_extent(ys[1]), second_column = ox + 1 < signed_extent(ys[2]);
    float* out = y + ((n * ys[1] + oy) * ys[2] + ox) * out_;
    const std::size_t row_stride = std::size_t{ys[2]} * out_;
    const Vec lo(epilogue.min), hi(epilogue.max);
    for (std::size_t c = 0; c < out_; c += lanes) {
      const std::size_t count = std::min(lanes, out_ - c);
      auto load = [&](std::size_t point) { return Vec::load_unaligned(m + point * stride * out_ + c); };
      std::array<Vec, 2> s[4];  // Aᵀ M, column by column
      for (std::size_t j = 0; j < 4; ++j) s[j] = times_at(load(j), load(4 + j), load(8 + j), load(12 + j));
      const Vec bias = Vec::load_unaligned(&bias_[c]);
      auto store = [&](float* to, Vec value) {
        store_upto(to + c, activation(xsimd::min(xsimd::max(value + bias, lo), hi)), count);
      };
      for (std::size_t i = 0; i < (second_row ? 2 : 1); ++i) {  // (Aᵀ M) A: the same combinations of its rows
        const std::array<Vec, 2> pixels = times_at(s[0][i], s[1][i], s[2][i], s[3][i]);
        store(out + i * row_stride, pixels[0]);
        if (second_column) store(out + i * row_stride + out_, pixels[1]);
      }
    }
  }

  std::size_t in_ = 0, out_ = 0;
  PackedWeights u_;
  std::vector<float> bias_;  // padded to whole vectors
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
