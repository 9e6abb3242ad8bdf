// SPDX-License-Identifier: Apache-2.0
// TensorTable: where every tensor and every workload's scratch of a loaded network lives (constant
// storage, or an offset in its memory kind's arena), the plan that put it there, and the working
// memory that gives those offsets addresses.
#pragma once

#include <span>
#include <vector>

#include "kiln/backends/backend.hpp"
#include "kiln/memory/arena.hpp"
#include "kiln/memory/device_arena.hpp"
#include "kiln/optimizer/optimized_network.hpp"
#include "kiln/runtime/arena_tensors.hpp"
#include "kiln/runtime/load_options.hpp"
#include "kiln/runtime/profile.hpp"

namespace kiln::detail {

/// Where a tensor's bytes are: an offset in its memory kind's arena, or constant storage prepared at load.
struct TensorSlot {
  TensorInfo info;
  bool is_constant = false;
  std::uint8_t memory = 0;          ///< 0: host memory; k: the device memory kind device_kinds[k - 1]
  std::uint64_t offset = 0;         ///< arena offset (intermediate tensors)
  const std::byte* data = nullptr;  ///< constant data
};

/// The scratch of one step: `bytes` at `offset` of its memory kind's arena, for that step alone.
struct ScratchSlot {
  std::uint8_t memory = 0;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

/// A device memory kind a loaded network uses, reached through the context of the backend that
/// owns it (ContextHooks).
struct DeviceMemoryKind {
  std::string_view name;
  const ContextHooks* hooks = nullptr;
  void* context = nullptr;
  std::size_t alignment = 1;
  std::uint64_t arena_bytes = 0;
};

/// The per-inference state of a network: its arenas and the tensor views bound into them.
/// Allocated on first use, released on request; one inference at a time uses it.
struct WorkingMemory {
  AlignedBuffer arena;
  std::vector<DeviceArena> device_arenas;        ///< per device memory kind
  std::vector<std::vector<ConstTensor>> inputs;  ///< per step
  std::vector<std::vector<Tensor>> outputs;      ///< per step
  std::vector<std::span<std::byte>> scratch;     ///< per step
  std::vector<bool> exported;                    ///< per step: this inference's output went in place
  std::vector<bool> skipped;                     ///< per step: a copy this inference's import made unneeded
  std::vector<DeviceImport> device_imports;      ///< the user buffers wrapped for the last inference
  InferenceRecord timing;                        ///< what a profiled inference records
  /// Profiled device steps: which timing entry each fills in once the device has finished.
  std::vector<std::pair<std::size_t, std::function<std::optional<DeviceSpan>()>>> device_timings;
  bool allocated = false;
};

struct Step;
class ConstantReads;

/// Marks a step without scratch.
inline constexpr std::size_t no_scratch = static_cast<std::size_t>(-1);
/// Marks an output a layer does not have.
inline constexpr std::size_t no_slot = static_cast<std::size_t>(-1);

/// Every tensor of a loaded network (one slot per output of an executed layer) and every step's
/// scratch, with the memory plan of each memory kind.
class TensorTable {
 public:
  /// Slots for the outputs of every executed layer. Constant layers never occupy an arena: see
  /// load_constants.
  void add_outputs(const Network& network, std::size_t alignment);
  /// Copies the data of the constants some step reads at run time into aligned storage. A
  /// constant only read by workloads that copied it when they were created (packed weights) is
  /// not kept a second time.
  Status load_constants(const Network& network, const ConstantReads& reads, const ErasedAllocator& allocator);

  std::size_t slot_of(OutputSlot output) const { return slot_of_[output.layer][output.index]; }
  /// The slot of `output`, or no_slot when the layer has no such output.
  std::size_t slot_of_or_none(OutputSlot output) const {
    return output.layer < slot_of_.size() && output.index < slot_of_[output.layer].size()
               ? slot_of_[output.layer][output.index]
               : no_slot;
  }
  const TensorSlot& operator[](std::size_t slot) const { return slots_[slot]; }
  std::size_t size() const noexcept { return slots_.size(); }
  std::size_t alignment() const noexcept { return alignment_; }
  std::span<const DeviceMemoryKind> device_kinds() const noexcept { return device_kinds_; }
  const MemorySummary& summary() const noexcept { return summary_; }

  /// The memory kind (1-based) of a device backend's tensors, added on first use.
  std::uint8_t device_kind(const BackendDescription& backend, void* context);
  void place_in(std::size_t slot, std::uint8_t memory) { slots_[slot].memory = memory; }

  /// Scratch of `bytes` for the step at `position` of the execution order, in `memory`.
  std::size_t add_scratch(std::uint8_t memory, std::uint64_t bytes, std::uint32_t position) {
    scratch_.push_back({memory, 0, bytes});
    scratch_positions_.push_back(position);
    return scratch_.size() - 1;
  }
  const ScratchSlot& scratch(std::size_t index) const { return scratch_[index]; }

  /// Places the arena tensors and the scratch of each memory kind with `planner`, and proves each
  /// plan sound.
  Status plan(const Network& network, const MemoryPlanner& planner);

  /// Allocates `memory`'s arenas and binds every step's views into them.
  Status allocate(WorkingMemory& memory, std::span<const Step> steps, const ErasedAllocator& allocator) const;

 private:
  std::vector<TensorSlot> slots_;
  std::vector<std::vector<std::size_t>> slot_of_;  ///< per layer, per output
  std::vector<ScratchSlot> scratch_;
  std::vector<std::uint32_t> scratch_positions_;
  std::vector<DeviceMemoryKind> device_kinds_;
  std::vector<AlignedBuffer> constants_;
  std::vector<std::pair<LayerId, std::size_t>> constant_slots_;  ///< each Constant layer and its slot
  std::size_t alignment_ = 64;
  MemorySummary summary_;
};

}  // namespace kiln::detail
