// SPDX-License-Identifier: Apache-2.0
// What the fusion and folding passes share: offer a layer to the producer of its input, and bypass it when taken.
#pragma once

#include <vector>

#include "kiln/graph/network.hpp"

namespace kiln::passes {

/// Offers each `Op` layer whose input is read by nothing else to `merge(layer, params, source)`,
/// which may fold the layer into the producer of `source` and return true; the layer's readers
/// then read `source` and the layer drops out of the network. Returns how many were merged.
/// Needs inferred shapes; leaves them to be inferred again.
template <class Op, class Merge>
std::size_t merge_into_producers(Network& network, Merge merge) {
  std::size_t merged = 0;
  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  for (LayerId id : order) {
    const auto* found = network.layer(id).params_if<Op>();
    if (!found) continue;
    const typename Op::Params params = *found;  // a copy: merge may add layers, which moves them
    const OutputSlot source = *network.layer(id).inputs[0];
    if (network.readers(source) != 1 || !merge(id, params, source)) continue;
    network.redirect({id, 0}, source);
    ++merged;
  }
  return merged;
}

}  // namespace kiln::passes
