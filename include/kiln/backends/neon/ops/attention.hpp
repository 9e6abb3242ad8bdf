// SPDX-License-Identifier: Apache-2.0
// Neon Attention: blocks of queries against tiles of keys, both products by BatchMatMul's register
// tiles, the softmax computed online (running maximum and sum, the weighted values rescaled as the
// maximum grows), so that no more than a block's tile of scores exists; (batch, block) pairs split
// over the threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/backends/neon/ops/batch_mat_mul.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Deviation from Ref: products summed in float lanes where Ref sums in double, exp in xsimd's
/// float; results differ by a few ulps.
template <>
struct Kernel<ops::Attention, DataType::Float32> : Float32Kernel<ops::Attention> {
  /// Keys scored at once: a block's tile of scores, 4-8 KiB, stays in L1 with the values it weighs.
  static constexpr std::size_t tile_keys = 256;
  /// Queries a task takes together: the rows of the matrix-product tile (its accumulators fit the registers).
  static constexpr std::size_t block_rows = lanes >= 16 ? 8 : 4;

  explicit Kernel(const WorkloadInfo<ops::Attention>& info)
      : Float32Kernel(info),
        sizes_(ops::Attention::sizes(info.params, info.inputs)),
        tile_(std::min(tile_keys, (sizes_.keys + 2 * lanes - 1) / (2 * lanes) * (2 * lanes))) {
    if (info.inputs.size() > 3) {
      const TensorShape& q = info.inputs[0].shape;
      batch_shape_ = TensorShape(q.dims().first(q.rank() - 2));
      TensorShape scores = batch_shape_;
      scores.push_back(sizes_.queries);
      scores.push_back(sizes_.keys);
      mask_strides_ = ref::broadcast_strides_of(info.inputs[3].shape, scores.rank());
    }
  }

  /// Per thread: a block's tile of scores, the tile's keys gathered as columns, the block's
  /// weighted values and one tile's share of them, in whole cache lines.
  ScratchSize scratch(const Context& context) const {
    return {std::uint64_t{context.threads()} * per_thread() * sizeof(float), 64};
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context,
           std::span<std::byte> scratch) const {
    // Plain names rather than a structured binding: the task lambda captures them (Clang 14 cannot).
    const std::size_t m = sizes_.queries, depth = sizes_.depth, n = sizes_.keys, value_depth = sizes_.value_depth;
    const std::uint64_t batches = sizes_.batches;
    const std::size_t blocks = (m + block_rows - 1) / block_rows;
    const float* mask = in.size() > 3 ? floats(in[3]) : nullptr;
    float* const buffers = reinterpret_cast<float*>(scratch.data());
    context.parallel_for(
        batches * blocks,
        [&](std::size_t task, unsigned thread) {
          const std::size_t b = task / blocks, first = task % blocks * block_rows;
          const Block block{floats(in[0]) + (b * m + first) * depth,
                            floats(in[1]) + b * n * depth,
                            floats(in[2]) + b * n * value_depth,
                            mask ? mask + mask_offset(b) + first * mask_strides_[rank() - 2] : nullptr,
                            floats(out[0]) + (b * m + first) * value_depth,
                            std::min<std::size_t>(block_rows, m - first)};
          attend(block, buffers + thread * per_thread());
        },
        block_rows * n * (depth + value_depth + 16));
  }

 private:
  /// One task's queries and what they read and write.
  struct Block {
    const float *queries, *keys, *values, *mask;
    float* y;
    std::size_t rows;
  };

  static std::size_t whole_lines(std::size_t floats) {
    constexpr std::size_t line = 64 / sizeof(float);
    return (floats + line - 1) / line * line;
  }
  std::size_t per_thread() const {
    return whole_lines(block_rows * tile_) + whole_lines(sizes_.depth * tile_) +
           2 * whole_lines(block_rows * sizes_.value_depth);
  }
  std::size_t rank() const { return batch_shape_.rank() + 2; }
  std::uint64_t mask_offset(std::uint64_t b) const {
    const auto coords = ref::unravel(b, batch_shape_);
    std::uint64_t offset = 0;
    for (std::size_t d = 0; d < batch_shape_.rank(); ++d) offset += coords[d] * mask_strides_[d];
    return offset;
  }

  /// y = softmax(scale * queries keys + mask) values for a block of queries: per tile of keys, the
  /// tile's scores (a matrix product), their exponentials against each row's running maximum, and
  /// their share of the values (a second product), added to the rows' sums rescaled to the new
  /// maximum.
  void attend(const Block& block, float* buffer) const {
    const std::size_t depth = sizes_.depth, n = sizes_.keys, value_depth = sizes_.value_depth, rows = block.rows;
    float* scores = buffer;
    float* key_columns = scores + whole_lines(block_rows * tile_);
    float* weighted = key_columns + whole_lines(depth * tile_);
    float* tile_share = weighted + whole_lines(block_rows * value_depth);
    float running_max[block_rows], running_sum[block_rows];
    std::fill_n(running_max, rows, -std::numeric_limits<float>::infinity());
    std::fill_n(running_sum, rows, 0.0f);
    std::fill_n(weighted, rows * value_depth, 0.0f);
    const Vec scale(params_.scale), lowest(-std::numeric_limits<float>::infinity()), zero(0.0f);
    for (std::size_t first = 0; first < n; first += tile_) {
      const std::size_t count = std::min(tile_, n - first);
      // The keys of the tile as columns [depth, count]: in place when they come so and fill whole
      // register tiles; otherwise gathered, the columns up to a whole tile zero, so that the
      // product never takes the tiles' slow tail.
      const std::size_t padded = (count + 2 * lanes - 1) / (2 * lanes) * (2 * lanes);
      const float* columns = block.keys + first;
      std::size_t column_stride = n;
      if (params_.key_rows || padded != count) {
        for (std::size_t d = 0; d < depth; ++d) {
          float* to = key_columns + d * padded;
          if (params_.key_rows)
            for (std::size_t j = 0; j < count; ++j) to[j] = block.keys[(first + j) * depth + d];
          else
            std::copy_n(block.keys + d * n + first, count, to);
          std::fill(to + count, to + padded, 0.0f);
        }
        columns = key_columns;
        column_stride = padded;
      }
      detail::matmul_rows<block_rows>(block.queries, depth, 1, columns, column_stride, depth, rows, padded, scores,
                                      tile_);
      for (std::size_t r = 0; r < rows; ++r) {
        float* row = scores + r * tile_;
        const float* mask_row = block.mask ? block.mask + r * mask_strides_[rank() - 2] : nullptr;
        Vec tile_max = lowest;
        for (std::size_t j = 0; j < count; j += lanes) {
          const std::size_t c = std::min(lanes, count - j);
          Vec v = load_upto(row + j, c) * scale;
          if (mask_row) {
            alignas(64) float added[lanes] = {};
            for (std::size_t l = 0; l < c; ++l) added[l] = mask_row[(first + j + l) * mask_strides_[rank() - 1]];
            v += Vec::load_aligned(added);
          }
          store_upto(row + j, v, c);
          tile_max = xsimd::max(tile_max, c == lanes ? v : xsimd::select(lanes_below(c), v, lowest));
        }
        const float new_max = std::max(running_max[r], reduce_max(tile_max));
        // The sums so far were relative to the old maximum: rescale them to the new one.
        const float correction = running_max[r] == new_max ? 1.0f : std::exp(running_max[r] - new_max);
        running_max[r] = new_max;
        const Vec shift(new_max);
        Vec sum = zero;
        for (std::size_t j = 0; j < count; j += lanes) {
          const std::size_t c = std::min(lanes, count - j);
          const Vec e = xsimd::exp(load_upto(row + j, c) - shift);
          store_upto(row + j, e, c);
          sum += c == lanes ? e : xsimd::select(lanes_below(c), e, zero);
        }
        running_sum[r] = running_sum[r] * correction + reduce_add(sum);
        if (correction != 1.0f)
          map(weighted + r * value_depth, weighted + r * value_depth, value_depth,
              [=](Vec w) { return w * Vec(correction); });
      }
      detail::matmul_rows<block_rows>(scores, tile_, 1, block.values + first * value_depth, value_depth, count, rows,
                                      value_depth, tile_share, value_depth);
      for (std::size_t i = 0; i < rows * value_depth; i += lanes) {
        const std::size_t c = std::min(lanes, rows * value_depth - i);
        store_upto(weighted + i, load_upto(weighted + i, c) + load_upto(tile_share + i, c), c);
      }
    }
    for (std::size_t r = 0; r < rows; ++r) {
      const Vec inverse(1.0f / running_sum[r]);
      map(weighted + r * value_depth, block.y + r * value_depth, value_depth, [=](Vec w) { return w * inverse; });
    }
  }

  ops::Attention::Sizes sizes_;
  std::size_t tile_;  ///< keys a tile holds: tile_keys, or all of them in whole register tiles
  TensorShape batch_shape_;
  ref::Strides mask_strides_{};
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
