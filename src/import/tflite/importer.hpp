// SPDX-License-Identifier: Apache-2.0
// The TensorFlow Lite importer's inside (not installed): the model being read, its tensors as
// kiln tensors, and the converter table. One converter file per op family.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/detail/str_cat.hpp"
#include "kiln/import/tflite.hpp"
#include "kiln/ops/op_list.hpp"
#include "tflite_subset_generated.h"

namespace kiln::tflite::detail {

namespace format = kiln::tflite::format;

/// A tensor of the model as the network holds it: the slot that computes it and its info.
struct Held {
  OutputSlot slot;
  TensorInfo info;
};

class Importer;
using Converter = Status (*)(Importer&);

/// Reads subgraph 0 of a verified model into a Network. The converters call back into it for the
/// operator's inputs, options and outputs; every error names the operator.
class Importer {
 public:
  Importer(const format::Model& model, std::span<const std::byte> file) : model_(model), file_(file) {}

  Status read(ImportedModel& imported);

  // ---- for converters: the operator being converted
  std::size_t num_inputs() const;
  std::size_t num_outputs() const { return op_->outputs()->size(); }
  /// False for an optional input left out (index -1).
  bool has_input(std::size_t i) const;
  /// Input i as a network tensor; a constant becomes a Constant layer the first time it is read.
  Expected<Held> input(std::size_t i);
  /// The info the file gives input or output i.
  const TensorInfo& input_info(std::size_t i) const { return infos_[tensor_index(op_->inputs(), i)]; }
  const TensorInfo& output_info(std::size_t i) const { return infos_[tensor_index(op_->outputs(), i)]; }
  /// The bytes of input i when it is a constant (as the file holds them), or nothing.
  std::optional<std::span<const std::byte>> constant_bytes(std::size_t i) const;
  /// The integers of constant input i (INT32 or INT64), or an error saying it must be constant.
  Expected<std::vector<std::int64_t>> constant_ints(std::size_t i, std::string_view role) const;
  /// The operator's options of table T, or an error when it has none of that table.
  template <class T>
  Expected<const T*> options() const {
    if (const T* found = op_->builtin_options_as<T>()) return found;
    return invalid("has no ", T::GetFullyQualifiedName(), " (its builtin_options are missing or of another table)");
  }

  /// Adds an Op layer reading `inputs` and returns its outputs with the infos kiln gives them. With
  /// `typed`, output i takes the type and quantisation of the operator's output i (Quantize, and
  /// the quantised layers, whose output scale is the model's choice).
  template <OpDescriptor Op>
  Expected<std::vector<Held>> add(typename Op::Params params, std::span<const Held> inputs, bool typed = false,
                                  std::string_view suffix = {}) {
    std::vector<TensorInfo> in;
    for (const Held& held : inputs) in.push_back(held.info);
    std::vector<std::optional<ops::OutputType>> declared;
    std::vector<TensorInfo> out(ops::num_outputs<Op>(params));
    if (typed)
      for (std::size_t i = 0; i < out.size(); ++i)
        declared.push_back(ops::OutputType{output_info(i).type, output_info(i).quantization});
    if (auto s = ops::infer_outputs<Op>(params, in, declared, out); !s) return invalid(Op::name, ": ", s.message());
    const LayerId id = network_->add_layer<Op>(std::move(params), inputs.size(), layer_name(suffix));
    for (std::size_t i = 0; i < inputs.size(); ++i) (void)network_->connect(inputs[i].slot, id, i);
    std::vector<Held> outputs;
    for (std::uint32_t i = 0; i < out.size(); ++i) {
      if (typed) (void)network_->set_output_type({id, i}, out[i].type, out[i].quantization);
      outputs.push_back({{id, i}, out[i]});
    }
    return outputs;
  }

  /// Whether the operator's output 0 is quantised: the layers that compute it then take its scale.
  bool quantized_output() const { return is_quantized(output_info(0).type); }
  /// Adds an Op layer whose outputs take the operator's scale when they are quantised, and makes its
  /// output the operator's output 0: the whole of most converters.
  template <OpDescriptor Op>
  Status add_as_output(typename Op::Params params, std::span<const Held> inputs) {
    auto out = add<Op>(std::move(params), inputs, quantized_output());
    if (!out) return out.status();
    return set_output(0, out->front());
  }

  /// The operators kiln computes in Float32 only, run on 8-bit tensors as TensorFlow Lite's do: `inputs`
  /// with each 8-bit one (and each scaled Signed32 bias) dequantized to Float32...
  Expected<std::vector<Held>> dequantized(std::span<const Held> inputs);
  /// ...and the Float32 result made the operator's output 0, quantized to its scale when it is 8-bit.
  /// The optimizer turns Dequantize -> op -> Quantize into the 8-bit layer where kiln has one.
  Status set_float_output(const Held& result);

  /// Makes `held` the operator's output i: through a Reshape when kiln's shape differs from the
  /// file's but holds as many elements; an error when the shapes or types do not agree.
  Status set_output(std::size_t i, const Held& held);
  /// A fused activation of the format as kiln's, or an error for one kiln does not fuse.
  Expected<std::optional<ops::Activation::Params>> fused(format::ActivationFunctionType activation) const;
  /// `held` through the fused activation, as a layer of its own (for ops whose parameters hold none).
  Expected<Held> activated(const Held& held, format::ActivationFunctionType activation);

  /// An error about the current operator: "operator 3 (CONV_2D): <reason>".
  template <class... Pieces>
  Status error(const Pieces&... pieces) const {
    return Status::error(ErrorCode::Unsupported, describe(), ": ", pieces...);
  }
  template <class... Pieces>
  Status invalid(const Pieces&... pieces) const {
    return Status::error(ErrorCode::InvalidNetwork, describe(), ": ", pieces...);
  }
  std::string describe() const;

 private:
  static std::size_t tensor_index(const flatbuffers::Vector<std::int32_t>* list, std::size_t i) {
    return static_cast<std::size_t>(list->Get(static_cast<flatbuffers::uoffset_t>(i)));
  }
  /// The name of a layer the current operator adds: its first output tensor's, and `suffix`.
  std::string layer_name(std::string_view suffix) const;
  Status read_tensors();
  Expected<std::span<const std::byte>> buffer_of(const format::Tensor& tensor) const;
  const format::Tensor& tensor_at(std::size_t t) const {
    return *graph_->tensors()->Get(static_cast<flatbuffers::uoffset_t>(t));
  }
  Status check_operator_tensors() const;
  /// Per operator, whether a model output depends on it; the others are left out (a Keras model's
  /// SHAPE -> STRIDED_SLICE -> PACK that computes a RESHAPE's static shape, say).
  std::vector<bool> used_operators() const;

  const format::Model& model_;
  std::span<const std::byte> file_;
  const format::SubGraph* graph_ = nullptr;
  Network* network_ = nullptr;
  std::vector<TensorInfo> infos_;          ///< per tensor of the subgraph
  std::vector<std::optional<Held>> held_;  ///< per tensor, once the network has it
  std::vector<bool> is_weights_;           ///< read as the weights of a convolution or fully connected layer
  const format::Operator* op_ = nullptr;
  std::size_t op_index_ = 0;
  std::string_view op_name_;
};

// Converters, one file per op family.
Status convert_conv_2d(Importer&);
Status convert_depthwise_conv_2d(Importer&);
Status convert_fully_connected(Importer&);
Status convert_average_pool_2d(Importer&);
Status convert_max_pool_2d(Importer&);
Status convert_mean(Importer&);
Status convert_softmax(Importer&);
Status convert_add(Importer&);
Status convert_sub(Importer&);
Status convert_mul(Importer&);
Status convert_logistic(Importer&);
Status convert_tanh(Importer&);
Status convert_relu(Importer&);
Status convert_relu6(Importer&);
Status convert_leaky_relu(Importer&);
Status convert_hard_swish(Importer&);
Status convert_reshape(Importer&);
Status convert_concatenation(Importer&);
Status convert_pad(Importer&);
Status convert_transpose(Importer&);
Status convert_strided_slice(Importer&);
Status convert_slice(Importer&);
Status convert_gather(Importer&);
Status convert_split(Importer&);
Status convert_resize_bilinear(Importer&);
Status convert_resize_nearest_neighbor(Importer&);
Status convert_transpose_conv(Importer&);
Status convert_batch_matmul(Importer&);
Status convert_quantize(Importer&);
Status convert_dequantize(Importer&);

}  // namespace kiln::tflite::detail
