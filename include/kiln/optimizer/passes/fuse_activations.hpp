// SPDX-License-Identifier: Apache-2.0
// The fusion pass: an Activation that is the only reader of a convolution, dense or elementwise layer joins it.
#pragma once

#include <optional>

#include "kiln/graph/network.hpp"
#include "kiln/optimizer/passes/merge_into_producer.hpp"

namespace kiln::passes {

/// The activation fused into a layer, if its op can carry one and it has one.
inline std::optional<ops::Activation::Params> fused_activation(const Layer& layer) {
  return visit_op(layer.descriptor, [](const auto& d) -> std::optional<ops::Activation::Params> {
    if constexpr (requires { d.value.activation; })
      return d.value.activation;
    else
      return std::nullopt;
  });
}

/// Whether an activation runs faster fused than as a layer of its own. NeonBackend's GEMM applies
/// a fused activation other than a clamp to each stored row of a tile: for SiLU's exp that cost
/// EfficientNet-B0 more than its own layer does (14.5 against 12.2 ms, 1 thread, min of 300 runs);
/// Mish, x times a function of exp(x) like SiLU, stays a layer of its own likewise.
inline bool worth_fusing(const ops::Activation::Params& activation) {
  return activation.function != ops::ActivationFunction::SiLU && activation.function != ops::ActivationFunction::Mish;
}

/// Moves each Activation into the layer that produces its input when that layer's op applies a
/// fused activation (Convolution2d, DepthwiseConvolution2d, FullyConnected, ElementwiseBinary),
/// has none yet, the activation is worth fusing, and it is the only reader of its output; the Activation layer then
/// drops out of the network. The output then never makes a round trip through memory between
/// the two. Returns how many were fused.
inline std::size_t fuse_activations(Network& network) {
  return merge_into_producers<ops::Activation>(
      network, [&](LayerId id, const ops::Activation::Params& activation, OutputSlot source) {
        // A quantised activation may requantize (its output scale its own): only an exact clamp fuses.
        if (network.layer(id).outputs[0] != network.tensor_info(source)) return false;
        return visit_op(network.layer(source.layer).descriptor, [&]<class P>(const P&) {
          if constexpr (requires(typename P::op::Params p) { p.activation; }) {
            auto* params = network.mutable_params_if<typename P::op>(source.layer);
            if (params->activation || !worth_fusing(activation)) return false;
            params->activation = activation;
            return true;
          } else {
            return false;
          }
        });
      });
}

}  // namespace kiln::passes
