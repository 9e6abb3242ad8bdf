// SPDX-License-Identifier: Apache-2.0
// The folding pass: a BatchNormalization after a convolution becomes part of its weights and bias.
#pragma once

#include <cmath>
#include <cstring>
#include <vector>

#include "kiln/graph/network.hpp"
#include "kiln/optimizer/passes/graph_patterns.hpp"
#include "kiln/optimizer/passes/merge_into_producer.hpp"

namespace kiln::passes {

namespace detail {

/// Scales output channel `channel_of(i)` of every weight by scale, and makes the matching bias.
template <class Op>
bool fold_into(Network& network, LayerId conv, LayerId norm, const ops::BatchNormalization::Params& bn) {
  const Layer& layer = network.layer(conv);
  const float* weights = constant_floats(network, layer.inputs[1]);
  const float* bias = layer.inputs.size() > 2 ? constant_floats(network, layer.inputs[2]) : nullptr;
  if (!weights || (layer.inputs.size() > 2 && !bias)) return false;
  const float* stats[4];
  for (std::size_t i = 0; i < 4; ++i)
    if (!(stats[i] = constant_floats(network, network.layer(norm).inputs[i + 1]))) return false;
  const auto [mean, variance, beta, gamma] = stats;

  const TensorInfo weight_info = network.tensor_info(*layer.inputs[1]);
  const std::size_t channels = network.tensor_info({conv, 0}).shape.dim_from_end(0);
  std::vector<float> scale(channels), new_bias(channels), new_weights(weight_info.num_elements());
  for (std::size_t c = 0; c < channels; ++c) {
    scale[c] = gamma[c] / std::sqrt(variance[c] + bn.epsilon);
    new_bias[c] = ((bias ? bias[c] : 0.0f) - mean[c]) * scale[c] + beta[c];
  }
  // Convolution2d weights are OHWI (channel outermost); depthwise weights [1, KH, KW, C] (innermost).
  const std::size_t per_channel = new_weights.size() / channels;
  for (std::size_t i = 0; i < new_weights.size(); ++i)
    new_weights[i] = weights[i] * scale[std::same_as<Op, ops::Convolution2d> ? i / per_channel : i % channels];

  const std::string name(network.layer(conv).name);
  const OutputSlot w = network.add_constant<float>(weight_info, new_weights, name + "/folded_weights");
  const OutputSlot b =
      network.add_constant<float>(TensorInfo{TensorShape{static_cast<std::uint32_t>(channels)}, DataType::Float32, {}},
                                  new_bias, name + "/folded_bias");
  (void)network.connect(w, conv, 1);
  const std::size_t bias_slot = network.layer(conv).inputs.size() > 2 ? 2 : network.add_input_slot(conv);
  (void)network.connect(b, conv, bias_slot);
  return true;
}

}  // namespace detail

/// Folds each BatchNormalization whose input is the only output reader of a Convolution2d or
/// DepthwiseConvolution2d with constant weights (and bias) and no fused activation: the weights of
/// output channel c are scaled by gamma_c / sqrt(variance_c + epsilon), the bias becomes
/// (bias_c - mean_c) * scale_c + beta_c, and the BatchNormalization layer drops out. Returns how
/// many were folded.
inline std::size_t fold_batch_norms(Network& network) {
  return merge_into_producers<ops::BatchNormalization>(
      network, [&](LayerId norm, const ops::BatchNormalization::Params& params, OutputSlot source) {
        const Layer& producer = network.layer(source.layer);
        if (const auto* conv = producer.params_if<ops::Convolution2d>(); conv && !conv->activation)
          return detail::fold_into<ops::Convolution2d>(network, source.layer, norm, params);
        if (const auto* dw = producer.params_if<ops::DepthwiseConvolution2d>(); dw && !dw->activation)
          return detail::fold_into<ops::DepthwiseConvolution2d>(network, source.layer, norm, params);
        return false;
      });
}

}  // namespace kiln::passes
