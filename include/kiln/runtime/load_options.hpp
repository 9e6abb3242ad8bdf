// SPDX-License-Identifier: Apache-2.0
// LoadOptions, RuntimeOptions, and the read-only facts a Runtime reports about itself and its networks.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "kiln/backends/backend.hpp"
#include "kiln/core/tensor.hpp"
#include "kiln/graph/layer.hpp"
#include "kiln/memory/allocator.hpp"
#include "kiln/memory/planners.hpp"
#include "kiln/runtime/logger.hpp"

namespace kiln {

/// Identifies a network loaded into a Runtime.
using NetworkId = int;

/// Identifies a user buffer pre-imported for a network's input or output binding.
using ImportedId = unsigned;

/// What the debug callback sees after a layer ran: one call per output of the layer.
struct DebugEvent {
  LayerId layer = 0;
  std::string_view layer_name;
  std::string_view op;
  std::string_view backend;
  std::uint32_t output_index = 0;
  ConstTensor tensor;  ///< valid only during the call
};

/// How Runtime::load prepares a network (Arm NN INetworkProperties and more).
struct LoadOptions {
  /// How intermediate tensors are placed: MemoryPlanner::of<S>() for any strategy type S, or
  /// memory_planner_by_name("greedy-by-breadth").
  MemoryPlanner memory_planner = MemoryPlanner::of<GreedyBySize>();
  /// Executed with Runtime::execute and working-memory handles (several at once) instead of
  /// Runtime::enqueue. Every backend the network uses must support it.
  bool async_execution = false;
  /// Zero-copy inputs: a user input buffer aligned to the network's alignment is read in place
  /// by the layers that consume it; a misaligned one is copied, as without this option.
  bool import_inputs = false;
  /// Zero-copy outputs: a layer whose only consumer is an output writes straight into the user's
  /// buffer when it is aligned to the network's alignment; otherwise the result is copied.
  /// Input and output buffers must not overlap.
  bool export_outputs = false;
  /// Records load time, each layer's time and each inference's time (Runtime::profile).
  bool profiling = false;
  /// How many of its most recent inferences a profiled network keeps (memory for them is reserved
  /// at load, so profiling allocates nothing per inference).
  std::size_t profile_history = 64;
  /// Called after every layer with each of its outputs, when set (slows execution down).
  std::function<void(const DebugEvent&)> debug_callback;
};

/// How a Runtime manages memory across its networks.
struct RuntimeOptions {
  /// Where host memory (arenas, constants) comes from; default: aligned operator new.
  AllocatorRef<HostMemory> host_allocator;
  /// When enqueue switches from one network to another, free the previous network's working
  /// memory (reallocated at its next enqueue), as Arm NN does. Trades speed for peak memory.
  bool release_working_memory_on_switch = false;
  /// Loads, unloads and failures, at the chosen severity; off by default.
  Logger logger;
};

/// The memory a loaded network planned for its intermediate tensors.
struct MemorySummary {
  std::string_view strategy;
  std::size_t tensors = 0;              ///< tensors placed in the arena
  std::uint64_t arena_bytes = 0;        ///< what the plan allocates
  std::uint64_t lower_bound_bytes = 0;  ///< no plan can do better
  std::uint64_t unplanned_bytes = 0;    ///< one block per tensor, for comparison
  std::uint64_t constant_bytes = 0;     ///< weights and other constants the runtime holds
  /// Constants held only by the workloads' own copies (weights packed at load): not held twice.
  std::uint64_t constant_bytes_in_workloads = 0;
  /// Tensors in device memory (all device kinds together), planned by the same strategy; a device
  /// backend's own copies of constants are not counted here.
  std::size_t device_tensors = 0;
  std::uint64_t device_arena_bytes = 0;
  std::uint64_t device_lower_bound_bytes = 0;
};

/// One compiled-in backend as a Runtime sees it.
struct BackendInfo {
  std::string_view id;
  std::string_view memory;
  bool available = false;
  BackendCapabilities capabilities;
};

/// The backends a Runtime was built with, in preference order (Arm NN IDeviceSpec).
struct DeviceSpec {
  std::vector<BackendInfo> backends;
};

}  // namespace kiln
