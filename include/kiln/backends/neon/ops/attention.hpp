// SPDX-License-Identifier: Apache-2.0
// Neon Attention: one query at a time against tiles of keys, the softmax computed online (running
// maximum and sum, the weighted values rescaled as the maximum grows), so that no more than a
// tile of a row of scores exists; (batch, query block) pairs split over the threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/backends/neon/simd/vector_ops.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Deviation from Ref: products summed in float lanes where Ref sums in double, exp in xsimd's
/// float; results differ by a few ulps.
template <>
struct Kernel<ops::Attention, DataType::Float32> : Float32Kernel<ops::Attention> {
  /// Keys scored at once: a tile of a row of scores, 1 KiB, stays in L1 with the values it weighs.
  static constexpr std::size_t tile_keys = 256;

  explicit Kernel(const WorkloadInfo<ops::Attention>& info)
      : Float32Kernel(info), sizes_(ops::Attention::sizes(info.params, info.inputs)) {
    if (info.inputs.size() > 3) {
      const TensorShape& q = info.inputs[0].shape;
      batch_shape_ = TensorShape(q.dims().first(q.rank() - 2));
      TensorShape scores = batch_shape_;
      scores.push_back(sizes_.queries);
      scores.push_back(sizes_.keys);
      mask_strides_ = ref::broadcast_strides_of(info.inputs[3].shape, scores.rank());
    }
  }

  /// Per thread: a tile of scores and a row of weighted values, in whole cache lines.
  ScratchSize scratch(const Context& context) const {
    return {std::uint64_t{context.threads()} * per_thread() * sizeof(float), 64};
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context,
           std::span<std::byte> scratch) const {
    const auto [m, depth, n, value_depth, batches] = sizes_;
    const std::size_t blocks = (m + rows_per_task - 1) / rows_per_task;
    const float* mask = in.size() > 3 ? floats(in[3]) : nullptr;
    float* const buffers = reinterpret_cast<float*>(scratch.data());
    context.parallel_for(
        batches * blocks,
        [&](std::size_t task, unsigned thread) {
          const std::size_t b = task / blocks, first = task % blocks * rows_per_task;
          const float* q = floats(in[0]) + b * m * depth;
          const float* k = floats(in[1]) + b * n * depth;
          const float* v = floats(in[2]) + b * n * value_depth;
          float* y = floats(out[0]) + b * m * value_depth;
          const float* mask_of_batch = mask ? mask + mask_offset(b) : nullptr;
          float* scores = buffers + thread * per_thread();
          float* weighted = scores + tile_keys;
          for (std::size_t i = first; i < std::min<std::size_t>(m, first + rows_per_task); ++i)
            attend(q + i * depth, k, v, mask_of_batch ? mask_of_batch + i * mask_strides_[rank() - 2] : nullptr,
                   y + i * value_depth, scores, weighted);
        },
        std::size_t{rows_per_task} * n * (depth + value_depth + 16));
  }

 private:
  static constexpr std::size_t rows_per_task = 8;

  std::size_t per_thread() const {
    constexpr std::size_t line = 64 / sizeof(float);
    return (tile_keys + sizes_.value_depth + line - 1) / line * line;
  }
  std::size_t rank() const { return batch_shape_.rank() + 2; }
  std::uint64_t mask_offset(std::uint64_t b) const {
    const auto coords = ref::unravel(b, batch_shape_);
    std::uint64_t offset = 0;
    for (std::size_t d = 0; d < batch_shape_.rank(); ++d) offset += coords[d] * mask_strides_[d];
    return offset;
  }

  /// y = softmax(scale * q keys + mask row) values for one query q.
  void attend(const float* q, const float* k, const float* v, const float* mask_row, float* y, float* scores,
              float* weighted) const {
    const std::size_t n = sizes_.keys, value_depth = sizes_.value_depth;
    const Vec scale(params_.scale), lowest(-std::numeric_limits<float>::infinity());
    float running_max = -std::numeric_limits<float>::infinity(), running_sum = 0.0f;
    std::fill_n(weighted, value_depth, 0.0f);
    for (std::size_t first = 0; first < n; first += tile_keys) {
      const std::size_t count = std::min(tile_keys, n - first);
      score_tile(q, k, first, count, scores);
      Vec tile_max = lowest;
      for (std::size_t j = 0; j < count; j += lanes) {
        const std::size_t c = std::min(lanes, count - j);
        Vec s = load_upto(scores + j, c) * scale;
        if (mask_row) {
          alignas(64) float added[lanes] = {};
          for (std::size_t l = 0; l < c; ++l) added[l] = mask_row[(first + j + l) * mask_strides_[rank() - 1]];
          s += Vec::load_aligned(added);
        }
        store_upto(scores + j, s, c);
        tile_max = xsimd::max(tile_max, c == lanes ? s : xsimd::select(lanes_below(c), s, lowest));
      }
      const float new_max = std::max(running_max, reduce_max(tile_max));
      // The weights so far were relative to the old maximum: rescale them to the new one.
      const float correction = running_max == new_max ? 1.0f : std::exp(running_max - new_max);
      if (correction != 1.0f) map(weighted, weighted, value_depth, [=](Vec w) { return w * Vec(correction); });
      running_sum *= correction;
      running_max = new_max;
      const Vec shift(new_max);
      Vec sum(0.0f);
      for (std::size_t j = 0; j < count; j += lanes) {
        const std::size_t c = std::min(lanes, count - j);
        const Vec e = xsimd::exp(load_upto(scores + j, c) - shift);
        store_upto(scores + j, e, c);
        sum += c == lanes ? e : xsimd::select(lanes_below(c), e, Vec(0.0f));
      }
      running_sum += reduce_add(sum);
      for (std::size_t j = 0; j < count; ++j) {
        const Vec p(scores[j]);
        const float* row = v + (first + j) * value_depth;
        for (std::size_t c = 0; c < value_depth; c += lanes) {
          const std::size_t w = std::min(lanes, value_depth - c);
          store_upto(weighted + c, multiply_add(p, load_upto(row + c, w), load_upto(weighted + c, w)), w);
        }
      }
    }
    const Vec inverse(1.0f / running_sum);
    map(weighted, y, value_depth, [=](Vec w) { return w * inverse; });
  }

  /// scores[j] = q . key j for keys [first, first + count).
  void score_tile(const float* q, const float* k, std::size_t first, std::size_t count, float* scores) const {
    const std::size_t depth = sizes_.depth, n = sizes_.keys;
    if (params_.key_rows) {
      for (std::size_t j = 0; j < count; ++j) {
        const float* key = k + (first + j) * depth;
        Vec dot(0.0f);
        for (std::size_t d = 0; d < depth; d += lanes) {
          const std::size_t c = std::min(lanes, depth - d);
          dot = multiply_add(load_upto(q + d, c), load_upto(key + d, c), dot);
        }
        scores[j] = reduce_add(dot);
      }
      return;
    }
    // Keys as columns of [depth, n]: a vector of keys at a time, q's values broadcast.
    for (std::size_t j = 0; j < count; j += lanes) {
      const std::size_t c = std::min(lanes, count - j);
      Vec dot(0.0f);
      for (std::size_t d = 0; d < depth; ++d) dot = multiply_add(Vec(q[d]), load_upto(k + d * n + first + j, c), dot);
      store_upto(scores + j, dot, c);
    }
  }

  ops::Attention::Sizes sizes_;
  TensorShape batch_shape_;
  ref::Strides mask_strides_{};
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
