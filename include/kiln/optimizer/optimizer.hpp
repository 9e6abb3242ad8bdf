// SPDX-License-Identifier: Apache-2.0
// optimize<Config...>: validates a Network, rewrites it, and gives every layer a backend and a workload.
#pragma once

#include <string_view>
#include <vector>

#include "kiln/optimizer/assign_backends.hpp"
#include "kiln/optimizer/passes/fold_batch_norm.hpp"
#include "kiln/optimizer/passes/fold_bias_adds.hpp"
#include "kiln/optimizer/passes/fold_flatten_transposes.hpp"
#include "kiln/optimizer/passes/fuse_activations.hpp"
#include "kiln/optimizer/passes/fuse_attention.hpp"
#include "kiln/optimizer/passes/fuse_gated_activations.hpp"
#include "kiln/optimizer/passes/fuse_layer_normalizations.hpp"
#include "kiln/optimizer/passes/fuse_quantized_layers.hpp"
#include "kiln/optimizer/passes/reduce_to_float16.hpp"

namespace kiln {

/// How optimize() chooses backends.
struct OptimizerOptions {
  /// Backend ids in order of preference; empty means the order of the Runtime's backend pack.
  /// Every id must name a backend of the pack; backends not listed are not used.
  std::vector<std::string_view> backend_preferences;
  /// Fold a BatchNormalization that follows a convolution into its weights and bias.
  bool fold_batch_norms = true;
  /// Fold the Add of a constant row after a FullyConnected into its bias (Float32; PyTorch's MatMul
  /// + Add for a Linear on 3-D inputs).
  bool fold_bias_adds = true;
  /// Replace x * HardSigmoid(x) by HardSwish(x), x * Sigmoid(x) by SiLU(x) and the Erf form of
  /// GELU, x * (1 + erf(x / sqrt(2))) * 0.5, by GELU(x) (Float32).
  bool fuse_gated_activations = true;
  /// Replace the ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div (then Mul, Add) chain that
  /// exporters write for a layer norm before ONNX opset 17 by one LayerNormalization (Float32;
  /// passes/fuse_layer_normalizations.hpp).
  bool fuse_layer_normalizations = true;
  /// Replace MatMul -> scale -> mask Add -> Softmax -> MatMul by one Attention layer (Float32) where
  /// the backend the layers would run on runs Attention itself (passes/fuse_attention.hpp).
  bool fuse_attention = true;
  /// Fuse an Activation into the convolution, dense or elementwise layer before it.
  bool fuse_activations = true;
  /// Turn Dequantize -> convolution, dense, pooling, Add/Sub/Mul or activation layer -> Quantize into the layer in int8
  /// (moving a Dequantize past the Reshapes and Transposes it feeds first), drop the Dequantize ->
  /// Quantize pairs left (or make them a Requantize), and fold a Dequantize of a constant left
  /// over into a Float32 constant (passes/fuse_quantized_layers.hpp).
  bool fuse_quantized_layers = true;
  /// Drop the Transpose before a flattening Reshape into a FullyConnected with constant weights by
  /// permuting the weights' columns instead: an ONNX Flatten of a channels-last feature map
  /// (passes/fold_flatten_transposes.hpp).
  bool fold_flatten_transposes = true;
  /// Compute in Float16 (Arm NN's ReduceFp32ToFp16): every Float32 layer a backend runs in Float16
  /// becomes a Float16 layer, its constants rounded to Float16, with Casts where Float32 tensors
  /// meet it; the network's inputs and outputs keep their types (passes/reduce_to_float16.hpp).
  /// Off by default: Float16 has 11 significant bits, and whether a model keeps its accuracy is
  /// the user's to check (docs/float16.md).
  bool reduce_float32_to_float16 = false;
};

namespace detail {

/// optimize() with the Runtime's configuration as data: a plain loop over the layers.
Expected<OptimizedGraph> optimize(Network network, const OptimizerOptions& options, const PackDescription& pack);

}  // namespace detail

/// Validates `network` (see Network::infer_shapes), folds and fuses (OptimizerOptions), and
/// assigns each compute layer to the first backend, in preference order, that is available and
/// has a workload for the layer's op and data type that accepts it — its own, or one it inherits
/// from its fallback. Fails naming the layer, with every backend's reason, when none can run it,
/// or when the layer's op is not in the OpSet. Then inserts a MemCopy wherever a tensor crosses
/// between memory kinds (host and a device backend's).
/// \tparam Config the Runtime's configuration: an optional OpSet, then its backends, most preferred first.
template <class... Config>
Expected<optimized_network_t<Config...>> optimize(Network network, const OptimizerOptions& options = {}) {
  static_assert(detail::check_config<Config...>());
  auto graph = detail::optimize(std::move(network), options, detail::describe<Config...>());
  if (!graph) return graph.status();
  return optimized_network_t<Config...>(std::move(*graph));
}

}  // namespace kiln

#if !KILN_COMPILED_LIBRARY || KILN_BUILDING_LIBRARY
#include "kiln/optimizer/optimizer_inl.hpp"
#endif
