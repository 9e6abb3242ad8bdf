// SPDX-License-Identifier: Apache-2.0
// The attention pass: MatMul -> scale -> mask Add -> Softmax -> MatMul becomes one Attention layer.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/backends/workload_entry.hpp"
#include "kiln/graph/network.hpp"
#include "kiln/optimizer/passes/graph_patterns.hpp"

namespace kiln::passes {

namespace detail {

/// Whether `slot` is a Float32 BatchMatMul output whose leading dimensions its two operands share
/// (no broadcasting), its left operand not transposed.
inline const ops::BatchMatMul::Params* plain_batch_mat_mul(const Network& network, OutputSlot slot) {
  const Layer& layer = network.layer(slot.layer);
  const auto* p = layer.params_if<ops::BatchMatMul>();
  if (!p || p->transpose_a || layer.outputs[0].type != DataType::Float32) return nullptr;
  const TensorShape &a = network.tensor_info(*layer.inputs[0]).shape, &b = network.tensor_info(*layer.inputs[1]).shape;
  if (a.rank() != b.rank()) return nullptr;
  for (std::size_t d = 0; d + 2 < a.rank(); ++d)
    if (a[d] != b[d]) return nullptr;
  return p;
}

}  // namespace detail

/// Replaces each Float32 chain
///   scores = MatMul(query, key) [* s or / s, s a constant scalar] [+ mask]; weights = Softmax(scores)
///   over the last axis; y = MatMul(weights, value)
/// with one Attention layer (ops/attention.hpp), which a backend can run without the score matrix:
/// the self-attention of a transformer as PyTorch exports it. Every intermediate must be read by
/// the chain alone; query, key and value share their leading dimensions. `can_run(op index,
/// LayerInfo)` says whether the backend the layers would run on runs the Attention layer itself
/// (a backend that would leave it to RefBackend keeps its three layers). Returns how many chains
/// it replaced. Needs inferred shapes; leaves them to be inferred again.
template <class CanRun>
std::size_t fuse_attention(Network& network, CanRun&& can_run) {
  using ops::BinaryOperation;
  std::size_t fused = 0;
  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  for (LayerId softmax_id : order) {
    const Layer& softmax = network.layer(softmax_id);
    const auto* sp = softmax.params_if<ops::Softmax>();
    if (!sp || sp->log || sp->beta != 1.0f || softmax.outputs[0].type != DataType::Float32) continue;
    const std::size_t rank = softmax.outputs[0].rank();
    if (rank < 2 || (sp->axis != -1 && sp->axis != static_cast<std::int64_t>(rank) - 1)) continue;
    // weights -> MatMul(weights, value)
    const OutputSlot weights{softmax_id, 0};
    const auto pv = detail::only_reader(network, weights);
    if (!pv) continue;
    const Layer& weighted = network.layer(*pv);
    const auto* pvp = detail::plain_batch_mat_mul(network, {*pv, 0});
    if (!pvp || pvp->transpose_b || *weighted.inputs[0] != weights) continue;
    const OutputSlot value = *weighted.inputs[1];
    // Back from the scores: an Add of the mask, a scale, then MatMul(query, key).
    OutputSlot scores = *softmax.inputs[0];
    std::optional<OutputSlot> mask;
    float scale = 1.0f;
    bool chain = true;
    while (chain && !network.layer(scores.layer).is<ops::BatchMatMul>()) {
      const Layer& layer = network.layer(scores.layer);
      if (network.readers(scores) != 1 || layer.inputs.size() != 2) {
        chain = false;
      } else if (detail::is_binary(layer, BinaryOperation::Add) && !mask) {
        // The mask is the operand that is not the chain's: the one no MatMul or scale made.
        const OutputSlot a = *layer.inputs[0], b = *layer.inputs[1];
        const bool a_is_chain = network.layer(a.layer).is<ops::BatchMatMul>() ||
                                detail::is_binary(network.layer(a.layer), BinaryOperation::Mul) ||
                                detail::is_binary(network.layer(a.layer), BinaryOperation::Div);
        mask = a_is_chain ? b : a;
        scores = a_is_chain ? a : b;
      } else if (detail::is_binary(layer, BinaryOperation::Mul) || detail::is_binary(layer, BinaryOperation::Div)) {
        const bool div = detail::is_binary(layer, BinaryOperation::Div);
        std::optional<float> s = detail::scalar_constant(network, layer.inputs[1]);
        OutputSlot rest = *layer.inputs[0];
        if (!s && !div && (s = detail::scalar_constant(network, layer.inputs[0]))) rest = *layer.inputs[1];
        if (!s || (div && *s == 0.0f)) {
          chain = false;
        } else {
          scale *= div ? 1.0f / *s : *s;
          scores = rest;
        }
      } else {
        chain = false;
      }
    }
    if (!chain || network.readers(scores) != 1) continue;
    const auto* qkp = detail::plain_batch_mat_mul(network, scores);
    if (!qkp) continue;
    const Layer& qk = network.layer(scores.layer);
    const OutputSlot query = *qk.inputs[0], key = *qk.inputs[1];
    if (mask && network.tensor_info(*mask).type != DataType::Float32) continue;
    const ops::Attention::Params params{scale, qkp->transpose_b};
    std::vector<TensorInfo> inputs{network.tensor_info(query), network.tensor_info(key), network.tensor_info(value)};
    if (mask) inputs.push_back(network.tensor_info(*mask));
    TensorInfo output;
    if (!ops::Attention::infer(params, inputs, std::span(&output, 1))) continue;
    const std::vector<const void*> no_constants(inputs.size(), nullptr);
    if (!can_run(ops::op_index_v<ops::Attention>, LayerInfo{&params, inputs, std::span(&output, 1), no_constants}))
      continue;
    const std::string name = weighted.name;  // a copy: adding a layer moves them
    network.redirect({*pv, 0}, mask ? network.add<ops::Attention>(params, {query, key, value, *mask}, name)
                                    : network.add<ops::Attention>(params, {query, key, value}, name));
    ++fused;
  }
  return fused;
}

}  // namespace kiln::passes
