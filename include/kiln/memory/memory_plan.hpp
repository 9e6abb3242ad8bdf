// SPDX-License-Identifier: Apache-2.0
// Buffer requests, memory plans, the lower bound every plan is measured against, and the validator.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "kiln/core/status.hpp"

namespace kiln {

/// One tensor to place: its size in bytes and the steps (inclusive) during which it must stay intact.
struct BufferRequest {
  std::uint64_t size = 0;
  std::uint32_t first_use = 0;
  std::uint32_t last_use = 0;
};

/// Where each buffer lives in one arena.
struct MemoryPlan {
  std::vector<std::uint64_t> offsets;  ///< one per request, in request order
  std::uint64_t arena_size = 0;        ///< bytes the arena needs
  std::uint64_t lower_bound = 0;       ///< no plan can use fewer bytes (largest sum of live sizes)
};

namespace detail {
constexpr std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}
constexpr bool lifetimes_overlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first_use <= b.last_use && b.first_use <= a.last_use;
}
}  // namespace detail

/// The largest total size (each rounded up to `alignment`) of buffers alive at the same step.
constexpr std::uint64_t memory_lower_bound(std::span<const BufferRequest> requests, std::uint64_t alignment) {
  // Sweep over the steps where a buffer starts: the live total only peaks at such a step.
  std::uint64_t best = 0;
  for (const BufferRequest& at : requests) {
    std::uint64_t live = 0;
    for (const BufferRequest& r : requests)
      if (r.first_use <= at.first_use && at.first_use <= r.last_use) live += detail::align_up(r.size, alignment);
    best = std::max(best, live);
  }
  return best;
}

/// Proves a plan sound: every offset aligned, every buffer inside the arena, and no two buffers
/// whose lifetimes overlap share a byte.
constexpr Status validate_plan(std::span<const BufferRequest> requests, const MemoryPlan& plan,
                               std::uint64_t alignment) {
  if (plan.offsets.size() != requests.size())
    return Status::error(ErrorCode::InvalidArgument, "plan has ", plan.offsets.size(), " offsets for ", requests.size(),
                         " buffers");
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].first_use > requests[i].last_use)
      return Status::error(ErrorCode::InvalidArgument, "buffer ", i, " ends (step ", requests[i].last_use,
                           ") before it starts (step ", requests[i].first_use, ")");
    if (plan.offsets[i] % alignment != 0)
      return Status::error(ErrorCode::InvalidArgument, "buffer ", i, " at offset ", plan.offsets[i],
                           " is not aligned to ", alignment);
    if (plan.offsets[i] + requests[i].size > plan.arena_size)
      return Status::error(ErrorCode::InvalidArgument, "buffer ", i, " [", plan.offsets[i], ", ",
                           plan.offsets[i] + requests[i].size, ") ends past the arena of ", plan.arena_size, " bytes");
    for (std::size_t j = 0; j < i; ++j) {
      if (!detail::lifetimes_overlap(requests[i], requests[j]) || requests[i].size == 0 || requests[j].size == 0)
        continue;
      const bool disjoint = plan.offsets[i] + requests[i].size <= plan.offsets[j] ||
                            plan.offsets[j] + requests[j].size <= plan.offsets[i];
      if (!disjoint)
        return Status::error(ErrorCode::InvalidArgument, "buffers ", j, " and ", i,
                             " are alive at the same time but overlap in memory");
    }
  }
  return Status::ok();
}

}  // namespace kiln
