// SPDX-License-Identifier: Apache-2.0
// TensorTable's definitions (see tensor_table.hpp; network_layout.hpp includes them).
#pragma once

#include <algorithm>
#include <cstring>

#include "kiln/runtime/network_layout.hpp"
#include "kiln/runtime/tensor_table.hpp"

namespace kiln::detail {

KILN_INLINE void TensorTable::add_outputs(const Network& network, std::size_t alignment) {
  alignment_ = alignment;
  slot_of_.assign(network.num_layers(), {});
  for (LayerId id : network.execution_order()) {
    const Layer& layer = network.layer(id);
    const bool constant = layer.is<ops::Constant>();
    for (const TensorInfo& info : layer.outputs) {
      slot_of_[id].push_back(slots_.size());
      if (constant) constant_slots_.emplace_back(id, slots_.size());
      slots_.push_back({.info = info, .is_constant = constant});
    }
  }
}

KILN_INLINE Status TensorTable::load_constants(const Network& network, const ConstantReads& reads,
                                               const ErasedAllocator& allocator) {
  for (const auto& [id, slot] : constant_slots_) {
    if (!reads.read_at_run(id)) {
      summary_.constant_bytes_in_workloads += slots_[slot].info.num_bytes();
      continue;
    }
    const Layer& layer = network.layer(id);
    const auto& data = layer.params_if<ops::Constant>()->data;
    AlignedBuffer storage(data.size(), alignment_, allocator);
    if (!data.empty() && storage.data() == nullptr)
      return Status::error(ErrorCode::OutOfMemory, "cannot allocate ", data.size(), " bytes for constant '", layer.name,
                           "'");
    if (!data.empty()) std::memcpy(storage.data(), data.data(), data.size());
    slots_[slot].data = storage.data();
    summary_.constant_bytes += data.size();
    constants_.push_back(std::move(storage));
  }
  return Status::ok();
}

KILN_INLINE std::uint8_t TensorTable::device_kind(const BackendDescription& backend, void* context) {
  auto known = std::ranges::find(device_kinds_, backend.memory, &DeviceMemoryKind::name);
  if (known == device_kinds_.end()) {
    device_kinds_.push_back(
        {backend.memory, &backend.hooks, context, std::max(backend.alignment, backend.hooks.arena_alignment(context))});
    known = device_kinds_.end() - 1;
  }
  return static_cast<std::uint8_t>(known - device_kinds_.begin() + 1);
}

KILN_INLINE Status TensorTable::plan(const Network& network, const MemoryPlanner& planner) {
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
    all.push_back(
        {scratch_[i].memory, {scratch_[i].bytes, scratch_positions_[i], scratch_positions_[i]}, &scratch_[i].offset});
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

KILN_INLINE Status TensorTable::allocate(WorkingMemory& memory, std::span<const Step> steps,
                                         const ErasedAllocator& allocator) const {
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
    // Inside an arena that was allocated, so within size_t.
    memory.scratch[s] = {static_cast<std::byte*>(*address), static_cast<std::size_t>(scratch.bytes)};
  }
  memory.allocated = true;
  return Status::ok();
}

}  // namespace kiln::detail
