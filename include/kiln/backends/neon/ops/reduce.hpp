// SPDX-License-Identifier: Apache-2.0
// Neon Reduce: axes merged at load into alternating runs of kept and reduced dimensions, then
// whole rows accumulated a vector at a time (innermost kept) or contiguous runs folded (innermost reduced);
// int8 the same walk in 32-bit integers, then quantized::ReduceStage.
#pragma once

#include <limits>
#include <vector>

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"
#include "kiln/backends/quantized_reduce.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// A Reduce's input walked as alternating runs of kept and reduced dimensions (axes of size 1
/// dropped, neighbours of one kind merged), made at load: the output is rows of `run` kept
/// elements (innermost kept) or single elements folding contiguous runs (innermost reduced), and
/// each output folds the elements at reduced_offsets (times the run, when innermost reduced).
struct ReduceWalk {
  struct Group {
    std::uint64_t size = 1;
    bool reduced = false;
    std::uint64_t stride = 1;  // in the input, in elements
  };

  ReduceWalk() = default;
  ReduceWalk(const ops::Reduce::Params& params, const TensorShape& xs) : count(ops::Reduce::reduced_count(params, xs)) {
    const auto mask = *ops::Reduce::reduced_axes(params, xs.rank());
    for (std::size_t d = 0; d < xs.rank(); ++d) {
      if (xs[d] == 1) continue;
      if (!groups.empty() && groups.back().reduced == mask.reduced[d])
        groups.back().size *= xs[d];
      else
        groups.push_back({xs[d], mask.reduced[d]});
    }
    std::uint64_t stride = 1;
    for (std::size_t g = groups.size(); g-- > 0;) {
      groups[g].stride = stride;
      stride *= groups[g].size;
    }
    innermost_reduced = !groups.empty() && groups.back().reduced;
    run = groups.empty() ? 1 : groups.back().size;
    // Every combination of the reduced groups (but an innermost one, which is the contiguous run).
    reduced_offsets = {0};
    for (std::size_t g = 0; g + (innermost_reduced ? 1 : 0) < groups.size(); ++g) {
      if (!groups[g].reduced) continue;
      std::vector<std::uint64_t> next;
      next.reserve(reduced_offsets.size() * groups[g].size);
      for (std::uint64_t base : reduced_offsets)
        for (std::uint64_t i = 0; i < groups[g].size; ++i) next.push_back(base + i * groups[g].stride);
      reduced_offsets = std::move(next);
    }
  }

  /// Input offset of output position `o` (row of the innermost kept run, or element).
  std::uint64_t kept_offset(std::uint64_t o) const {
    std::uint64_t offset = 0;
    const std::size_t walked = groups.empty() || innermost_reduced ? groups.size() : groups.size() - 1;
    for (std::size_t g = walked; g-- > 0;)
      if (!groups[g].reduced) {
        offset += (o % groups[g].size) * groups[g].stride;
        o /= groups[g].size;
      }
    return offset;
  }

  /// Splits the `outputs` output elements over the threads: with the innermost group kept,
  /// row(x offset, y offset) for each row of `run` outputs; with it reduced, element(x offset, o)
  /// for each output o.
  template <class Row, class Element>
  void parallel(Context& context, std::uint64_t outputs, Row row, Element element) const {
    const std::uint64_t work = reduced_offsets.size() * run;
    if (innermost_reduced)
      context.parallel_for(
          outputs, [&](std::size_t o) { element(kept_offset(o), o); }, work);
    else
      context.parallel_for(
          outputs / std::max<std::uint64_t>(run, 1), [&](std::size_t r) { row(kept_offset(r), r * run); }, work);
  }

  std::vector<Group> groups;
  bool innermost_reduced = false;
  std::uint64_t run = 1, count = 1;
  std::vector<std::uint64_t> reduced_offsets;
};

template <>
struct Kernel<ops::Reduce, DataType::Float32> : Float32Kernel<ops::Reduce> {
  explicit Kernel(const WorkloadInfo<ops::Reduce>& info) : Float32Kernel(info), walk_(params_, info.inputs[0].shape) {}

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
      case O::Prod:
        return reduce(
            in, out, context, [](Vec acc, Vec v) { return acc * v; }, 1.0f);
    }
  }

 private:
  template <class Combine>
  void reduce(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context, Combine combine,
              float initial) const {
    const float* x = floats(in[0]);
    float* y = floats(out[0]);
    const bool mean = params_.operation == ops::ReduceOperation::Mean;
    const float scale = 1.0f / static_cast<float>(walk_.count);
    const Vec start(initial);
    const auto tail = lanes_below(walk_.run % lanes);
    walk_.parallel(
        context, out[0].info.num_elements(),
        [&](std::uint64_t x_offset, std::uint64_t y_offset) {  // whole rows of kept elements, a vector at a time
          for (std::uint64_t c = 0; c < walk_.run; c += lanes) {
            const std::size_t n = std::min<std::uint64_t>(lanes, walk_.run - c);
            Vec acc = start;
            for (std::uint64_t r : walk_.reduced_offsets) acc = combine(acc, load_upto(x + x_offset + r + c, n));
            if (mean) acc = acc * Vec(scale);
            store_upto(y + y_offset + c, acc, n);
          }
        },
        [&](std::uint64_t x_offset, std::uint64_t o) {  // each contiguous run into a vector, then its lanes in order
          const float* xo = x + x_offset;
          Vec acc = start;
          for (std::uint64_t r : walk_.reduced_offsets) {
            std::uint64_t i = 0;
            for (; i + lanes <= walk_.run; i += lanes) acc = combine(acc, Vec::load_unaligned(xo + r + i));
            if (i < walk_.run) acc = xsimd::select(tail, combine(acc, load_tail(xo + r + i, walk_.run - i)), acc);
          }
          alignas(64) float lane[lanes];
          acc.store_aligned(lane);
          Vec total(lane[0]);
          for (std::size_t l = 1; l < lanes; ++l) total = combine(total, Vec(lane[l]));
          y[o] = (mean ? total * Vec(scale) : total).get(0);
        });
  }

  ReduceWalk walk_;
};

/// int8: RefBackend's integer fold on the walk above, a block of a row's kept elements at a time
/// (the compiler vectorises the block) or a run folded per output, then quantized::ReduceStage.
/// Partial sums of bytes stay within int32 (check_reduce bounds the count); the zero point is
/// taken off the folded total in 64 bits, so the result is RefBackend's.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Kernel<ops::Reduce, T> {
  using Byte = element_type_t<T>;

  static Status is_supported(const WorkloadInfo<ops::Reduce>& info) { return quantized::check_reduce(info); }
  static Expected<Kernel> create(const WorkloadInfo<ops::Reduce>& info, Context&) {
    auto stage = quantized::ReduceStage::make(info);
    if (!stage) return stage.status();
    return Kernel{*stage, ReduceWalk(info.params, info.inputs[0].shape), info.params.operation};
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    using O = ops::ReduceOperation;
    switch (operation) {
      case O::Sum:
      case O::Mean:
        return reduce(
            in, out, context, [](std::int32_t a, std::int32_t v) { return a + v; }, 0, true);
      case O::Max:
        return reduce(
            in, out, context, [](std::int32_t a, std::int32_t v) { return std::max(a, v); }, -128, false);
      case O::Min:
      case O::Prod:  // refused by check_reduce
        return reduce(
            in, out, context, [](std::int32_t a, std::int32_t v) { return std::min(a, v); }, 255, false);
    }
  }

  quantized::ReduceStage stage;
  ReduceWalk walk;
  ops::ReduceOperation operation = ops::ReduceOperation::Sum;

 private:
  /// The output of a folded total: a sum of `walk.count` bytes less count x zx, or an extreme less zx.
  Byte output(std::int32_t folded, bool sums) const {
    const std::int64_t zeros = sums ? static_cast<std::int64_t>(walk.count) : 1;
    return static_cast<Byte>(stage(std::int64_t{folded} - zeros * stage.x_zero()));
  }

  template <class Combine>
  void reduce(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context, Combine combine,
              std::int32_t initial, bool sums) const {
    const auto* x = static_cast<const Byte*>(in[0].data);
    auto* y = static_cast<Byte*>(out[0].data);
    walk.parallel(
        context, out[0].info.num_elements(),
        [&](std::uint64_t x_offset, std::uint64_t y_offset) {  // a block of a row of kept elements at a time
          constexpr std::uint64_t block = 64;
          for (std::uint64_t c = 0; c < walk.run; c += block) {
            const std::uint64_t n = std::min(block, walk.run - c);
            std::int32_t acc[block];
            std::fill_n(acc, n, initial);
            for (std::uint64_t r : walk.reduced_offsets)
              for (std::uint64_t i = 0; i < n; ++i) acc[i] = combine(acc[i], std::int32_t{x[x_offset + r + c + i]});
            for (std::uint64_t i = 0; i < n; ++i) y[y_offset + c + i] = output(acc[i], sums);
          }
        },
        [&](std::uint64_t x_offset, std::uint64_t o) {  // each contiguous run folded
          std::int32_t acc = initial;
          for (std::uint64_t r : walk.reduced_offsets)
            for (std::uint64_t i = 0; i < walk.run; ++i) acc = combine(acc, std::int32_t{x[x_offset + r + i]});
          y[o] = output(acc, sums);
        });
  }
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
