// SPDX-License-Identifier: Apache-2.0
// OptimizedGraph's printout (see optimized_network.hpp).
#pragma once

#include "kiln/optimizer/optimized_network.hpp"

namespace kiln::detail {

KILN_INLINE std::string OptimizedGraph::to_string(std::span<const BackendDescription> backends) const {
  std::string text;
  for (LayerId id : network.execution_order()) {
    const Layer& layer = network.layer(id);
    text += detail::str_cat(layer.name, " (", layer.op_name());
    if (const auto fused = passes::fused_activation(layer))
      text += detail::str_cat(" + ", ops::to_string(fused->function));
    if (const auto* copy = layer.params_if<ops::MemCopy>())
      text += detail::str_cat(' ', ops::to_string(copy->direction));
    text += ')';
    for (const TensorInfo& info : layer.outputs) text += detail::str_cat(' ', info.to_string());
    const LayerAssignment& a = assignments[id];
    if (a.backend != LayerAssignment::no_backend) {
      text += detail::str_cat(" -> ", backends[a.backend].id, " (", kiln::to_string(a.workload->data_type));
      if (a.level != 0) text += detail::str_cat(", ", a.workload->backend, "'s");
      text += ')';
      if (!a.passed_over.empty()) text += detail::str_cat("; ", a.passed_over);
    }
    text += '\n';
  }
  return text;
}

}  // namespace kiln::detail
