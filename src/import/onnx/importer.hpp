// SPDX-License-Identifier: Apache-2.0
// The ONNX importer's inside (not installed): the values of the graph being read, their layouts,
// the constants known at import, and the converter table. One converter file per op family.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "kiln/import/onnx.hpp"
#include "kiln/ops/op_list.hpp"

namespace kiln::onnx::detail {

/// A tensor whose value is known at import: an initializer, a Constant node, or the result of
/// folding shape arithmetic. Floating-point data lives in `floats`, integers and bools in `ints`.
struct ConstValue {
  std::vector<std::int64_t> dims;
  bool is_float = true;
  bool is_bool = false;
  std::vector<float> floats;
  std::vector<std::int64_t> ints;
  /// The ONNX element type it was read as (TensorProto::DataType), 0 when computed at import.
  std::int32_t onnx_type = 0;
  /// A constant folded from DequantizeLinear keeps its integers and their quantisation (the axis
  /// one of `dims`), so that the network holds it quantised, a Constant read through a Dequantize
  /// layer, for the optimizer to hand to int8 layers (passes/fuse_quantized_layers.hpp).
  struct Quantized {
    std::vector<std::int64_t> ints;
    DataType type = DataType::QSymmS8;
    QuantizationInfo info;
  };
  std::shared_ptr<const Quantized> quantized;

  std::size_t size() const { return is_float ? floats.size() : ints.size(); }
  std::int64_t int_at(std::size_t i) const { return is_float ? static_cast<std::int64_t>(floats[i]) : ints[i]; }
  float float_at(std::size_t i) const { return is_float ? floats[i] : static_cast<float>(ints[i]); }
  /// A constant with the same element kind whose element j is this one's element `source[j]`.
  ConstValue gathered(std::vector<std::int64_t> new_dims, std::span<const std::size_t> source) const;
  /// This constant seen as `dims` (the same element count), transposed by `perm`, with the
  /// resulting dims replaced by `new_dims` (the same count again). Copies each element once,
  /// with no table of indices: weights are the bulk of a model's load.
  ConstValue transposed(std::span<const std::int64_t> dims, std::span<const std::size_t> perm,
                        std::vector<std::int64_t> new_dims) const;
};

std::uint64_t element_count(std::span<const std::int64_t> dims);
/// The most elements a constant computed at import may have (ConstantOfShape, Range, broadcasts).
inline constexpr std::uint64_t max_folded_elements = std::uint64_t{1} << 26;
/// Row-major strides of `dims`.
std::vector<std::size_t> strides_of(std::span<const std::int64_t> dims);

/// Channels-last is kiln's layout for convolutions, pooling, batch norm and resize: ONNX's
/// [N, C, D1, ..., Dk] held as [N, D1, ..., Dk, C].
std::vector<std::size_t> to_channels_last(std::size_t rank);
/// Where ONNX axis `axis` (in [0, rank)) sits in the channels-last order.
std::size_t channels_last_axis(std::size_t axis, std::size_t rank);
/// Where `axis` sits in `order` (an axis order: kiln axis k holds ONNX axis order[k]).
std::size_t position_in(std::span<const std::size_t> order, std::size_t axis);
/// The Transpose permutation that takes a tensor held in order `from` to order `to`.
std::vector<std::size_t> permutation_between(std::span<const std::size_t> from, std::span<const std::size_t> to);

/// A kiln tensor holding a value with its axes in `order`: kiln axis k is ONNX axis order[k].
struct HeldTensor {
  OutputSlot slot;
  std::vector<std::size_t> order;
};

/// One named value of the ONNX graph. It may exist as kiln tensors in several axis orders: ONNX's
/// own (plain), channels-last, or another one a Transpose or Reshape left it in (a channel
/// shuffle); each is made on demand, once.
struct Value {
  std::vector<std::int64_t> dims;  ///< ONNX dimensions
  DataType type = DataType::Float32;
  std::optional<ConstValue> constant;
  std::vector<HeldTensor> held;

  const HeldTensor* in_order(std::span<const std::size_t> order) const;
};

enum class Layout : std::uint8_t { Plain, ChannelsLast };
/// The axis order of a layout: identity, or channels-last for rank 3 and above.
std::vector<std::size_t> layout_order(Layout layout, std::size_t rank);

/// Whether a layer means the same on an ONNX uint8 or int8 tensor's integers as on the real numbers
/// a kiln 8-bit tensor quantises: one that moves or selects bytes (Pad too: its converter states
/// the constant as the value the integer stands for). ONNX computes Add, Relu, Clip,
/// AveragePool... on the integers; kiln's 8-bit layers on what they stand for, so the importer
/// makes them only from DequantizeLinear -> op -> QuantizeLinear (by the optimizer's fusion).
template <OpDescriptor Op>
constexpr bool same_on_integers(const typename Op::Params& params) {
  if constexpr (std::same_as<Op, ops::Pooling2d>)
    return params.kind == ops::PoolingKind::Max;
  else if constexpr (std::same_as<Op, ops::Resize>)
    return params.method == ops::ResizeMethod::Nearest;
  else
    return contains_v<Op, TypeList<ops::Concat, ops::Constant, ops::Dequantize, ops::Gather, ops::Input, ops::MemCopy,
                                   ops::Output, ops::Pad, ops::Reshape, ops::Split, ops::StridedSlice, ops::Transpose>>;
}

class Importer;
using Converter = Status (*)(Importer&);

/// Reads one graph into a Network. The converters call back into it for inputs, attributes, layers
/// and errors; every error names the node being converted.
class Importer {
 public:
  explicit Importer(std::int64_t opset) : opset_(opset) {}

  /// Reads `graph` into `model`; each initializer's data is moved out of the graph as it is read.
  /// `options` fix the dimensions the graph's inputs leave open.
  Status read_graph(::onnx::GraphProto& graph, ImportedModel& model, const ImportOptions& options);
  /// A graph input the user gave a value for (ImportOptions::constant_inputs); call before read_graph.
  Status add_constant_input(const HostTensor& tensor);

  // ---- for converters: the node being converted
  std::int64_t opset() const { return opset_; }
  const ::onnx::NodeProto& node() const { return *node_; }
  std::size_t num_inputs() const;  ///< inputs present (trailing empty names dropped)
  bool has_input(std::size_t i) const;
  Expected<Value*> input(std::size_t i);
  /// The input's constant value, or an error saying the input must be constant.
  Expected<const ConstValue*> constant_input(std::size_t i, std::string_view role);
  /// The value already defined for output `i` of the node.
  Expected<Value*> output_value(std::size_t i);
  /// True when the node names an output `i` (optional outputs may be left unnamed).
  bool is_output(std::size_t i) const;
  /// True when output `i` is read by another node or is a graph output.
  bool output_used(std::size_t i) const;

  std::optional<std::int64_t> attr_int(std::string_view name) const;
  std::int64_t attr_int(std::string_view name, std::int64_t fallback) const;
  std::optional<float> attr_float(std::string_view name) const;
  float attr_float(std::string_view name, float fallback) const;
  std::optional<std::vector<std::int64_t>> attr_ints(std::string_view name) const;
  std::optional<std::vector<float>> attr_floats(std::string_view name) const;
  std::optional<std::string> attr_string(std::string_view name) const;
  const ::onnx::AttributeProto* attr(std::string_view name) const;

  /// An error about the current node: "node 'conv1' (Conv): <reason>".
  template <class... Pieces>
  Status error(const Pieces&... pieces) const {
    return Status::error(ErrorCode::Unsupported, node_description(), ": ", pieces...);
  }
  template <class... Pieces>
  Status invalid(const Pieces&... pieces) const {
    return Status::error(ErrorCode::InvalidNetwork, node_description(), ": ", pieces...);
  }
  std::string node_description() const;

  // ---- tensors in a layout
  /// The value as a kiln tensor in `layout`, `rank` dimensions (leading 1s added for broadcasting).
  Expected<OutputSlot> tensor(Value& value, Layout layout, std::size_t rank);
  Expected<OutputSlot> plain(Value& value) { return tensor(value, Layout::Plain, value.dims.size()); }
  Expected<OutputSlot> channels_last(Value& value) { return tensor(value, Layout::ChannelsLast, value.dims.size()); }
  /// `slot` with its dimensions permuted: a Transpose layer, or a Reshape when no data moves.
  Expected<OutputSlot> permute(OutputSlot slot, std::span<const std::size_t> perm, std::string_view suffix);
  /// The layout a layout-agnostic op (activation, unary) should run in: the one the value has.
  static Layout preferred_layout(const Value& value);
  /// A constant tensor in the network.
  OutputSlot add_constant(const ConstValue& constant, DataType type, std::string_view suffix);
  /// A constant tensor in the network: `constant` seen as `dims` (the same element count), its
  /// axes permuted by `perm`.
  OutputSlot add_constant(const ConstValue& constant, std::span<const std::int64_t> dims,
                          std::span<const std::size_t> perm, DataType type, std::string_view suffix);

  /// Adds a layer reading `inputs`, infers its outputs now (errors name the node) and returns
  /// its first output.
  /// `output_type`, when given, is declared for its first output (Network::set_output_type).
  template <OpDescriptor Op>
  Expected<OutputSlot> add(typename Op::Params params, std::span<const OutputSlot> inputs, std::string_view suffix = {},
                           std::optional<ops::OutputType> output_type = {}) {
    std::vector<TensorInfo> infos;
    for (const OutputSlot& slot : inputs) infos.push_back(info(slot));
    if (!same_on_integers<Op>(params))
      for (const TensorInfo& in : infos)
        if (is_quantized(in.type))
          return error(Op::name, " of an 8-bit tensor ", in.to_string(),
                       ": ONNX computes it on the integers; kiln runs 8-bit arithmetic only between ",
                       "DequantizeLinear and QuantizeLinear");
    std::vector<TensorInfo> outputs(ops::num_outputs<Op>(params));
    if (auto status = ops::infer_outputs<Op>(params, infos, std::span(&output_type, 1), outputs); !status)
      return invalid(status.message());
    for (const TensorInfo& out : outputs)
      if (auto valid = kiln::validate(out); !valid) return invalid(valid.message());
    const LayerId id = network_->add_layer<Op>(std::move(params), inputs.size(), layer_name(suffix));
    for (std::size_t i = 0; i < inputs.size(); ++i) (void)network_->connect(inputs[i], id, i);
    if (output_type) (void)network_->set_output_type({id, 0}, output_type->type, output_type->quantization);
    for (std::uint32_t i = 0; i < outputs.size(); ++i) infos_[{id, i}] = outputs[i];
    return OutputSlot{id, 0};
  }
  template <OpDescriptor Op>
  Expected<OutputSlot> add(typename Op::Params params, std::initializer_list<OutputSlot> inputs,
                           std::string_view suffix = {}, std::optional<ops::OutputType> output_type = {}) {
    return add<Op>(std::move(params), std::span<const OutputSlot>(inputs.begin(), inputs.size()), suffix,
                   std::move(output_type));
  }
  /// Defines output 0 as one `Op` layer applied to `x` held in `layout`.
  template <OpDescriptor Op>
  Status define_op(typename Op::Params params, Value& x, Layout layout) {
    auto input = tensor(x, layout, x.dims.size());
    if (!input) return input.status();
    auto y = add<Op>(std::move(params), {*input});
    if (!y) return y.status();
    define(0, *y, layout);
    return Status::ok();
  }
  const TensorInfo& info(OutputSlot slot) const { return infos_.at({slot.layer, slot.index}); }

  /// Defines output `i` of the node as `slot`, a tensor in `layout` (its ONNX dims follow from its info).
  void define(std::size_t i, OutputSlot slot, Layout layout) {
    define(i, slot, layout_order(layout, info(slot).rank()));
  }
  /// Defines output `i` of the node as `slot`, a tensor whose kiln axis k is ONNX axis order[k].
  void define(std::size_t i, OutputSlot slot, std::span<const std::size_t> order);
  /// Defines output `i` of the node as another name for `value` (Identity).
  void define_value(std::size_t i, Value value);
  /// Defines output `i` of the node as a constant (folded at import).
  void define_constant(std::size_t i, ConstValue constant, DataType type);

  // ---- ops ONNX defines as a composition of others
  /// The name of an intermediate value of the current node's expansion: unique, and telling where it came from.
  std::string expansion_name(std::string_view role) const;
  /// Defines the constant `name` (an expansion_name) for the expansion's nodes to read.
  void define_named_constant(const std::string& name, ConstValue constant);
  /// Converts `nodes` (in order; they read the current node's inputs and expansion names, and the last
  /// defines its output) in place of the current node: QLinearConv is DequantizeLinear -> Conv ->
  /// QuantizeLinear, which the optimizer fuses into an int8 layer as it does the same nodes of a QDQ model.
  /// An error names the current node and the op it was expanded into.
  Status convert_as(std::span<const ::onnx::NodeProto> nodes);

 private:
  std::string layer_name(std::string_view suffix) const;
  Status convert_node(const ::onnx::NodeProto& node);
  Status add_graph_input(const ::onnx::ValueInfoProto& input, std::span<const std::int64_t> dims, BindingId binding,
                         ImportedModel& model);
  /// A constant layer of `dims` holding `bytes`.
  OutputSlot adopt_constant(std::span<const std::int64_t> dims, DataType type, std::vector<std::byte> bytes,
                            std::string_view suffix, QuantizationInfo quantization = {});
  /// A constant folded from DequantizeLinear, its axes permuted by `perm`, as its integers in a
  /// Constant read through a Dequantize layer; nothing when that layer cannot be made.
  std::optional<OutputSlot> add_quantized_constant(const ConstValue& constant, std::span<const std::size_t> perm,
                                                   std::string_view suffix);

  std::int64_t opset_;
  Network* network_ = nullptr;
  const ::onnx::NodeProto* node_ = nullptr;
  std::map<std::string, Value, std::less<>> values_;
  /// How many reads of a name are still to come: by the nodes not converted yet and the graph outputs.
  std::map<std::string, std::size_t, std::less<>> readers_;
  std::map<std::pair<LayerId, std::uint32_t>, TensorInfo> infos_;
  std::size_t folded_ = 0;
  bool node_folded_ = false;
};

/// One spatial axis of a window: the kernel's size, stride, dilation and the padding before and after.
struct WindowAxis {
  std::uint32_t kernel = 1, stride = 1, dilation = 1, before = 0, after = 0;
};
/// The window of a convolution or pooling node over 1, 2 or 3 spatial axes: kiln's 2-D parameters
/// over height and width (a 1-D window is a 2-D one of height 1), and the depth axis of a 3-D one,
/// which the converters lower onto 2-D layers (a kernel of 1 otherwise).
struct Window {
  ops::Size2d kernel, stride, dilation;
  ops::Padding2d padding;
  WindowAxis depth;
};
/// ONNX axis `axis` (negative counts from the end) as an index in [0, rank), or an error naming it.
Expected<std::size_t> normalized_axis(const Importer& im, std::int64_t axis, std::size_t rank);
/// Reads kernel_shape (or `kernel` when given), strides, dilations, pads and auto_pad for an
/// input of spatial size `spatial`.
Expected<Window> read_window(const Importer& im, std::span<const std::int64_t> spatial,
                             std::span<const std::int64_t> kernel = {});
/// An integer-list attribute with one value per spatial axis (`fallback` when absent).
Expected<std::vector<std::int64_t>> spatial_attr(const Importer& im, std::string_view name, std::size_t axes,
                                                 std::int64_t fallback);
/// The channels-last tensor of a 3-D ([N, C, L]) or 4-D input as kiln's 4-D NHWC ([N, 1, L, C] for 1-D),
/// and of a 5-D one ([N, C, D, H, W]) with its depth slices as the batch: [N * D, H, W, C].
Expected<OutputSlot> nhwc_input(Importer& im, Value& x);
/// Defines output 0 of a node whose input `x` nhwc_input read as NHWC result `y`: back to [N, L, C]
/// when `x` was 1-D, and to [N, D, OH, OW, C'] (`depth` slices) when it was 3-D.
Status define_nhwc_output(Importer& im, const Value& x, OutputSlot y, std::int64_t depth = 1);

/// The values of the integers of 8-bit `x` (what ONNX computes on) as Float32 in `layout`: a
/// Dequantize at scale 1, exact.
Expected<OutputSlot> integer_values(Importer& im, Value& x, Layout layout);
/// The integers of 8-bit `x` in `layout`, read with `quantization` (a Reshape that declares it
/// when the tensor has another): how a quantising node gives its input the scale it states.
Expected<OutputSlot> integers_as(Importer& im, Value& x, Layout layout, QuantizationInfo quantization);

/// Converters by ONNX op type; each file of converters adds its ops.
struct ConverterEntry {
  std::string_view op;
  Converter convert;
};
std::span<const ConverterEntry> converter_table();
/// The whole content of a file, or an error naming it.
Expected<std::vector<char>> read_whole_file(const std::string& path);  ///< all of them, sorted by op
std::span<const ConverterEntry> activation_converters();
std::span<const ConverterEntry> einsum_converters();
std::span<const ConverterEntry> elementwise_converters();
std::span<const ConverterEntry> convolution_converters();
std::span<const ConverterEntry> dense_converters();
std::span<const ConverterEntry> pooling_converters();
std::span<const ConverterEntry> loss_converters();
std::span<const ConverterEntry> normalization_converters();
std::span<const ConverterEntry> recurrent_converters();
std::span<const ConverterEntry> reduce_converters();
std::span<const ConverterEntry> resize_converters();
std::span<const ConverterEntry> shape_converters();
std::span<const ConverterEntry> constant_converters();
std::span<const ConverterEntry> quantization_converters();
std::span<const ConverterEntry> qoperator_converters();

/// A TensorProto's value; the error names the tensor.
Expected<ConstValue> read_constant(const ::onnx::TensorProto& tensor);
/// The kiln type of an ONNX element type, or an error naming it.
Expected<DataType> kiln_type(std::int32_t onnx_type);
/// ONNX's uint8 and int8 as kiln's 8-bit types (QAsymmU8, QAsymmS8), or nothing for another type.
std::optional<DataType> eight_bit_type(std::int64_t onnx_type);
/// The kiln type of a tensor that crosses the model's boundary (a graph input or output, a tensor
/// file): ONNX's uint8 and int8 are QAsymmU8 and QAsymmS8 holding the integers themselves
/// (raw_integers()), so that 8-bit data moves as bytes; every other type is kiln_type's.
Expected<TensorInfo> boundary_info(std::int32_t onnx_type, TensorShape shape);
std::string_view onnx_type_name(std::int32_t onnx_type);

/// Shapes, axes and sizes as kiln's unsigned dims, or an error when one is negative or huge.
Expected<std::vector<std::uint32_t>> to_dims(std::span<const std::int64_t> dims);

}  // namespace kiln::onnx::detail

/// Evaluates an Expected and returns its Status from the calling function when it holds none.
#define KILN_ONNX_TRY(name, expr)                        \
  auto name##_expected = (expr);                         \
  if (!name##_expected) return name##_expected.status(); \
  auto&& name = *name##_expected
