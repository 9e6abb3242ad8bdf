// SPDX-License-Identifier: Apache-2.0
// Memory planning strategies: each turns buffer requests into offsets in one arena.
#pragma once

#include <algorithm>
#include <string_view>
#include <vector>

#include "kiln/memory/memory_plan.hpp"

namespace kiln {

/// A planning strategy: a type with a name and a constexpr `place` that returns one offset per
/// request, each a multiple of `alignment`. plan_memory() adds the arena size and the lower bound.
///
/// \code
/// BufferRequest requests[] = {{1024, 0, 1}, {512, 1, 2}, {1024, 2, 3}};
/// MemoryPlan plan = plan_memory<GreedyBySize>(requests, 64);  // buffers 0 and 2 share bytes
/// assert(validate_plan(requests, plan, 64).is_ok());
/// \endcode
template <class S>
concept MemoryStrategy = requires(std::span<const BufferRequest> requests, std::uint64_t alignment) {
  { S::name } -> std::convertible_to<std::string_view>;
  { S::place(requests, alignment) } -> std::same_as<std::vector<std::uint64_t>>;
};

/// Every buffer gets its own bytes: the baseline, and what a network without planning would use.
struct OneBlockPerTensor {
  static constexpr std::string_view name = "one-block-per-tensor";
  static constexpr std::vector<std::uint64_t> place(std::span<const BufferRequest> requests, std::uint64_t alignment) {
    std::vector<std::uint64_t> offsets;
    std::uint64_t next = 0;
    for (const BufferRequest& request : requests) {
      offsets.push_back(next);
      next += detail::align_up(request.size, alignment);
    }
    return offsets;
  }
};

/// Largest buffers first; each goes into the smallest gap, among the buffers already placed whose
/// lifetimes overlap its own, that holds it (best fit), else above them all (tflite-micro's greedy
/// planner with best-fit gaps).
struct GreedyBySize {
  static constexpr std::string_view name = "greedy-by-size";
  static constexpr std::vector<std::uint64_t> place(std::span<const BufferRequest> requests, std::uint64_t alignment) {
    // Vectors grow by push_back: Clang 14 cannot evaluate libstdc++'s sized constructors of
    // trivial types in constant expressions.
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < requests.size(); ++i) order.push_back(i);
    std::ranges::sort(order, [&](std::size_t a, std::size_t b) {
      if (requests[a].size != requests[b].size) return requests[a].size > requests[b].size;
      if (requests[a].first_use != requests[b].first_use) return requests[a].first_use < requests[b].first_use;
      return a < b;
    });
    std::vector<std::uint64_t> offsets;
    for (std::size_t i = 0; i < requests.size(); ++i) offsets.push_back(0);
    std::vector<std::size_t> placed;
    struct Interval {
      std::uint64_t begin, end;
    };
    std::vector<Interval> busy;
    for (std::size_t index : order) {
      const BufferRequest& request = requests[index];
      busy.clear();
      for (std::size_t other : placed)
        if (detail::lifetimes_overlap(request, requests[other]) && requests[other].size != 0)
          busy.push_back({offsets[other], offsets[other] + requests[other].size});
      std::ranges::sort(busy, [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
      std::uint64_t best_offset = 0, best_gap = ~std::uint64_t{0}, cursor = 0;
      bool found = false;
      for (const Interval& interval : busy) {
        const std::uint64_t start = detail::align_up(cursor, alignment);
        if (interval.begin >= start && interval.begin - start >= request.size && interval.begin - start < best_gap) {
          best_gap = interval.begin - start;
          best_offset = start;
          found = true;
        }
        cursor = std::max(cursor, interval.end);
      }
      offsets[index] = found ? best_offset : detail::align_up(cursor, alignment);
      placed.push_back(index);
    }
    return offsets;
  }
};

/// Runs strategy S and completes the plan with its arena size and the lower bound.
template <MemoryStrategy S>
constexpr MemoryPlan plan_memory(std::span<const BufferRequest> requests, std::uint64_t alignment) {
  MemoryPlan plan;
  plan.offsets = S::place(requests, alignment);
  for (std::size_t i = 0; i < requests.size(); ++i)
    plan.arena_size = std::max(plan.arena_size, plan.offsets[i] + detail::align_up(requests[i].size, alignment));
  plan.lower_bound = memory_lower_bound(requests, alignment);
  return plan;
}

/// The strategies a runtime can be asked for by value (LoadOptions::memory_strategy).
enum class MemoryStrategyKind : std::uint8_t { OneBlockPerTensor, GreedyBySize };

constexpr std::string_view to_string(MemoryStrategyKind kind) {
  return kind == MemoryStrategyKind::OneBlockPerTensor ? OneBlockPerTensor::name : GreedyBySize::name;
}

constexpr MemoryPlan plan_memory(MemoryStrategyKind kind, std::span<const BufferRequest> requests, std::uint64_t alignment) {
  switch (kind) {
    case MemoryStrategyKind::OneBlockPerTensor: return plan_memory<OneBlockPerTensor>(requests, alignment);
    case MemoryStrategyKind::GreedyBySize: return plan_memory<GreedyBySize>(requests, alignment);
  }
  return {};
}

}  // namespace kiln
