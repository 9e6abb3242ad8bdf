// SPDX-License-Identifier: Apache-2.0
// ZeroCopy's definitions (see zero_copy.hpp).
#pragma once

#include <algorithm>

#include "kiln/runtime/zero_copy.hpp"

namespace kiln::detail {

KILN_INLINE void ZeroCopy::find_views(const NetworkLayout& layout) {
  const auto& steps = layout.steps;
  views_.assign(steps.size(), {});
  auto readers_of = [&](std::size_t tensor) {
    Views views;
    for (std::size_t s = 0; s < steps.size(); ++s)
      for (std::size_t k = 0; k < steps[s].inputs.size(); ++k)
        if (steps[s].inputs[k] == tensor) views.emplace_back(s, k);
    return views;
  };
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    if (step.kind == Step::Kind::Input) {
      views_[s].zero_copy = readers_of(step.outputs[0]);
      // A copy of this input to a device that reads host memory in place can be skipped.
      for (const auto& [reader, position] : views_[s].zero_copy) {
        const Step& copy = steps[reader];
        if (copy.kind != Step::Kind::Compute || layout.layer_ops[copy.layer] != ops::MemCopy::name) continue;
        const std::uint8_t kind = layout.tensors[copy.outputs[0]].memory;
        if (kind == 0 || layout.tensors.device_kinds()[kind - 1].hooks->import_host == nullptr) continue;
        views_[reader].import_kind = kind;
        views_[reader].device_readers = readers_of(copy.outputs[0]);
      }
    }
    if (step.kind == Step::Kind::Output) {
      // Exportable: an intermediate tensor whose only reader is this output.
      const std::size_t tensor = step.inputs[0];
      std::size_t readers = 0;
      for (const Step& other : steps) readers += static_cast<std::size_t>(std::ranges::count(other.inputs, tensor));
      for (std::size_t p = 0; p < steps.size() && readers == 1; ++p)
        if (steps[p].kind == Step::Kind::Compute)
          for (std::size_t k = 0; k < steps[p].outputs.size(); ++k)
            if (steps[p].outputs[k] == tensor) views_[s].zero_copy.emplace_back(p, k);
    }
  }
}

KILN_INLINE void ZeroCopy::bind_outputs(const NetworkLayout& layout, WorkingMemory& memory,
                                        std::span<const OutputBinding> outputs) const {
  const std::size_t alignment = layout.tensors.alignment();
  for (std::size_t s = 0; s < layout.steps.size(); ++s) {
    const Step& step = layout.steps[s];
    if (step.kind != Step::Kind::Output || views_[s].zero_copy.empty()) continue;
    void* target = const_cast<void*>(memory.inputs[s][0].data);  // the arena, which is writable
    memory.exported[s] = false;
    for (const OutputBinding& b : outputs)
      if (b.id == step.binding && reinterpret_cast<std::uintptr_t>(b.tensor.data) % alignment == 0) {
        target = b.tensor.data;
        memory.exported[s] = true;
      }
    const auto [producer, position] = views_[s].zero_copy.front();
    memory.outputs[producer][position].data = target;
  }
}

KILN_INLINE Status ZeroCopy::bind_input(const NetworkLayout& layout, WorkingMemory& memory, std::size_t s,
                                        const void* user, bool import) const {
  // Readers see the user's buffer (import) or the arena copy; neither is ever written.
  const void* source = import ? user : memory.outputs[s][0].data;
  for (const auto& [reader, position] : views_[s].zero_copy) memory.inputs[reader][position].data = source;
  return import_to_devices(layout, memory, s, import ? user : nullptr);
}

KILN_INLINE Status ZeroCopy::import_to_devices(const NetworkLayout& layout, WorkingMemory& memory, std::size_t input,
                                               const void* host) const {
  for (const auto& [copy_step, position] : views_[input].zero_copy) {
    const StepViews& copy = views_[copy_step];
    if (copy.import_kind == 0) continue;
    const void* handle = memory.outputs[copy_step][0].data;
    memory.skipped[copy_step] = false;
    const std::uint64_t bytes = memory.outputs[copy_step][0].info.num_bytes();
    if (host != nullptr && bytes != 0) {
      const DeviceMemoryKind& kind = layout.tensors.device_kinds()[copy.import_kind - 1];
      auto imported = kind.hooks->import_host(kind.context, host, bytes);
      if (!imported) return imported.status();
      handle = imported->handle;
      memory.device_imports.push_back(std::move(*imported));
      memory.skipped[copy_step] = true;
    }
    for (const auto& [reader, slot] : copy.device_readers) memory.inputs[reader][slot].data = handle;
  }
  return Status::ok();
}

}  // namespace kiln::detail
