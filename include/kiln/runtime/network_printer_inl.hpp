// SPDX-License-Identifier: Apache-2.0
// The network printouts' definitions (see network_printer.hpp).
#pragma once

#include "kiln/runtime/network_printer.hpp"

namespace kiln::detail {

KILN_INLINE std::string tensor_label(const NetworkLayout& layout, std::size_t tensor) {
  const TensorSlot& slot = layout.tensors[tensor];
  if (slot.is_constant) return str_cat(slot.info.to_string(), " constant");
  if (slot.memory != 0)
    return str_cat(slot.info.to_string(), " @", layout.tensors.device_kinds()[slot.memory - 1].name, ':', slot.offset);
  return str_cat(slot.info.to_string(), " @", slot.offset);
}

KILN_INLINE std::string network_text(const NetworkLayout& layout) {
  const MemorySummary& memory = layout.tensors.summary();
  std::string text = str_cat("memory: ", memory.strategy, ", arena ", memory.arena_bytes, " bytes (lower bound ",
                             memory.lower_bound_bytes, "), constants ", memory.constant_bytes, " bytes");
  if (memory.constant_bytes_in_workloads != 0)
    text += str_cat(" (", memory.constant_bytes_in_workloads, " more packed into workloads)");
  for (const DeviceMemoryKind& kind : layout.tensors.device_kinds())
    text += str_cat(", ", kind.name, " arena ", kind.arena_bytes, " bytes");
  text += '\n';
  for (const Step& step : layout.steps) {
    text += str_cat(layout.layer_names[step.layer], " (", layout.layer_ops[step.layer], ")");
    if (step.kind == Step::Kind::Compute)
      text += str_cat(" on ", layout.backend_of(step));
    else
      text += str_cat(" binding ", step.binding);
    for (std::size_t t : step.inputs) text += str_cat("\n  in  ", tensor_label(layout, t));
    for (std::size_t t : step.outputs) text += str_cat("\n  out ", tensor_label(layout, t));
    if (step.scratch != no_scratch) {
      const ScratchSlot& scratch = layout.tensors.scratch(step.scratch);
      text += str_cat("\n  scratch ", scratch.bytes, " bytes @", scratch.offset);
    }
    text += '\n';
  }
  return text;
}

KILN_INLINE std::string network_dot(const NetworkLayout& layout) {
  const auto& steps = layout.steps;
  std::string dot = "digraph kiln {\n  node [shape=box, fontname=\"monospace\"];\n";
  std::vector<std::size_t> producer(layout.tensors.size(), steps.size());
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    const std::string_view backend = layout.backend_of(step);
    dot += str_cat("  step", s, " [label=\"", layout.layer_names[step.layer], "\\n", layout.layer_ops[step.layer],
                   backend.empty() ? std::string() : str_cat("\\n", backend), "\"];\n");
    for (std::size_t t : step.outputs) producer[t] = s;
  }
  for (std::size_t s = 0; s < steps.size(); ++s)
    for (std::size_t t : steps[s].inputs) {
      if (producer[t] == steps.size()) {  // a constant: drawn as its own node
        dot += str_cat("  tensor", t, " [shape=note, label=\"", tensor_label(layout, t), "\"];\n  tensor", t,
                       " -> step", s, ";\n");
        continue;
      }
      dot += str_cat("  step", producer[t], " -> step", s, " [label=\"", tensor_label(layout, t), "\"];\n");
    }
  return dot + "}\n";
}

}  // namespace kiln::detail
