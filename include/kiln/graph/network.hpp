// SPDX-License-Identifier: Apache-2.0
// Network: the builder API — layers, their connections, input/output bindings and shape inference.
#pragma once

#include <algorithm>
#include <bit>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "kiln/detail/heap.hpp"
#include "kiln/graph/layer.hpp"

namespace kiln {

/// A graph of layers under construction (Arm NN INetwork).
///
/// Build it with add<Op>() (which connects the inputs it is given) or with add_layer<Op>() and
/// connect() (to wire slots by hand). Building never fails on the spot: a bad id is remembered and
/// reported by infer_shapes(), which validates the whole graph and infers every tensor's info.
///
/// \code
/// kiln::Network net;
/// auto x = net.add_input(0, {{1, 28, 28, 1}}, "image");
/// auto w = net.add_constant<float>({{8, 3, 3, 1}}, weights, "w");
/// auto y = net.add<kiln::ops::Convolution2d>({.padding = {1, 1, 1, 1}}, {x, w}, "conv");
/// net.add_output(0, y, "features");
/// if (auto status = net.infer_shapes(); !status) std::puts(status.message().c_str());
/// \endcode
class Network {
 public:
  /// Adds a layer with `num_inputs` unconnected input slots; connect them with connect().
  /// Room for `layers` layers, so that adding them moves none of those added before. In a constant
  /// expression this matters: GCC 12's cost of moving a Layer (its std::variant over every op)
  /// grows steeply with the number of ops (three layers moved took over 8 GiB at 30 ops), so a
  /// network built at compile time reserves first.
  constexpr void reserve(std::size_t layers) { layers_.reserve(layers); }

  template <OpDescriptor Op>
  constexpr LayerId add_layer(typename Op::Params params, std::size_t num_inputs, std::string_view name = {}) {
    const auto id = static_cast<LayerId>(layers_.size());
    // Filled in place: GCC 12 cannot move a temporary holding a std::string in a constant expression.
    Layer& layer = layers_.emplace_back();
    if (name.empty())
      layer.name = detail::str_cat(Op::name, '_', id);
    else
      layer.name = name;
    layer.outputs.resize(ops::num_outputs<Op>(params));
    layer.inputs.resize(num_inputs);
    layer.descriptor = OpParams<Op>{std::move(params)};
    shapes_inferred_ = false;
    return id;
  }

  /// Connects output `from` to input slot `input_index` of layer `to`.
  constexpr Status connect(OutputSlot from, LayerId to, std::size_t input_index) {
    shapes_inferred_ = false;
    if (from.layer >= layers_.size())
      return remember(Status::error(ErrorCode::InvalidArgument, "cannot connect from layer id ", from.layer,
                                    ": the network has ", layers_.size(), " layers"));
    if (from.index >= layers_[from.layer].outputs.size())
      return remember(Status::error(ErrorCode::InvalidArgument, layers_[from.layer].describe(), " has ",
                                    layers_[from.layer].outputs.size(), " outputs; there is no output ", from.index));
    if (to >= layers_.size())
      return remember(Status::error(ErrorCode::InvalidArgument, "cannot connect to layer id ", to, ": the network has ",
                                    layers_.size(), " layers"));
    Layer& target = layers_[to];
    if (input_index >= target.inputs.size())
      return remember(Status::error(ErrorCode::InvalidArgument, target.describe(), " has ", target.inputs.size(),
                                    " input slots; there is no input ", input_index));
    target.inputs[input_index] = from;
    return Status::ok();
  }

  /// Adds a layer and connects `inputs` to its input slots in order; returns its first output.
  template <OpDescriptor Op>
  constexpr OutputSlot add(typename Op::Params params, std::initializer_list<OutputSlot> inputs,
                           std::string_view name = {}) {
    const LayerId id = add_layer<Op>(std::move(params), inputs.size(), name);
    std::size_t slot = 0;
    for (const OutputSlot& input : inputs) (void)connect(input, id, slot++);
    return {id, 0};
  }

  /// Declares the data type and quantisation of a layer's output: what a Quantize or Requantize
  /// layer converts to, or the output quantisation of a quantised layer (which otherwise keeps
  /// its input's). Shape inference checks the declaration against the op.
  constexpr Status set_output_type(OutputSlot slot, DataType type, QuantizationInfo quantization = {}) {
    shapes_inferred_ = false;
    if (slot.layer >= layers_.size() || slot.index >= layers_[slot.layer].outputs.size())
      return remember(Status::error(ErrorCode::InvalidArgument, "cannot declare the type of output ", slot.index,
                                    " of layer id ", slot.layer, ": there is no such output"));
    auto& types = layers_[slot.layer].output_types;
    types.resize(layers_[slot.layer].outputs.size());
    types[slot.index] = ops::OutputType{type, std::move(quantization)};
    return Status::ok();
  }

  /// Output `index` of a layer with several outputs (Split).
  constexpr OutputSlot output(LayerId layer, std::uint32_t index) const { return {layer, index}; }

  constexpr OutputSlot add_input(BindingId binding, TensorInfo info, std::string_view name = {}) {
    return {add_layer<ops::Input>({binding, std::move(info)}, 0, name), 0};
  }
  constexpr LayerId add_output(BindingId binding, OutputSlot from, std::string_view name = {}) {
    const LayerId id = add_layer<ops::Output>({binding}, 1, name);
    (void)connect(from, id, 0);
    return id;
  }
  /// Adds a constant; its data is copied into the network.
  template <class T>
  OutputSlot add_constant(TensorInfo info, std::span<const T> data, std::string_view name = {}) {
    std::vector<std::byte> bytes(data.size_bytes());
    if (!bytes.empty()) std::memcpy(bytes.data(), data.data(), bytes.size());
    return adopt_constant(std::move(info), std::move(bytes), name);
  }
  template <class T>
  OutputSlot add_constant(TensorInfo info, const std::vector<T>& data, std::string_view name = {}) {
    return add_constant(std::move(info), std::span<const T>(data), name);
  }
  /// Adds a constant that takes `bytes` (its elements in row-major order) as its data, uncopied.
  OutputSlot adopt_constant(TensorInfo info, std::vector<std::byte> bytes, std::string_view name = {}) {
    return {add_layer<ops::Constant>({std::move(info), std::move(bytes)}, 0, name), 0};
  }

  /// The parameters of layer `id` when it is an Op layer, for optimizer passes that rewrite it.
  template <OpDescriptor Op>
  constexpr typename Op::Params* mutable_params_if(LayerId id) {
    shapes_inferred_ = false;
    auto* d = std::get_if<OpParams<Op>>(&layers_[id].descriptor);
    return d ? &d->value : nullptr;
  }
  /// Frees the data of Constant layer `id`, keeping its tensor info: for a loader that was given
  /// the network and has made everything that reads the constant.
  void release_constant_data(LayerId id) {
    if (auto* constant = std::get_if<OpParams<ops::Constant>>(&layers_[id].descriptor)) {
      const std::size_t freed = constant->value.data.size();
      std::vector<std::byte>().swap(constant->value.data);
      detail::return_freed_memory(freed);
    }
  }
  /// Makes every input slot that reads `from` read `to` instead: a pass bypasses a layer this way,
  /// which then drops out of the execution order.
  constexpr void redirect(OutputSlot from, OutputSlot to) {
    shapes_inferred_ = false;
    for (Layer& layer : layers_)
      for (auto& input : layer.inputs)
        if (input == from) input = to;
  }
  /// Adds an unconnected input slot to a layer (a pass giving a convolution a bias); returns its index.
  constexpr std::size_t add_input_slot(LayerId id) {
    shapes_inferred_ = false;
    layers_[id].inputs.emplace_back();
    return layers_[id].inputs.size() - 1;
  }
  /// How many input slots of executed layers read `slot` (valid after infer_shapes()).
  constexpr std::size_t readers(OutputSlot slot) const {
    std::size_t count = 0;
    for (LayerId id : order_)
      for (const auto& input : layers_[id].inputs) count += input == slot ? 1 : 0;
    return count;
  }

  constexpr std::size_t num_layers() const noexcept { return layers_.size(); }
  constexpr const Layer& layer(LayerId id) const { return layers_[id]; }
  constexpr std::span<const Layer> layers() const noexcept { return layers_; }

  /// Validates the graph and infers the info of every tensor. Reports, naming the layer: building
  /// errors, wrong input counts, unconnected inputs, cycles, duplicate bindings, shape and type
  /// mismatches and bad descriptor values.
  constexpr Status infer_shapes();

  /// Whose rules the int8 layers compute by: kiln's (the default; ONNX models) or TensorFlow Lite's
  /// (the TensorFlow Lite importer sets it). Every int8 workload reads it at load.
  constexpr QuantizedArithmetic arithmetic() const noexcept { return arithmetic_; }
  constexpr void set_arithmetic(QuantizedArithmetic arithmetic) noexcept { arithmetic_ = arithmetic; }
  /// True once infer_shapes() succeeded and nothing changed since.
  constexpr bool shapes_inferred() const noexcept { return shapes_inferred_; }
  /// The inferred info of a tensor (valid after infer_shapes()).
  constexpr const TensorInfo& tensor_info(OutputSlot slot) const { return layers_[slot.layer].outputs[slot.index]; }
  /// Layers in an order where every layer follows its inputs; only layers that reach an output.
  constexpr std::span<const LayerId> execution_order() const noexcept { return order_; }

 private:
  constexpr Status remember(const Status& status) {
    if (!status && build_error_.is_ok()) build_error_ = status;
    return status;
  }
  constexpr Status check_connections() const;
  constexpr Status check_bindings() const;
  constexpr Status sort_topologically();
  constexpr Status infer_layer(Layer& layer);

  std::vector<Layer> layers_;
  std::vector<LayerId> order_;
  Status build_error_;
  bool shapes_inferred_ = false;
  QuantizedArithmetic arithmetic_ = QuantizedArithmetic::Kiln;
};

constexpr Status Network::check_connections() const {
  for (const Layer& layer : layers_) {
    const ops::Arity arity = ops::op_arity(layer.descriptor.index());
    if (layer.inputs.size() < arity.min_inputs || layer.inputs.size() > arity.max_inputs)
      return Status::error(
          ErrorCode::InvalidNetwork, layer.describe(), " has ", layer.inputs.size(), " inputs; it takes ",
          arity.min_inputs,
          arity.min_inputs == arity.max_inputs ? std::string{} : detail::str_cat(" to ", arity.max_inputs));
    for (std::size_t i = 0; i < layer.inputs.size(); ++i)
      if (!layer.inputs[i])
        return Status::error(ErrorCode::InvalidNetwork, "input ", i, " of ", layer.describe(), " is not connected");
  }
  return Status::ok();
}

constexpr Status Network::check_bindings() const {
  std::vector<std::pair<BindingId, LayerId>> inputs, outputs;
  for (LayerId id = 0; id < layers_.size(); ++id) {
    if (auto* p = layers_[id].params_if<ops::Input>()) inputs.emplace_back(p->binding, id);
    if (auto* p = layers_[id].params_if<ops::Output>()) outputs.emplace_back(p->binding, id);
  }
  if (outputs.empty()) return Status::error(ErrorCode::InvalidNetwork, "the network has no Output layer");
  for (auto* list : {&inputs, &outputs}) {
    std::ranges::sort(*list);
    for (std::size_t i = 1; i < list->size(); ++i)
      if ((*list)[i].first == (*list)[i - 1].first)
        return Status::error(ErrorCode::InvalidNetwork, list == &inputs ? "input" : "output", " binding id ",
                             (*list)[i].first, " is used by both ", layers_[(*list)[i - 1].second].describe(), " and ",
                             layers_[(*list)[i].second].describe());
  }
  return Status::ok();
}

constexpr Status Network::sort_topologically() {
  // Keep only layers an Output depends on, then order them with Kahn's algorithm.
  std::vector<bool> needed(layers_.size(), false);
  std::vector<LayerId> stack;
  for (LayerId id = 0; id < layers_.size(); ++id)
    if (layers_[id].is<ops::Output>()) stack.push_back(id);
  while (!stack.empty()) {
    const LayerId id = stack.back();
    stack.pop_back();
    if (needed[id]) continue;
    needed[id] = true;
    for (const auto& input : layers_[id].inputs) stack.push_back(input->layer);
  }
  std::vector<std::uint32_t> pending(layers_.size(), 0);
  std::vector<std::vector<LayerId>> consumers(layers_.size());
  for (LayerId id = 0; id < layers_.size(); ++id) {
    if (!needed[id]) continue;
    for (const auto& input : layers_[id].inputs) {
      ++pending[id];
      consumers[input->layer].push_back(id);
    }
  }
  order_.clear();
  for (LayerId id = 0; id < layers_.size(); ++id)
    if (needed[id] && pending[id] == 0) order_.push_back(id);
  for (std::size_t next = 0; next < order_.size(); ++next)
    for (LayerId consumer : consumers[order_[next]])
      if (--pending[consumer] == 0) order_.push_back(consumer);
  const auto needed_count = static_cast<std::size_t>(std::ranges::count(needed, true));
  if (order_.size() != needed_count) {
    // The layers left are on a cycle or downstream of one; peel off those that feed nothing left.
    std::vector<bool> on_cycle(layers_.size(), false);
    for (LayerId id = 0; id < layers_.size(); ++id) on_cycle[id] = needed[id] && pending[id] != 0;
    for (bool peeled = true; peeled;) {
      peeled = false;
      for (LayerId id = 0; id < layers_.size(); ++id)
        if (on_cycle[id] && std::ranges::none_of(consumers[id], [&](LayerId c) { return on_cycle[c]; })) {
          on_cycle[id] = false;
          peeled = true;
        }
    }
    std::string names;
    for (LayerId id = 0; id < layers_.size(); ++id)
      if (on_cycle[id]) names += detail::str_cat(names.empty() ? "" : ", ", "'", layers_[id].name, "'");
    return Status::error(ErrorCode::InvalidNetwork, "the network has a cycle through layers ", names);
  }
  return Status::ok();
}

constexpr Status Network::infer_layer(Layer& layer) {
  std::vector<TensorInfo> inputs;
  inputs.reserve(layer.inputs.size());
  for (const auto& input : layer.inputs) inputs.push_back(tensor_info(*input));
  const Status status = visit_op(layer.descriptor, [&](const auto& d) {
    return ops::infer_outputs<typename std::decay_t<decltype(d)>::op>(d.value, inputs, layer.output_types,
                                                                      layer.outputs);
  });
  if (!status) return status.with_context(layer.describe());
  for (std::size_t i = 0; i < layer.outputs.size(); ++i)
    if (auto valid = validate(layer.outputs[i]); !valid)
      return valid.with_context(detail::str_cat(layer.describe(), " output ", i));
  return Status::ok();
}

constexpr Status Network::infer_shapes() {
  shapes_inferred_ = false;
  if (!build_error_) return build_error_;
  if (auto s = check_connections(); !s) return s;
  if (auto s = check_bindings(); !s) return s;
  if (auto s = sort_topologically(); !s) return s;
  for (LayerId id : order_)
    if (auto s = infer_layer(layers_[id]); !s) return s;
  shapes_inferred_ = true;
  return Status::ok();
}

}  // namespace kiln
