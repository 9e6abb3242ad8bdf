// SPDX-License-Identifier: Apache-2.0
// The quantisation passes: a Dequantize moves past the Reshapes and Transposes it feeds,
// Dequantize -> layer -> Quantize becomes one int8 layer, a Dequantize -> Quantize pair left
// becomes nothing or a Requantize, and a Dequantize of a constant left over becomes a Float32
// constant.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/backends/workload_entry.hpp"
#include "kiln/core/requantization.hpp"
#include "kiln/graph/network.hpp"

namespace kiln::passes {

namespace detail {

/// The input of the Dequantize layer that produces `slot`, if one does.
inline std::optional<OutputSlot> dequantized_from(const Network& network, std::optional<OutputSlot> slot) {
  if (!slot || !network.layer(slot->layer).is<ops::Dequantize>()) return std::nullopt;
  return network.layer(slot->layer).inputs[0];
}

/// The info of `slot` with the type declared for it since the network was last inferred (a layer
/// this pass made int8 earlier in the same walk).
inline TensorInfo current_info(const Network& network, OutputSlot slot) {
  TensorInfo info = network.tensor_info(slot);
  const auto& declared = network.layer(slot.layer).output_types;
  if (slot.index < declared.size() && declared[slot.index]) {
    info.type = declared[slot.index]->type;
    info.quantization = declared[slot.index]->quantization;
  }
  return info;
}

/// The Constant layer behind `slot`, if it is one.
inline const ops::Constant::Params* constant_at(const Network& network, std::optional<OutputSlot> slot) {
  return slot ? network.layer(slot->layer).params_if<ops::Constant>() : nullptr;
}

/// When `can_run(op index, layer)` says a backend runs layer `id` (an Op) reading `integers`
/// (tensors `inputs`, constant data `constants`) and producing what the Quantize layer `quantize`
/// produces, makes the layer so: it reads them, declares that output, and the Quantize's readers
/// read it. Returns whether it did.
template <class Op, class CanRun>
bool rewire_as_int8(Network& network, LayerId id, LayerId quantize, std::span<const OutputSlot> integers,
                    std::span<const TensorInfo> inputs, std::span<const void* const> constants, CanRun& can_run) {
  const TensorInfo& y = network.tensor_info({quantize, 0});
  const ops::OutputType output{y.type, y.quantization};  // a copy: the network changes below
  const TensorInfo outputs[] = {{network.tensor_info({id, 0}).shape, output.type, output.quantization}};
  if (!can_run(ops::op_index_v<Op>, LayerInfo{network.layer(id).params_if<Op>(), inputs, outputs, constants}))
    return false;
  for (std::size_t i = 0; i < integers.size(); ++i) (void)network.connect(integers[i], id, i);
  (void)network.set_output_type({id, 0}, output.type, output.quantization);
  network.redirect({quantize, 0}, {id, 0});
  return true;
}

/// Makes layer `id` (an Op with weights) read the integers behind its Dequantize inputs and produce
/// what the Quantize layer `quantize` produced, when the pattern is the one int8 layers run
/// (activations QAsymmU8 or QAsymmS8 per tensor of one type in and out, constant QSymmS8 weights,
/// a constant Signed32 bias) and `can_run(op index, layer)` says a backend runs the result.
template <class Op, class CanRun>
bool fuse_into_int8(Network& network, LayerId id, LayerId quantize, CanRun& can_run) {
  const Layer& layer = network.layer(id);
  const auto x = dequantized_from(network, layer.inputs[0]);
  const auto w = dequantized_from(network, layer.inputs[1]);
  if (!x || !w) return false;
  const TensorInfo x_info = current_info(network, *x);
  const TensorInfo& y_info = network.tensor_info({quantize, 0});
  const auto* weights = constant_at(network, w);
  if ((x_info.type != DataType::QAsymmU8 && x_info.type != DataType::QAsymmS8) || x_info.type != y_info.type ||
      x_info.quantization.is_per_axis() || !weights || weights->info.type != DataType::QSymmS8)
    return false;
  std::vector<OutputSlot> integers{*x, *w};
  std::vector<TensorInfo> inputs{x_info, weights->info};
  std::vector<const void*> constants{nullptr, weights->data.data()};
  if (layer.inputs.size() > 2) {
    const auto bias = dequantized_from(network, layer.inputs[2]);
    const auto* b = constant_at(network, bias);
    if (!b || b->info.type != DataType::Signed32) return false;
    integers.push_back(*bias);
    inputs.push_back(network.tensor_info(*bias));
    constants.push_back(b->data.data());
  }
  return rewire_as_int8<Op>(network, id, quantize, integers, inputs, constants, can_run);
}

/// Makes layer `id` (an Op whose inputs are all activations: Pooling2d, ElementwiseBinary,
/// Activation, Softmax, Reduce, BatchMatMul) read the integers behind its Dequantize inputs and
/// produce what the Quantize layer `quantize` produced, when they are all QAsymmU8 or QAsymmS8 per
/// tensor of one type and `can_run(op index, layer)` says a backend runs the result.
template <class Op, class CanRun>
bool fuse_activations_into_int8(Network& network, LayerId id, LayerId quantize, CanRun& can_run) {
  const TensorInfo& y_info = network.tensor_info({quantize, 0});
  if (y_info.type != DataType::QAsymmU8 && y_info.type != DataType::QAsymmS8) return false;
  std::vector<OutputSlot> integers;
  std::vector<TensorInfo> inputs;
  for (const auto& input : network.layer(id).inputs) {
    const auto x = dequantized_from(network, input);
    if (!x) return false;
    const TensorInfo x_info = current_info(network, *x);
    if (x_info.type != y_info.type || x_info.quantization.is_per_axis()) return false;
    integers.push_back(*x);
    inputs.push_back(x_info);
  }
  const std::vector<const void*> constants(inputs.size(), nullptr);
  return rewire_as_int8<Op>(network, id, quantize, integers, inputs, constants, can_run);
}

/// Makes layer `id` (an Op that moves or selects elements: Pad, StridedSlice, Gather, a nearest
/// Resize; backends refuse a bilinear one on 8-bit tensors) read the
/// integers behind the Dequantize of its input 0 and produce what the Quantize layer `quantize`
/// produced, when both sides have one type and quantisation per tensor (as ONNX Runtime's quantiser
/// writes these ops): the bytes it moves are the integers the Quantize would make, and Pad's
/// constant becomes the integer it quantises to. Its other inputs (Gather's indices) stay as they
/// are. Only when `can_run(op index, layer)` says a backend runs the result.
template <class Op, class CanRun>
bool fuse_mover_into_int8(Network& network, LayerId id, LayerId quantize, CanRun& can_run) {
  const Layer& layer = network.layer(id);
  const auto x = dequantized_from(network, layer.inputs[0]);
  if (!x) return false;
  const TensorInfo x_info = current_info(network, *x);
  const TensorInfo& y_info = network.tensor_info({quantize, 0});
  if (!is_quantized(x_info.type) || x_info.type != y_info.type || x_info.quantization != y_info.quantization ||
      x_info.quantization.is_per_axis())
    return false;
  std::vector<OutputSlot> integers{*x};
  std::vector<TensorInfo> inputs{x_info};
  std::vector<const void*> constants{nullptr};
  for (std::size_t i = 1; i < layer.inputs.size(); ++i) {
    const OutputSlot other = *layer.inputs[i];
    const auto* constant = constant_at(network, other);
    integers.push_back(other);
    inputs.push_back(network.tensor_info(other));
    constants.push_back(constant ? constant->data.data() : nullptr);
  }
  return rewire_as_int8<Op>(network, id, quantize, integers, inputs, constants, can_run);
}

/// Makes Concat `id` read the integers behind its Dequantize inputs and produce what the Quantize
/// layer `quantize` produced, when they are all of its type, per tensor: an input quantised
/// otherwise is read through a Requantize to the output's quantisation (rounded once, ties up, as
/// fold_dequantize_quantize's), since Concat moves bytes. Only when `can_run` says backends run the
/// Concat and each Requantize.
template <class CanRun>
bool fuse_concat_into_int8(Network& network, LayerId id, LayerId quantize, CanRun& can_run) {
  const TensorInfo y = network.tensor_info({quantize, 0});  // a copy: the network changes below
  if ((y.type != DataType::QAsymmU8 && y.type != DataType::QAsymmS8) || y.quantization.is_per_axis()) return false;
  std::vector<OutputSlot> integers;
  std::vector<TensorInfo> inputs;
  const ops::Requantize::Params requantize{};
  const void* no_constant[] = {nullptr};
  for (const auto& input : network.layer(id).inputs) {
    const auto x = dequantized_from(network, input);
    if (!x) return false;
    const TensorInfo x_info = current_info(network, *x);
    if (x_info.type != y.type || x_info.quantization.is_per_axis()) return false;
    const TensorInfo as_output{x_info.shape, y.type, y.quantization};
    const TensorInfo requantize_in[] = {x_info}, requantize_out[] = {as_output};
    if (x_info.quantization != y.quantization &&
        !can_run(ops::op_index_v<ops::Requantize>, LayerInfo{&requantize, requantize_in, requantize_out, no_constant}))
      return false;
    integers.push_back(*x);
    inputs.push_back(as_output);
  }
  const std::vector<const void*> constants(inputs.size(), nullptr);
  const TensorInfo outputs[] = {{network.tensor_info({id, 0}).shape, y.type, y.quantization}};
  if (!can_run(ops::op_index_v<ops::Concat>,
               LayerInfo{network.layer(id).params_if<ops::Concat>(), inputs, outputs, constants}))
    return false;
  for (std::size_t i = 0; i < integers.size(); ++i) {
    if (current_info(network, integers[i]).quantization == y.quantization) continue;
    const std::string name = network.layer(id).name + "/requantize" + std::to_string(i);
    integers[i] = network.add<ops::Requantize>(requantize, {integers[i]}, name);
    (void)network.set_output_type(integers[i], y.type, y.quantization);
  }
  return rewire_as_int8<ops::Concat>(network, id, quantize, integers, inputs, constants, can_run);
}

}  // namespace detail

/// Moves each Dequantize of a computed per-tensor quantised tensor past the Reshape or Transpose
/// that is its only reader (repeatedly, past a chain of them), so that the data movers carry the
/// 8-bit tensor and the Dequantize meets the layer after them: the ONNX importer's NCHW -> NHWC
/// Reshape of a 1-channel input, say, stood between a QDQ model's first Dequantize and its
/// convolution. Moving bytes commutes with a per-tensor dequantisation, so results are unchanged.
/// Returns how many moves were made.
inline std::size_t move_dequantize_past_data_movers(Network& network) {
  std::size_t moved = 0;
  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  // The one executed layer reading `slot`, when exactly one slot of one layer reads it.
  auto only_reader = [&](OutputSlot slot) -> std::optional<LayerId> {
    if (network.readers(slot) != 1) return std::nullopt;
    for (LayerId id : order)
      for (const auto& input : network.layer(id).inputs)
        if (input == slot) return id;
    return std::nullopt;
  };
  for (LayerId id : order) {
    if (!network.layer(id).is<ops::Dequantize>()) continue;
    const OutputSlot integers = *network.layer(id).inputs[0];
    if (network.layer(integers.layer).is<ops::Constant>() ||
        detail::current_info(network, integers).quantization.is_per_axis())
      continue;
    for (auto mover = only_reader({id, 0}); mover; mover = only_reader({id, 0})) {
      const Layer& m = network.layer(*mover);
      if (!(m.is<ops::Reshape>() || m.is<ops::Transpose>()) || !m.output_types.empty()) break;
      network.redirect({*mover, 0}, {id, 0});                          // the mover's readers read the Dequantize
      (void)network.connect(*network.layer(id).inputs[0], *mover, 0);  // the mover reads the integers
      (void)network.connect({*mover, 0}, id, 0);                       // the Dequantize reads the mover
      ++moved;
    }
  }
  return moved;
}

/// Turns each Quantize whose input is the only output reader of a Float32 Convolution2d,
/// DepthwiseConvolution2d or FullyConnected whose inputs come from Dequantize layers (activations,
/// and constant QSymmS8 weights and Signed32 bias), or of a Pooling2d, ElementwiseBinary, Activation, Softmax,
/// Reduce, BatchMatMul or Concat whose inputs are Dequantizes, or of a Pad, StridedSlice, Gather or nearest Resize of a
/// Dequantize of the Quantize's own quantisation, into that layer computing in int8 (decision 0014): the Quantize drops
/// out, and so do the Dequantize layers no one else reads. This is how a QDQ model's DQ -> op -> Q becomes one
/// quantised layer. `can_run(op index, LayerInfo)` says whether a backend the program uses runs the int8 layer
/// (optimize asks the backends' workload tables); a layer none runs stays in Float32. Returns how many were fused.
template <class CanRun>
std::size_t fuse_quantized_layers(Network& network, CanRun&& can_run) {
  std::size_t fused = 0;
  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  for (LayerId id : order) {
    const Layer& layer = network.layer(id);
    if (!layer.is<ops::Quantize>()) continue;
    const OutputSlot source = *layer.inputs[0];
    if (network.readers(source) != 1 || network.tensor_info(source).type != DataType::Float32) continue;
    const LayerId producer = source.layer;
    const bool done = network.layer(producer).is<ops::Convolution2d>()
                          ? detail::fuse_into_int8<ops::Convolution2d>(network, producer, id, can_run)
                      : network.layer(producer).is<ops::DepthwiseConvolution2d>()
                          ? detail::fuse_into_int8<ops::DepthwiseConvolution2d>(network, producer, id, can_run)
                      : network.layer(producer).is<ops::FullyConnected>()
                          ? detail::fuse_into_int8<ops::FullyConnected>(network, producer, id, can_run)
                      : network.layer(producer).is<ops::Pooling2d>()
                          ? detail::fuse_activations_into_int8<ops::Pooling2d>(network, producer, id, can_run)
                      : network.layer(producer).is<ops::ElementwiseBinary>()
                          ? detail::fuse_activations_into_int8<ops::ElementwiseBinary>(network, producer, id, can_run)
                      : network.layer(producer).is<ops::Activation>()
                          ? detail::fuse_activations_into_int8<ops::Activation>(network, producer, id, can_run)
                      : network.layer(producer).is<ops::Softmax>()
                          ? detail::fuse_activations_into_int8<ops::Softmax>(network, producer, id, can_run)
                      : network.layer(producer).is<ops::Reduce>()
                          ? detail::fuse_activations_into_int8<ops::Reduce>(network, producer, id, can_run)
                      : network.layer(producer).is<ops::BatchMatMul>()
                          ? detail::fuse_activations_into_int8<ops::BatchMatMul>(network, producer, id, can_run)
                      : network.layer(producer).is<ops::Concat>()
                          ? detail::fuse_concat_into_int8(network, producer, id, can_run)
                      : network.layer(producer).is<ops::Pad>()
                          ? detail::fuse_mover_into_int8<ops::Pad>(network, producer, id, can_run)
                      : network.layer(producer).is<ops::StridedSlice>()
                          ? detail::fuse_mover_into_int8<ops::StridedSlice>(network, producer, id, can_run)
                      : network.layer(producer).is<ops::Gather>()
                          ? detail::fuse_mover_into_int8<ops::Gather>(network, producer, id, can_run)
                      : network.layer(producer).is<ops::Resize>()
                          ? detail::fuse_mover_into_int8<ops::Resize>(network, producer, id, can_run)
                          : false;
    fused += done ? 1 : 0;
  }
  return fused;
}

/// Removes each Quantize of a Dequantize of a computed per-tensor 8-bit tensor: its readers read
/// the 8-bit tensor itself when the Quantize produces the same type and quantisation, else a
/// Requantize of it (when `can_run(op index, layer)` says a backend runs one). Int8 layers fused
/// on both sides of a Reshape or Flatten leave such pairs. Results are those of the pair, except
/// that a Requantize rounds once, ties up (decision 0014), where the pair rounds a float product
/// half to even. Returns how many were removed.
template <class CanRun>
std::size_t fold_dequantize_quantize(Network& network, CanRun&& can_run) {
  std::size_t folded = 0;
  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  for (LayerId id : order) {
    if (!network.layer(id).is<ops::Quantize>()) continue;
    const auto integers = detail::dequantized_from(network, network.layer(id).inputs[0]);
    if (!integers || network.layer(integers->layer).is<ops::Constant>()) continue;
    const TensorInfo x = detail::current_info(network, *integers);
    const TensorInfo y = network.tensor_info({id, 0});
    if (x.quantization.is_per_axis() || y.quantization.is_per_axis()) continue;
    if (x.type == y.type && x.quantization == y.quantization) {
      network.redirect({id, 0}, *integers);
      ++folded;
      continue;
    }
    const TensorInfo inputs[] = {x};
    const void* constants[] = {nullptr};
    const TensorInfo outputs[] = {y};
    const ops::Requantize::Params params{};
    if (!can_run(ops::op_index_v<ops::Requantize>, LayerInfo{&params, inputs, outputs, constants})) continue;
    const std::string name = network.layer(id).name + "/requantize";
    const OutputSlot requantized = network.add<ops::Requantize>(params, {*integers}, name);
    (void)network.set_output_type(requantized, y.type, y.quantization);
    network.redirect({id, 0}, requantized);
    ++folded;
  }
  return folded;
}

/// Replaces each Dequantize of a Constant by a Float32 Constant holding the dequantized values
/// (computed as the Dequantize layer would), so that Float32 layers reading quantised weights
/// prepare them at load like any weights. Returns how many were folded.
inline std::size_t fold_dequantized_constants(Network& network) {
  std::size_t folded = 0;
  const std::vector<LayerId> order(network.execution_order().begin(), network.execution_order().end());
  for (LayerId id : order) {
    const auto integers = detail::dequantized_from(network, OutputSlot{id, 0});
    const auto* constant = detail::constant_at(network, integers);
    if (!constant || constant->data.empty()) continue;
    const TensorInfo info = constant->info;  // a copy: adding the folded constant moves the layers
    const ConstTensor integers_tensor{info, constant->data.data()};
    const ElementScales scales(info);
    std::vector<float> values(info.num_elements());
    for (std::uint64_t i = 0; i < values.size(); ++i)
      values[i] = dequantize(integer_at(integers_tensor, i), scales(i), info.quantization.offset);
    const OutputSlot real = network.add_constant<float>(TensorInfo{info.shape, DataType::Float32, {}}, values,
                                                        network.layer(id).name + "/folded");
    network.redirect({id, 0}, real);
    ++folded;
  }
  return folded;
}

}  // namespace kiln::passes
