// SPDX-License-Identifier: Apache-2.0
// The flattening pass: a Transpose whose only purpose is to order the values a FullyConnected reads
// moves nothing when the weights' columns take that order instead.
#pragma once

#include <cstring>
#include <vector>

#include "kiln/graph/network.hpp"

namespace kiln::passes {

namespace detail {

/// The column of the transposed order that column `column` of the untransposed one lands in: the
/// inner axes `first..rank` of `source` (row-major), permuted by `permutation`.
inline std::size_t transposed_column(std::size_t column, const TensorShape& source,
                                     std::span<const std::uint32_t> permutation, std::size_t first) {
  const std::size_t rank = source.rank();
  std::uint32_t coordinate[TensorShape::max_rank] = {};
  for (std::size_t a = rank; a-- > first;) {
    coordinate[a] = static_cast<std::uint32_t>(column % source[a]);
    column /= source[a];
  }
  std::size_t transposed = 0;
  for (std::size_t a = first; a < rank; ++a)
    transposed = transposed * source[permutation[a]] + coordinate[permutation[a]];
  return transposed;
}

/// Folds the Transpose -> Reshape before FullyConnected `dense` when it has that shape (see
/// fold_flatten_transposes); returns whether it did.
inline bool fold_flatten_transpose(Network& network, LayerId dense) {
  const Layer& fc = network.layer(dense);
  const OutputSlot flat = *fc.inputs[0];
  if (!network.layer(flat.layer).is<ops::Reshape>() || network.readers(flat) != 1) return false;
  const OutputSlot moved = *network.layer(flat.layer).inputs[0];
  const auto* transpose = network.layer(moved.layer).params_if<ops::Transpose>();
  if (!transpose || network.readers(moved) != 1) return false;
  const auto* weights = network.layer(fc.inputs[1]->layer).params_if<ops::Constant>();
  // Scales per column would have to move with their columns; FullyConnected's are per row.
  if (!weights || (weights->info.quantization.axis && *weights->info.quantization.axis != 0)) return false;

  const OutputSlot source = *network.layer(moved.layer).inputs[0];
  const TensorShape& from = network.tensor_info(source).shape;
  const TensorShape& to = network.tensor_info(moved).shape;
  const TensorShape& flat_shape = network.tensor_info(flat).shape;
  const auto permutation = ops::Transpose::resolved(*transpose, from.rank());
  // The Reshape keeps the leading axes and merges the rest, and the Transpose moves only the rest.
  const std::size_t first = flat_shape.rank() - 1;
  if (from.rank() <= first) return false;
  for (std::size_t a = 0; a < first; ++a)
    if (permutation[a] != a || to[a] != flat_shape[a]) return false;

  const TensorInfo& info = weights->info;
  const std::size_t rows = info.shape[0], columns = info.shape[1], element = size_of(info.type);
  std::vector<std::byte> permuted(weights->data.size());
  for (std::size_t c = 0; c < columns; ++c) {
    const std::size_t taken = transposed_column(c, from, permutation, first);
    for (std::size_t r = 0; r < rows; ++r)
      std::memcpy(&permuted[(r * columns + c) * element], &weights->data[(r * columns + taken) * element], element);
  }
  const std::string name = kiln::detail::str_cat(network.layer(dense).name, "/weights_in_input_order");
  const OutputSlot reordered = network.adopt_constant(info, std::move(permuted), name);
  (void)network.connect(reordered, dense, 1);
  (void)network.connect(source, flat.layer, 0);
  return true;
}

}  // namespace detail

/// Replaces Transpose -> Reshape -> FullyConnected, where the Reshape keeps the axes the Transpose
/// leaves in place and merges the others into the FullyConnected's inner dimension, by a Reshape of
/// the Transpose's input and weights (a Constant) whose columns follow that input's order: the
/// Flatten of a channels-last feature map in a model written for NCHW (NHWC -> NCHW -> [N, C*H*W]
/// -> Gemm) runs without moving the map. Each layer of the chain must be the only reader of the
/// one before. Returns how many were folded; needs inferred shapes and leaves them to infer again.
inline std::size_t fold_flatten_transposes(Network& network) {
  std::size_t folded = 0;
  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  for (LayerId id : order)
    if (network.layer(id).is<ops::FullyConnected>() && detail::fold_flatten_transpose(network, id)) ++folded;
  return folded;
}

}  // namespace kiln::passes
