// SPDX-License-Identifier: Apache-2.0
// Neon Reduce: axes merged at load into alternating runs of kept and reduced dimensions, then
// whole rows accumulated a vector at a time (innermost kept) or contiguous runs folded (innermost reduced).
#pragma once

#include <limits>
#include <vector>

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

template <>
struct Kernel<ops::Reduce, DataType::Float32> : Float32Kernel<ops::Reduce> {
  explicit Kernel(const WorkloadInfo<ops::Reduce>& info) : Float32Kernel(info) {
    const TensorShape& xs = info.inputs[0].shape;
    const auto mask = *ops::Reduce::reduced_axes(params_, xs.rank());
    for (std::size_t d = 0; d < xs.rank(); ++d) {
      if (mask.reduced[d]) count_ *= xs[d];
      if (xs[d] == 1) continue;
      if (!groups_.empty() && groups_.back().reduced == mask.reduced[d])
        groups_.back().size *= xs[d];
      else
        groups_.push_back({xs[d], mask.reduced[d]});
    }
    std::uint64_t stride = 1;
    for (std::size_t g = groups_.size(); g-- > 0;) {
      groups_[g].stride = stride;
      stride *= groups_[g].size;
    }
    innermost_reduced_ = !groups_.empty() && groups_.back().reduced;
    run_ = groups_.empty() ? 1 : groups_.back().size;
    // Every combination of the reduced groups (but an innermost one, which is the contiguous run).
    reduced_offsets_ = {0};
    for (std::size_t g = 0; g + (innermost_reduced_ ? 1 : 0) < groups_.size(); ++g) {
      if (!groups_[g].reduced) continue;
      std::vector<std::uint64_t> next;
      next.reserve(reduced_offsets_.size() * groups_[g].size);
      for (std::uint64_t base : reduced_offsets_)
        for (std::uint64_t i = 0; i < groups_[g].size; ++i) next.push_back(base + i * groups_[g].stride);
      reduced_offsets_ = std::move(next);
    }
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    using O = ops::ReduceOperation;
    switch (params_.operation) {
      case O::Sum:
        return reduce(
            in, out, context, [](Vec acc, Vec v) { return acc + v; }, 0.0f);
      case O::Mean:
        return reduce(
            in, out, context, [](Vec acc, Vec v) { return acc + v; }, 0.0f);
      case O::Max:  // a NaN, once met, stays (as in Ref)
        return reduce(
            in, out, context, [](Vec acc, Vec v) { return xsimd::select(xsimd::isnan(v) || v > acc, v, acc); },
            -std::numeric_limits<float>::infinity());
      case O::Min:
        return reduce(
            in, out, context, [](Vec acc, Vec v) { return xsimd::select(xsimd::isnan(v) || v < acc, v, acc); },
            std::numeric_limits<float>::infinity());
    }
  }

 private:
  struct Group {
    std::uint64_t size = 1;
    bool reduced = false;
    std::uint64_t stride = 1;  // in the input, in elements
  };

  // Input offset of output position `o` (row of the innermost kept run, or element).
  std::uint64_t kept_offset(std::uint64_t o) const {
    std::uint64_t offset = 0;
    const std::size_t walked = groups_.empty() || innermost_reduced_ ? groups_.size() : groups_.size() - 1;
    for (std::size_t g = walked; g-- > 0;)
      if (!groups_[g].reduced) {
        offset += (o % groups_[g].size) * groups_[g].stride;
        o /= groups_[g].size;
      }
    return offset;
  }

  template <class Combine>
  void reduce(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context, Combine combine,
              float initial) const {
    const float* x = floats(in[0]);
    float* y = floats(out[0]);
    const bool mean = params_.operation == ops::ReduceOperation::Mean;
    const float scale = 1.0f / static_cast<float>(count_);
    const Vec start(initial);
    const std::uint64_t work = reduced_offsets_.size() * run_;
    if (!innermost_reduced_) {  // rows of `run_` kept elements: accumulate whole rows
      const std::uint64_t rows = out[0].info.num_elements() / std::max<std::uint64_t>(run_, 1);
      context.parallel_for(
          rows,
          [&](std::size_t row) {
            const float* xr = x + kept_offset(row);
            float* yr = y + row * run_;
            for (std::uint64_t c = 0; c < run_; c += lanes) {
              const std::size_t n = std::min<std::uint64_t>(lanes, run_ - c);
              Vec acc = start;
              for (std::uint64_t r : reduced_offsets_) acc = combine(acc, load_upto(xr + r + c, n));
              if (mean) acc = acc * Vec(scale);
              store_upto(yr + c, acc, n);
            }
          },
          work);
      return;
    }
    // Innermost reduced: fold each contiguous run into a vector, then its lanes in order.
    const auto tail = lanes_below(run_ % lanes);
    context.parallel_for(
        out[0].info.num_elements(),
        [&](std::size_t o) {
          const float* xo = x + kept_offset(o);
          Vec acc = start;
          for (std::uint64_t r : reduced_offsets_) {
            std::uint64_t i = 0;
            for (; i + lanes <= run_; i += lanes) acc = combine(acc, Vec::load_unaligned(xo + r + i));
            if (i < run_) acc = xsimd::select(tail, combine(acc, load_tail(xo + r + i, run_ - i)), acc);
          }
          alignas(64) float lane[lanes];
          acc.store_aligned(lane);
          Vec total(lane[0]);
          for (std::size_t l = 1; l < lanes; ++l) total = combine(total, Vec(lane[l]));
          y[o] = (mean ? total * Vec(scale) : total).get(0);
        },
        work);
  }

  std::vector<Group> groups_;
  bool innermost_reduced_ = false;
  std::uint64_t run_ = 1, count_ = 1;
  std::vector<std::uint64_t> reduced_offsets_;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
