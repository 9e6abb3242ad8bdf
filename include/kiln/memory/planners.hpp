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

namespace detail {

/// Places buffers one by one in `order`: each goes into the smallest gap, among the buffers
/// already placed whose lifetimes overlap its own, that holds it (best fit), else above them all.
constexpr std::vector<std::uint64_t> place_best_fit(std::span<const BufferRequest> requests,
                                                    std::span<const std::size_t> order, std::uint64_t alignment) {
  // Vectors grow by push_back: Clang 14 cannot evaluate libstdc++'s sized constructors of
  // trivial types in constant expressions.
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
      if (lifetimes_overlap(request, requests[other]) && requests[other].size != 0)
        busy.push_back({offsets[other], offsets[other] + requests[other].size});
    std::ranges::sort(busy, [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
    std::uint64_t best_offset = 0, best_gap = ~std::uint64_t{0}, cursor = 0;
    bool found = false;
    for (const Interval& interval : busy) {
      const std::uint64_t start = align_up(cursor, alignment);
      if (interval.begin >= start && interval.begin - start >= request.size && interval.begin - start < best_gap) {
        best_gap = interval.begin - start;
        best_offset = start;
        found = true;
      }
      cursor = std::max(cursor, interval.end);
    }
    offsets[index] = found ? best_offset : align_up(cursor, alignment);
    placed.push_back(index);
  }
  return offsets;
}

/// Buffer indices sorted by size, largest first (ties: earlier first use, then index).
constexpr std::vector<std::size_t> largest_first(std::span<const BufferRequest> requests) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < requests.size(); ++i) order.push_back(i);
  std::ranges::sort(order, [&](std::size_t a, std::size_t b) {
    if (requests[a].size != requests[b].size) return requests[a].size > requests[b].size;
    if (requests[a].first_use != requests[b].first_use) return requests[a].first_use < requests[b].first_use;
    return a < b;
  });
  return order;
}

}  // namespace detail

/// Largest buffers first, each at its best-fitting offset (tflite-micro's greedy planner with
/// best-fit gaps).
struct GreedyBySize {
  static constexpr std::string_view name = "greedy-by-size";
  static constexpr std::vector<std::uint64_t> place(std::span<const BufferRequest> requests, std::uint64_t alignment) {
    const auto order = detail::largest_first(requests);
    return detail::place_best_fit(requests, order, alignment);
  }
};

/// Greedy by breadth (Pisarchyk & Lee, "Efficient Memory Management for Deep Neural Net
/// Inference", 2020): visit the steps from the one with the most live bytes down; at each, place
/// its still unplaced buffers, largest first, at their best-fitting offsets. The widest moments
/// of the network are packed first, where a greedy-by-size order may fragment them.
struct GreedyByBreadth {
  static constexpr std::string_view name = "greedy-by-breadth";
  static constexpr std::vector<std::uint64_t> place(std::span<const BufferRequest> requests, std::uint64_t alignment) {
    std::uint32_t steps = 0;
    for (const BufferRequest& r : requests) steps = std::max(steps, r.last_use + 1);
    std::vector<std::uint64_t> breadth;
    for (std::uint32_t step = 0; step < steps; ++step) breadth.push_back(0);
    for (const BufferRequest& r : requests)
      for (std::uint32_t step = r.first_use; step <= r.last_use; ++step)
        breadth[step] += detail::align_up(r.size, alignment);
    std::vector<std::uint32_t> step_order;
    for (std::uint32_t step = 0; step < steps; ++step) step_order.push_back(step);
    std::ranges::sort(step_order, [&](std::uint32_t a, std::uint32_t b) {
      return breadth[a] != breadth[b] ? breadth[a] > breadth[b] : a < b;
    });
    const auto by_size = detail::largest_first(requests);
    std::vector<bool> queued;
    for (std::size_t i = 0; i < requests.size(); ++i) queued.push_back(false);
    std::vector<std::size_t> order;
    for (std::uint32_t step : step_order)
      for (std::size_t index : by_size)
        if (!queued[index] && requests[index].first_use <= step && step <= requests[index].last_use) {
          queued[index] = true;
          order.push_back(index);
        }
    return detail::place_best_fit(requests, order, alignment);
  }
};

/// A strategy chosen at run time: its name and its placement function. Any MemoryStrategy type
/// converts to one (MemoryPlanner::of<MyStrategy>()), and the built-in ones are found by name.
struct MemoryPlanner {
  using PlaceFn = std::vector<std::uint64_t> (*)(std::span<const BufferRequest>, std::uint64_t);
  std::string_view name;
  PlaceFn place = nullptr;

  template <MemoryStrategy S>
  static constexpr MemoryPlanner of() {
    return {S::name, &S::place};
  }
  constexpr MemoryPlan plan(std::span<const BufferRequest> requests, std::uint64_t alignment) const {
    MemoryPlan plan;
    plan.offsets = place(requests, alignment);
    for (std::size_t i = 0; i < requests.size(); ++i)
      plan.arena_size = std::max(plan.arena_size, plan.offsets[i] + detail::align_up(requests[i].size, alignment));
    plan.lower_bound = memory_lower_bound(requests, alignment);
    return plan;
  }
};

/// Runs strategy S and completes the plan with its arena size and the lower bound.
template <MemoryStrategy S>
constexpr MemoryPlan plan_memory(std::span<const BufferRequest> requests, std::uint64_t alignment) {
  return MemoryPlanner::of<S>().plan(requests, alignment);
}

/// The strategies kiln ships, in the order bench_planner reports them.
inline constexpr MemoryPlanner builtin_memory_planners[] = {
    MemoryPlanner::of<OneBlockPerTensor>(), MemoryPlanner::of<GreedyBySize>(), MemoryPlanner::of<GreedyByBreadth>()};

/// A built-in strategy by name ("one-block-per-tensor", "greedy-by-size", "greedy-by-breadth").
constexpr Expected<MemoryPlanner> memory_planner_by_name(std::string_view name) {
  std::string known;
  for (const MemoryPlanner& planner : builtin_memory_planners) {
    if (planner.name == name) return planner;
    known += detail::str_cat(known.empty() ? "" : ", ", planner.name);
  }
  return Status::error(ErrorCode::NotFound, "memory strategy '", name, "' does not exist; kiln has ", known);
}

}  // namespace kiln
