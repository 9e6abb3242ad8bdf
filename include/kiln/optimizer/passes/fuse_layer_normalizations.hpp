// SPDX-License-Identifier: Apache-2.0
// The layer-normalisation pass: the chain of reductions and elementwise layers that exporters write
// for a layer norm before ONNX opset 17 becomes one LayerNormalization layer.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kiln/graph/network.hpp"
#include "kiln/optimizer/passes/graph_patterns.hpp"

namespace kiln::passes {

namespace detail {

/// The first dimension of the rows that a keep-dims ReduceMean at `slot` averages, if it averages
/// the trailing dimensions of its input (and nothing else); its input is `x`.
inline std::optional<std::size_t> row_mean_of(const Network& network, OutputSlot slot, OutputSlot x) {
  const Layer& layer = network.layer(slot.layer);
  const auto* p = layer.params_if<ops::Reduce>();
  if (!p || p->operation != ops::ReduceOperation::Mean || !p->keep_dims || *layer.inputs[0] != x ||
      layer.outputs[0].type != DataType::Float32)
    return std::nullopt;
  const std::size_t rank = network.layer(x.layer).outputs[x.index].rank();
  const auto mask = ops::Reduce::reduced_axes(*p, rank);
  if (!mask) return std::nullopt;
  std::size_t first = rank;
  while (first > 0 && mask->reduced[first - 1]) --first;
  for (std::size_t d = 0; d < first; ++d)
    if (mask->reduced[d]) return std::nullopt;
  return first < rank ? std::optional<std::size_t>(first) : std::nullopt;
}

}  // namespace detail

/// Replaces each Float32 chain
///   mean = ReduceMean(x) over x's trailing dimensions, keep dims; d = x - mean;
///   variance = ReduceMean(d ^ 2 or d * d) over the same dimensions; y = d / Sqrt(variance + epsilon)
/// and the Mul by a constant scale and Add of a constant bias that may follow it (each of one value
/// per row element) with one LayerNormalization (a scale of ones when there is none), which reads
/// x once instead of five times and keeps no intermediate tensors. PyTorch writes nn.LayerNorm this
/// way for ONNX opsets before 17. Every intermediate must be read by the chain alone. Returns how
/// many chains it replaced. Needs inferred shapes; leaves them to be inferred again.
inline std::size_t fuse_layer_normalizations(Network& network) {
  using ops::BinaryOperation;
  std::size_t fused = 0;
  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  for (LayerId div_id : order) {
    const Layer& div = network.layer(div_id);
    if (!detail::is_binary(div, BinaryOperation::Div)) continue;
    const OutputSlot d = *div.inputs[0], root = *div.inputs[1];
    // d = x - mean, read by the square (once, or twice as d * d) and by the Div.
    const Layer& sub = network.layer(d.layer);
    if (!detail::is_binary(sub, BinaryOperation::Sub)) continue;
    const OutputSlot x = *sub.inputs[0], mean = *sub.inputs[1];
    const auto axis = detail::row_mean_of(network, mean, x);
    if (!axis || network.readers(mean) != 1) continue;
    // root = Sqrt(variance + epsilon)
    const Layer& sqrt = network.layer(root.layer);
    const auto* sqrt_params = sqrt.params_if<ops::ElementwiseUnary>();
    if (!sqrt_params || sqrt_params->operation != ops::UnaryOperation::Sqrt || network.readers(root) != 1) continue;
    const OutputSlot shifted = *sqrt.inputs[0];
    const Layer& add_epsilon = network.layer(shifted.layer);
    if (!detail::is_binary(add_epsilon, BinaryOperation::Add) || network.readers(shifted) != 1) continue;
    std::optional<float> epsilon;
    OutputSlot variance{};
    for (std::size_t i = 0; i < 2 && !epsilon; ++i)
      if ((epsilon = detail::scalar_constant(network, add_epsilon.inputs[i]))) variance = *add_epsilon.inputs[1 - i];
    if (!epsilon || !(*epsilon >= 0.0f) || network.readers(variance) != 1) continue;
    // variance = ReduceMean(d ^ 2 or d * d) over the same rows
    const auto& variance_inputs = network.layer(variance.layer).inputs;
    if (variance_inputs.empty() || !variance_inputs[0]) continue;
    const OutputSlot squared = *variance_inputs[0];
    if (detail::row_mean_of(network, variance, squared) != axis || network.readers(squared) != 1) continue;
    const Layer& square = network.layer(squared.layer);
    const bool squares_d = (detail::is_binary(square, BinaryOperation::Mul) && *square.inputs[0] == d &&
                            *square.inputs[1] == d && network.readers(d) == 3) ||
                           (detail::is_binary(square, BinaryOperation::Power) && *square.inputs[0] == d &&
                            detail::scalar_constant(network, square.inputs[1]) == 2.0f && network.readers(d) == 2);
    if (!squares_d) continue;

    // The scale and bias after it, when they are constants of one value per row element, shaped as
    // the row's dimensions with leading dimensions of 1 (LayerNormalization's rule).
    const TensorShape& xs = network.layer(x.layer).outputs[x.index].shape;
    const std::uint64_t row = xs.num_elements(*axis, xs.rank());
    auto per_row_element = [&](const std::optional<OutputSlot>& slot) -> std::optional<OutputSlot> {
      if (!slot || !detail::constant_floats(network, slot)) return std::nullopt;
      const TensorShape& s = network.layer(slot->layer).outputs[slot->index].shape;
      if (s.num_elements() != row || s.rank() > xs.rank()) return std::nullopt;
      for (std::size_t i = 0; i < s.rank(); ++i) {
        const std::size_t xd = xs.rank() - s.rank() + i;
        if (s[i] != (xd >= *axis ? xs[xd] : 1)) return std::nullopt;
      }
      return slot;
    };
    OutputSlot result{div_id, 0};
    std::optional<OutputSlot> scale, bias;
    if (const auto mul = detail::binary_reader(network, result, BinaryOperation::Mul))
      if ((scale = per_row_element(detail::other_operand(network.layer(*mul), result)))) result = {*mul, 0};
    if (const auto add = detail::binary_reader(network, result, BinaryOperation::Add))
      if ((bias = per_row_element(detail::other_operand(network.layer(*add), result)))) result = {*add, 0};
    const std::string name = network.layer(result.layer).name;  // a copy: adding a layer moves them
    if (!scale) {
      const std::vector<float> ones(row, 1.0f);
      scale = network.add_constant<float>(TensorInfo{TensorShape(xs.dims().subspan(*axis)), DataType::Float32, {}},
                                          ones, name + "/scale");
    }
    const ops::LayerNormalization::Params params{static_cast<std::int64_t>(*axis), *epsilon, false};
    network.redirect(result, bias ? network.add<ops::LayerNormalization>(params, {x, *scale, *bias}, name)
                                  : network.add<ops::LayerNormalization>(params, {x, *scale}, name));
    ++fused;
  }
  return fused;
}

}  // namespace kiln::passes
