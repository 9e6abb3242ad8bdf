// SPDX-License-Identifier: Apache-2.0
// TensorTable: where every tensor and every workload's scratch of a loaded network lives (constant
// storage, or an offset in its memory kind's arena), the plan that put it there, and the working
// memory that gives those offsets addresses.
#pragma once

#include <algorithm>
#include <cstring>
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

/// Every tensor of a loaded network (one slot per output of an executed layer) and every step's
/// scratch, with the memory plan of each memory kind.
class TensorTable {
 public:
  /// Slots for the outputs of every executed layer; Constant layers' data is copied into aligned
  /// storage now and never occupies an arena.
  Status add_outputs(const Network& network, std::size_t alignment, const ErasedAllocator& allocator) {
    alignment_ = alignment;
    slot_of_.assign(network.num_layers(), {});
    for (LayerId id : network.execution_order()) {
      const Layer& layer = network.layer(id);
      const auto* constant = layer.params_if<ops::Constant>();
      for (const TensorInfo& info : layer.outputs) {
        slot_of_[id].push_back(slots_.size());
        TensorSlot slot{info};
        if (constant) {
          AlignedBuffer storage(constant->data.size(), alignment, allocator);
          if (!constant->data.empty() && storage.data() == nullptr)
            return Status::error(ErrorCode::OutOfMemory, "cannot allocate ", constant->data.size(),
                                 " bytes for constant '", layer.name, "'");
          if (!constant->data.empty()) std::memcpy(storage.data(), constant->data.data(), constant->data.size());
          slot.is_constant = true;
          slot.data = storage.data();
          summary_.constant_bytes += constant->data.size();
          constants_.push_back(std::move(storage));
        }
        slots_.push_back(std::move(slot));
      }
    }
    return Status::ok();
  }

  std::size_t slot_of(OutputSlot output) const { return slot_of_[output.layer][output.index]; }
  const TensorSlot& operator[](std::size_t slot) const { return slots_[slot]; }
  std::size_t size() const noexcept { return slots_.size(); }
  std::size_t alignment() const noexcept { return alignment_; }
  std::span<const DeviceMemoryKind> device_kinds() const noexcept { return device_kinds_; }
  const MemorySummary& summary() const noexcept { return summary_; }

  /// The memory kind (1-based) of a device backend's tensors, added on first use.
  std::uint8_t device_kind(const BackendDescription& backend, void* context) {
    auto known = std::ranges::find(device_kinds_, backend.memory, &DeviceMemoryKind::name);
    if (known == device_kinds_.end()) {
      device_kinds_.push_back({backend.memory, &backend.hooks, context,
                               std::max(backend.alignment, backend.hooks.arena_alignment(context))});
      known = device_kinds_.end() - 1;
    }
    return static_cast<std::uint8_t>(known - device_kinds_.begin() + 1);
  }
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
  Status plan(const Network& network, const MemoryPlanner& planner) {
    struct Placed {
      std::uint8_t memory;
      BufferRequest request;
      std::uint64_t* offset;
    };
    std::vector<Placed> all;
    for (const ArenaTensor& tensor : arena_tensors(network)) {
      TensorSlot& slot = slots_[slot_of(tensor.slot)];
      all.push_back({slot.memory, tensor.request, &slot.offset});
    }
    for (std::size_t i = 0; i < scratch_.size(); ++i)
      all.push_back({scratch_[i].memory, {scratch_[i].bytes, scratch_positions_[i], scratch_positions_[i]},
                     &scratch_[i].offset});
    summary_.strategy = planner.name;
    for (std::uint8_t memory = 0; memory <= device_kinds_.size(); ++memory) {
      std::vector<BufferRequest> requests;
      std::vector<std::uint64_t*> offsets;
      for (const Placed& p : all)
        if (p.memory == memory) {
          requests.push_back(p.request);
          offsets.push_back(p.offset);
        }
      const std::size_t alignment = memory == 0 ? alignment_ : device_kinds_[memory - 1].alignment;
      const MemoryPlan plan = planner.plan(requests, alignment);
      if (auto valid = validate_plan(requests, plan, alignment); !valid)
        return valid.with_context(str_cat("memory plan of strategy '", planner.name, "' for ",
                                          memory == 0 ? HostMemory::name : device_kinds_[memory - 1].name, " memory"));
      for (std::size_t r = 0; r < requests.size(); ++r) *offsets[r] = plan.offsets[r];
      if (memory == 0) {
        summary_.tensors = requests.size();
        summary_.arena_bytes = plan.arena_size;
        summary_.lower_bound_bytes = plan.lower_bound;
        summary_.unplanned_bytes = plan_memory<OneBlockPerTensor>(requests, alignment).arena_size;
      } else {
        device_kinds_[memory - 1].arena_bytes = plan.arena_size;
        summary_.device_tensors += requests.size();
        summary_.device_arena_bytes += plan.arena_size;
        summary_.device_lower_bound_bytes += plan.lower_bound;
      }
    }
    return Status::ok();
  }

  /// Allocates `memory`'s arenas and binds every step's views into them: `steps[s]` reads the
  /// slots `inputs(s)`, writes `outputs(s)` and has the scratch `scratch_of(s)` (or none).
  template <class Steps>
  Status allocate(WorkingMemory& memory, const Steps& steps, const ErasedAllocator& allocator) const {
    memory.arena = AlignedBuffer(summary_.arena_bytes, alignment_, allocator);
    if (summary_.arena_bytes != 0 && memory.arena.data() == nullptr)
      return Status::error(ErrorCode::OutOfMemory, "cannot allocate the ", summary_.arena_bytes, "-byte arena");
    memory.device_arenas.clear();
    for (const DeviceMemoryKind& kind : device_kinds_) {
      auto arena = kind.hooks->allocate_arena(kind.context, kind.arena_bytes);
      if (!arena) return arena.status().with_context(str_cat("the ", kind.arena_bytes, "-byte ", kind.name, " arena"));
      memory.device_arenas.push_back(std::move(*arena));
    }
    // Device views are made once per tensor, not once per reader.
    auto view = [&](std::uint8_t kind, std::uint64_t offset, std::uint64_t bytes) -> Expected<void*> {
      if (kind == 0) return static_cast<void*>(memory.arena.data() + offset);
      return memory.device_arenas[kind - 1].view(offset, bytes);
    };
    std::vector<void*> addresses(slots_.size(), nullptr);
    for (std::size_t t = 0; t < slots_.size(); ++t) {
      const TensorSlot& slot = slots_[t];
      if (slot.is_constant) {
        addresses[t] = const_cast<std::byte*>(slot.data);
        continue;
      }
      auto address = view(slot.memory, slot.offset, slot.info.num_bytes());
      if (!address) return address.status();
      addresses[t] = *address;
    }
    memory.inputs.assign(steps.size(), {});
    memory.outputs.assign(steps.size(), {});
    memory.scratch.assign(steps.size(), {});
    memory.exported.assign(steps.size(), false);
    memory.skipped.assign(steps.size(), false);
    for (std::size_t s = 0; s < steps.size(); ++s) {
      for (std::size_t t : steps[s].inputs) memory.inputs[s].push_back({slots_[t].info, addresses[t]});
      for (std::size_t t : steps[s].outputs) memory.outputs[s].push_back({slots_[t].info, addresses[t]});
      if (steps[s].scratch == no_scratch) continue;
      const ScratchSlot& scratch = scratch_[steps[s].scratch];
      auto address = view(scratch.memory, scratch.offset, scratch.bytes);
      if (!address) return address.status();
      memory.scratch[s] = {static_cast<std::byte*>(*address), scratch.bytes};
    }
    memory.allocated = true;
    return Status::ok();
  }

  static constexpr std::size_t no_scratch = static_cast<std::size_t>(-1);

 private:
  std::vector<TensorSlot> slots_;
  std::vector<std::vector<std::size_t>> slot_of_;  ///< per layer, per output
  std::vector<ScratchSlot> scratch_;
  std::vector<std::uint32_t> scratch_positions_;
  std::vector<DeviceMemoryKind> device_kinds_;
  std::vector<AlignedBuffer> constants_;
  std::size_t alignment_ = 64;
  MemorySummary summary_;
};

}  // namespace kiln::detail
