// SPDX-License-Identifier: Apache-2.0
// LoadOptions and the read-only facts a Runtime reports about itself and its networks.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kiln/memory/planners.hpp"

namespace kiln {

/// Identifies a network loaded into a Runtime.
using NetworkId = int;

/// How Runtime::load prepares a network.
struct LoadOptions {
  MemoryStrategyKind memory_strategy = MemoryStrategyKind::GreedyBySize;
};

/// The memory a loaded network planned for its intermediate tensors.
struct MemorySummary {
  std::string_view strategy;
  std::size_t tensors = 0;              ///< tensors placed in the arena
  std::uint64_t arena_bytes = 0;        ///< what the plan allocates
  std::uint64_t lower_bound_bytes = 0;  ///< no plan can do better
  std::uint64_t unplanned_bytes = 0;    ///< one block per tensor, for comparison
  std::uint64_t constant_bytes = 0;     ///< weights and other constants, prepared once at load
};

/// One compiled-in backend as a Runtime sees it.
struct BackendInfo {
  std::string_view id;
  std::string_view memory;
  bool available = false;
};

/// The backends a Runtime was built with, in preference order (Arm NN IDeviceSpec).
struct DeviceSpec {
  std::vector<BackendInfo> backends;
};

}  // namespace kiln
