// SPDX-License-Identifier: Apache-2.0
// kiln quantize's compiled half: the calibration model, and the QDQ model written from a Float32
// model and the ranges calibration saw (docs/decisions/0016). Scales, zero points and the rounding
// of weights and biases follow ONNX Runtime's quantize_static, so that the two quantisers agree on a
// model calibrated with the same examples.
#include "kiln/import/quantize.hpp"

#include <limits>
#include <optional>
#include <set>
#include <unordered_map>

#include "importer.hpp"

namespace kiln::onnx {
namespace {

using ::onnx::ModelProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

/// How the writer treats a node.
enum class Role : std::uint8_t {
  Float,        ///< stays Float32
  Weighted,     ///< Conv, Gemm, MatMul: a quantised activation and constant weights in, its own quantisation out
  Activations,  ///< Add, Sub, Mul, Concat, pooling, the tabled activations, Softmax, a MatMul of two activations:
                ///< quantised in, its own quantisation out
  Direct,       ///< MaxPool, the reshaping ops, Slice, Gather, Resize, Pad: moves its input's values, so keeps
                ///< their quantisation (keeps_values says when)
  Removable,    ///< Relu, Clip: its clamp is the range calibrated after it, so it folds into the node before;
                ///< else it is quantised like the Activations
};

Role role_of(const NodeProto& node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return Role::Float;
  const std::string& op = node.op_type();
  if (op == "Conv" || op == "Gemm" || op == "MatMul") return Role::Weighted;
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Concat" || op == "AveragePool" || op == "GlobalAveragePool" ||
      op == "Sigmoid" || op == "Tanh" || op == "HardSigmoid" || op == "HardSwish" || op == "LeakyRelu" || op == "Elu" ||
      op == "Softmax")
    return Role::Activations;
  if (op == "MaxPool" || op == "Flatten" || op == "Reshape" || op == "Transpose" || op == "Squeeze" ||
      op == "Unsqueeze" || op == "Slice" || op == "Gather" || op == "Resize" || op == "Pad")
    return Role::Direct;
  if (op == "Relu" || op == "Clip") return Role::Removable;
  return Role::Float;
}

/// How many leading inputs of a node carry activations (the others are weights, shapes, limits).
int activation_inputs(const NodeProto& node) {
  const std::string& op = node.op_type();
  if (op == "Concat") return node.input_size();
  return (op == "Add" || op == "Sub" || op == "Mul" || op == "MatMul") ? 2 : 1;
}

Expected<ModelProto> parse(std::span<const std::byte> bytes) {
  ModelProto model;
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) || !model.has_graph())
    return Status::error(ErrorCode::InvalidArgument, "the data is not an ONNX model with a graph (or is over 2 GiB)");
  return model;
}

Expected<std::vector<std::byte>> serialize(const ModelProto& model) {
  const std::size_t size = model.ByteSizeLong();
  if (size > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return Status::error(ErrorCode::Unsupported, "the quantised model would be ", size,
                         " bytes; protobuf writes at most 2 GiB");
  std::vector<std::byte> bytes(size);
  if (!model.SerializeToArray(bytes.data(), static_cast<int>(size)))
    return Status::error(ErrorCode::OutOfMemory, "protobuf could not serialize the quantised model");
  return bytes;
}

std::int64_t default_opset(const ModelProto& model) {
  for (const auto& opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx") return opset.version();
  return 0;
}

TensorProto make_tensor(const std::string& name, TensorProto::DataType type, std::span<const std::int64_t> dims,
                        const void* data, std::size_t bytes) {
  TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(type);
  for (std::int64_t d : dims) tensor.add_dims(d);
  tensor.set_raw_data(data, bytes);  // little-endian, as ONNX's raw_data is
  return tensor;
}

/// A QuantizeLinear or DequantizeLinear node of `tensor` (which names it).
NodeProto make_node(const std::string& op, const std::string& tensor, std::initializer_list<std::string> inputs,
                    const std::string& output, std::optional<std::int64_t> axis = std::nullopt) {
  NodeProto node;
  node.set_op_type(op);
  node.set_name(tensor + "_" + op);
  for (const auto& input : inputs) node.add_input(input);
  node.add_output(output);
  if (axis) {
    auto* attribute = node.add_attribute();
    attribute->set_name("axis");
    attribute->set_type(::onnx::AttributeProto::INT);
    attribute->set_i(*axis);
  }
  return node;
}

std::int64_t int_attribute(const NodeProto& node, std::string_view name, std::int64_t fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}
std::string string_attribute(const NodeProto& node, std::string_view name, std::string fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.s();
  return fallback;
}
float float_attribute(const NodeProto& node, std::string_view name, float fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.f();
  return fallback;
}

/// The quantisation of a tensor: its scale and zero-point initializers (shared by the tensors a
/// Direct node passes it on to) and the scale's value.
struct TensorQuantization {
  std::string scale, zero_point;
  float scale_value = 1.0f;
};

/// A Float32 weight initializer as integers: the DequantizeLinear output that reads them back, and
/// the scales (one per channel along the node's output axis, or one).
struct QuantizedWeights {
  std::string dequantized;
  std::vector<float> scales;
};

/// Where a node keeps its weights: input 1 with the output channels along `axis`, and a bias in
/// input 2 when `has_bias`.
struct WeightLayout {
  std::int64_t axis = 0;
  bool has_bias = false;
};

class QdqWriter {
 public:
  QdqWriter(ModelProto& model, const CalibrationStatistics& statistics, const QuantizeOptions& options)
      : model_(model), graph_(*model.mutable_graph()), statistics_(statistics), options_(options) {}

  Expected<QuantizeSummary> write() {
    if (auto status = check_model(); !status) return status;
    originals_.Swap(graph_.mutable_initializer());
    for (int i = 0; i < originals_.size(); ++i) initializer_index_[originals_.Get(i).name()] = i;
    nodes_.Swap(graph_.mutable_node());
    index_names();
    fold_removable_activations();
    for (int i = 0; i < nodes_.size(); ++i)
      if (!removed_.contains(i))
        if (auto status = rewrite(*nodes_.Mutable(i)); !status) return status;
    finish_graph();
    summary_.float_ops.assign(float_ops_.begin(), float_ops_.end());
    return summary_;
  }

 private:
  Status check_model() const {
    if (options_.activations != DataType::QAsymmU8 && options_.activations != DataType::QAsymmS8)
      return Status::error(ErrorCode::InvalidArgument, "activations are quantised to QAsymmU8 or QAsymmS8, not ",
                           to_string(options_.activations));
    const std::int64_t opset = default_opset(model_);
    if (opset < 10)
      return Status::error(ErrorCode::Unsupported, "the model uses opset ", opset,
                           "; QuantizeLinear needs opset 10 or later (re-export the model)");
    if (options_.per_channel && opset < 13)
      return Status::error(ErrorCode::Unsupported, "the model uses opset ", opset,
                           "; weights quantised per channel need opset 13 (quantise per tensor, or re-export)");
    for (const auto& node : graph_.node())
      if (node.op_type() == "QuantizeLinear" || node.op_type() == "DequantizeLinear" ||
          node.op_type().starts_with("QLinear"))
        return Status::error(ErrorCode::InvalidArgument, "the model is quantised already (node '", node.name(), "' is ",
                             node.op_type(), ")");
    return Status::ok();
  }

  void index_names() {
    for (const auto& input : graph_.input()) names_.insert(input.name());
    for (const auto& output : graph_.output()) {
      names_.insert(output.name());
      graph_outputs_.insert(output.name());
    }
    for (const auto& [name, index] : initializer_index_) names_.insert(name);
    for (int i = 0; i < nodes_.size(); ++i) {
      for (const auto& input : nodes_.Get(i).input()) {
        names_.insert(input);
        ++readers_[input];
      }
      for (const auto& output : nodes_.Get(i).output()) {
        names_.insert(output);
        producer_[output] = i;
      }
    }
  }

  /// A name no tensor of the graph has yet, from `base`.
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int n = 1; names_.contains(name); ++n) name = base + "_" + std::to_string(n);
    names_.insert(name);
    return name;
  }

  const TensorProto* initializer(const std::string& name) const {
    auto found = initializer_index_.find(name);
    return found == initializer_index_.end() ? nullptr : &originals_.Get(found->second);
  }

  /// role_of, but a MatMul whose second input is computed multiplies two activations.
  Role role(const NodeProto& node) const {
    const Role role = role_of(node);
    const bool two_activations = node.op_type() == "MatMul" && node.input_size() == 2 && !initializer(node.input(1));
    return role == Role::Weighted && two_activations ? Role::Activations : role;
  }

  /// Whether calibration saw finite values of the tensor.
  bool has_range(const std::string& name) const {
    auto found = statistics_.find(name);
    return found != statistics_.end() && !found->second.empty() && std::isfinite(found->second.min()) &&
           std::isfinite(found->second.max());
  }

  /// An activation input the writer can quantise: computed (not an initializer), and quantised
  /// already or seen by calibration.
  bool quantizable_activation(const std::string& name) const {
    return !name.empty() && !initializer(name) && (quantized_.contains(name) || has_range(name));
  }

  /// A Float32 initializer of `rank` (0: any) dimensions.
  const TensorProto* float_initializer(const std::string& name, int rank) const {
    const TensorProto* t = initializer(name);
    return t && t->data_type() == TensorProto::FLOAT && (rank == 0 || t->dims_size() == rank) ? t : nullptr;
  }

  /// Where a Conv, Gemm or MatMul keeps weights the writer quantises, if it does.
  std::optional<WeightLayout> weight_layout(const NodeProto& node) const {
    if (node.input_size() < 2) return std::nullopt;
    const std::string& op = node.op_type();
    const bool bias = node.input_size() > 2 && !node.input(2).empty();
    if (op == "Conv") {
      const TensorProto* w = initializer(node.input(1));
      if (!w || w->data_type() != TensorProto::FLOAT || w->dims_size() < 3) return std::nullopt;
      if (bias && !float_initializer(node.input(2), 1)) return std::nullopt;
      return WeightLayout{0, bias};
    }
    if (op == "Gemm") {
      if (int_attribute(node, "transA", 0) != 0 || float_attribute(node, "alpha", 1.0f) != 1.0f ||
          (bias && float_attribute(node, "beta", 1.0f) != 1.0f) || !float_initializer(node.input(1), 2))
        return std::nullopt;
      const std::int64_t axis = int_attribute(node, "transB", 0) != 0 ? 0 : 1;
      const TensorProto* c = bias ? float_initializer(node.input(2), 1) : nullptr;
      if (bias && (!c || c->dims(0) != initializer(node.input(1))->dims(static_cast<int>(axis)))) return std::nullopt;
      return WeightLayout{axis, bias};
    }
    if (op == "MatMul" && float_initializer(node.input(1), 2)) return WeightLayout{1, false};
    return std::nullopt;
  }

  /// Whether the node reads and writes int8 in the QDQ model (its inputs' ranges are known or they
  /// are quantised already; its output's range is known).
  bool quantizable(const NodeProto& node, Role role) const {
    if (node.output_size() != 1 || !has_range(node.output(0))) return false;
    if (role == Role::Weighted) return weight_layout(node).has_value() && quantizable_activation(node.input(0));
    if ((role != Role::Activations && role != Role::Removable) || node.input_size() < activation_inputs(node))
      return false;
    for (int i = 0; i < activation_inputs(node); ++i)
      if (!quantizable_activation(node.input(i))) return false;
    return true;
  }

  /// Whether a Direct node's output holds only its input's values, as ONNX Runtime's quantiser
  /// judges it (a Resize from opset 11 on, a Pad that mirrors or repeats the edge or adds 0), and
  /// kiln runs it in int8: a linear or cubic Resize, which ONNX Runtime also quantises, computes new
  /// values, which kiln does in Float32, so quantising around it would only add a rounding.
  bool keeps_values(const NodeProto& node) const {
    const std::string& op = node.op_type();
    if (op == "Resize") return default_opset(model_) >= 11 && string_attribute(node, "mode", "nearest") == "nearest";
    if (op != "Pad") return true;
    if (string_attribute(node, "mode", "constant") != "constant") return true;
    if (default_opset(model_) < 11) return float_attribute(node, "value", 0.0f) == 0.0f;
    if (node.input_size() < 3 || node.input(2).empty()) return true;
    const TensorProto* value = float_initializer(node.input(2), 0);
    if (!value) return false;
    auto constant = detail::read_constant(*value);
    return constant && constant->size() == 1 && constant->float_at(0) == 0.0f;
  }

  /// A Relu or Clip whose input is the only output of a node to be quantised, and read by nothing
  /// else, goes: that node writes the Relu's output, quantised to the range calibrated after the
  /// Relu, whose clamp is the Relu's (ONNX Runtime's quantiser does the same).
  void fold_removable_activations() {
    for (int i = 0; i < nodes_.size(); ++i) {
      const NodeProto& node = nodes_.Get(i);
      if (role_of(node) != Role::Removable || node.input_size() < 1 || node.output_size() != 1) continue;
      const std::string& x = node.input(0);
      auto producer = producer_.find(x);
      if (producer == producer_.end() || readers_[x] != 1 || graph_outputs_.contains(x) || !has_range(node.output(0)))
        continue;
      NodeProto& before = *nodes_.Mutable(producer->second);
      const Role before_role = role(before);
      if (before_role != Role::Weighted && before_role != Role::Activations) continue;
      const std::string y = node.output(0);
      before.set_output(0, y);  // its range is now y's, which quantizable() checks
      if (!quantizable(before, before_role)) {
        before.set_output(0, x);
        continue;
      }
      producer_[y] = producer->second;
      removed_.insert(i);
      ++summary_.removed_activations;
    }
  }

  /// The scale and zero-point initializers of an activation, from its calibrated range.
  TensorQuantization activation_quantization(const std::string& tensor) {
    const auto [rmin, rmax] = statistics_.find(tensor)->second.range(options_);
    const ActivationQuantization q = choose_activation_quantization(rmin, rmax, options_.activations);
    TensorQuantization out{fresh(tensor + "_scale"), fresh(tensor + "_zero_point"), q.scale};
    const std::int64_t none[1] = {};
    added_.push_back(make_tensor(out.scale, TensorProto::FLOAT, std::span(none, 0), &q.scale, sizeof q.scale));
    if (options_.activations == DataType::QAsymmU8) {
      const auto zero = static_cast<std::uint8_t>(q.zero_point);
      added_.push_back(make_tensor(out.zero_point, TensorProto::UINT8, std::span(none, 0), &zero, 1));
    } else {
      const auto zero = static_cast<std::int8_t>(q.zero_point);
      added_.push_back(make_tensor(out.zero_point, TensorProto::INT8, std::span(none, 0), &zero, 1));
    }
    return out;
  }

  /// QuantizeLinear then DequantizeLinear of `from` with `q`, the second writing `to`.
  void add_quantize_dequantize(const std::string& tensor, const std::string& from, const std::string& to,
                               const TensorQuantization& q) {
    const std::string integers = fresh(tensor + "_QuantizeLinear_Output");
    out_.push_back(make_node("QuantizeLinear", tensor, {from, q.scale, q.zero_point}, integers));
    out_.push_back(make_node("DequantizeLinear", tensor, {integers, q.scale, q.zero_point}, to));
    quantized_[tensor] = q;
    ++summary_.quantized_tensors;
  }

  /// Makes a graph input or a Float32 node's output quantised before the node about to be written
  /// reads it; its readers from here on read the dequantised copy.
  const TensorQuantization& quantize_input(const std::string& tensor) {
    if (auto found = quantized_.find(tensor); found != quantized_.end()) return found->second;
    const std::string dequantized = fresh(tensor + "_DequantizeLinear_Output");
    add_quantize_dequantize(tensor, tensor, dequantized, activation_quantization(tensor));
    reader_name_[tensor] = dequantized;
    return quantized_[tensor];
  }

  /// Writes `node`, whose output 0 is quantised with `q`: a graph output keeps its name on the
  /// DequantizeLinear; any other output's readers read the dequantised copy.
  void add_with_quantized_output(NodeProto node, const TensorQuantization& q) {
    const std::string y = node.output(0);
    if (graph_outputs_.contains(y)) {
      node.set_output(0, fresh(y + "_QuantizeLinear_Input"));
      const std::string computed = node.output(0);
      out_.push_back(std::move(node));
      add_quantize_dequantize(y, computed, y, q);
    } else {
      out_.push_back(std::move(node));
      const std::string dequantized = fresh(y + "_DequantizeLinear_Output");
      add_quantize_dequantize(y, y, dequantized, q);
      reader_name_[y] = dequantized;
    }
    ++summary_.quantized_nodes;
  }

  void read_dequantized_inputs(NodeProto& node) const {
    for (int i = 0; i < node.input_size(); ++i)
      if (auto found = reader_name_.find(node.input(i)); found != reader_name_.end()) node.set_input(i, found->second);
  }

  /// The values of Float32 initializer `name`, or an error when one is not finite (it has no integer).
  Expected<detail::ConstValue> finite_values(const std::string& name) const {
    auto value = detail::read_constant(*initializer(name));
    if (!value) return value.status();
    if (!std::ranges::all_of(value->floats, [](float v) { return std::isfinite(v); }))
      return Status::error(ErrorCode::InvalidArgument, "initializer '", name,
                           "' holds an infinity or NaN, which no integer represents");
    return value;
  }

  /// The int8 weights of initializer `name` (per channel along `axis`, or per tensor), quantised
  /// symmetrically as ONNX Runtime does: scale = max |w| / 127 (computed in double, stored as
  /// float), q = round half to even of the float quotient w / scale. Made once per initializer.
  Expected<QuantizedWeights> quantize_weights(const std::string& name, std::int64_t axis) {
    const std::string key = name + "@" + std::to_string(options_.per_channel ? axis : -1);
    if (auto found = weights_.find(key); found != weights_.end()) return found->second;
    auto value = finite_values(name);
    if (!value) return value.status();
    const std::vector<std::int64_t>& dims = value->dims;
    std::size_t channels = 1, inner = 1;
    if (options_.per_channel) {
      channels = static_cast<std::size_t>(dims[static_cast<std::size_t>(axis)]);
      for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < dims.size(); ++d)
        inner *= static_cast<std::size_t>(dims[d]);
    }
    auto channel_of = [&](std::size_t i) { return (i / inner) % channels; };
    std::vector<float> absmax(channels, 0.0f);
    for (std::size_t i = 0; i < value->floats.size(); ++i)
      absmax[channel_of(i)] = std::max(absmax[channel_of(i)], std::abs(value->floats[i]));
    QuantizedWeights out;
    for (float a : absmax) {
      const double scale = 2.0 * double{a} / 254.0;
      out.scales.push_back(scale < std::numeric_limits<float>::min() ? 1.0f : static_cast<float>(scale));
    }
    std::vector<std::int8_t> integers(value->floats.size());
    for (std::size_t i = 0; i < integers.size(); ++i) {
      const float quotient = value->floats[i] / out.scales[channel_of(i)];
      integers[i] = static_cast<std::int8_t>(std::clamp(std::nearbyint(quotient), -128.0f, 127.0f));
    }
    const std::vector<std::int8_t> zeros(channels, 0);
    const std::int64_t scale_dims[1] = {static_cast<std::int64_t>(channels)};
    const std::span<const std::int64_t> per_channel_dims(scale_dims, options_.per_channel ? 1 : 0);
    const std::string integers_name = fresh(name + "_quantized"), scale = fresh(name + "_scale"),
                      zero_point = fresh(name + "_zero_point");
    added_.push_back(make_tensor(integers_name, TensorProto::INT8, dims, integers.data(), integers.size()));
    added_.push_back(make_tensor(scale, TensorProto::FLOAT, per_channel_dims, out.scales.data(), channels * 4));
    added_.push_back(make_tensor(zero_point, TensorProto::INT8, per_channel_dims, zeros.data(), channels));
    out.dequantized = fresh(name + "_DequantizeLinear_Output");
    out_.push_back(make_node("DequantizeLinear", name, {integers_name, scale, zero_point}, out.dequantized,
                             options_.per_channel ? std::optional(axis) : std::nullopt));
    ++summary_.quantized_weights;
    return weights_[key] = out;
  }

  /// The Signed32 bias of initializer `name` with scale input scale x weight scale (float
  /// products), q = round half to even of the double quotient, saturated, as ONNX Runtime does.
  /// Made per node: the input scale is the node's.
  Expected<std::string> quantize_bias(const std::string& name, float input_scale,
                                      std::span<const float> weight_scales) {
    auto value = finite_values(name);
    if (!value) return value.status();
    std::vector<float> scales;
    for (float w : weight_scales) scales.push_back(input_scale * w);
    std::vector<std::int32_t> integers(value->floats.size());
    for (std::size_t i = 0; i < integers.size(); ++i) {
      const double quotient = std::nearbyint(double{value->floats[i]} / double{scales[scales.size() == 1 ? 0 : i]});
      integers[i] = static_cast<std::int32_t>(std::clamp(quotient, double{std::numeric_limits<std::int32_t>::min()},
                                                         double{std::numeric_limits<std::int32_t>::max()}));
    }
    const std::vector<std::int32_t> zeros(scales.size(), 0);
    const std::int64_t scale_dims[1] = {static_cast<std::int64_t>(scales.size())};
    const bool per_channel = options_.per_channel;
    const std::span<const std::int64_t> dims(scale_dims, per_channel ? 1 : 0);
    const std::string integers_name = fresh(name + "_quantized"), scale = fresh(name + "_quantized_scale"),
                      zero_point = fresh(name + "_quantized_zero_point");
    added_.push_back(make_tensor(integers_name, TensorProto::INT32, value->dims, integers.data(), integers.size() * 4));
    added_.push_back(make_tensor(scale, TensorProto::FLOAT, dims, scales.data(), scales.size() * 4));
    added_.push_back(make_tensor(zero_point, TensorProto::INT32, dims, zeros.data(), zeros.size() * 4));
    // A bias only this node reads keeps its name, now on the DequantizeLinear (as ONNX Runtime writes it).
    const bool own = readers_[name] == 1 && !graph_outputs_.contains(name);
    const std::string dequantized = own ? name : fresh(name + "_DequantizeLinear_Output");
    if (own) replaced_.insert(name);
    out_.push_back(make_node("DequantizeLinear", name, {integers_name, scale, zero_point}, dequantized,
                             per_channel ? std::optional<std::int64_t>(0) : std::nullopt));
    ++summary_.quantized_weights;
    return dequantized;
  }

  Status rewrite(NodeProto& node) {
    const Role role = this->role(node);
    if (role != Role::Float && role != Role::Direct && quantizable(node, role)) {
      std::vector<const TensorQuantization*> inputs;
      for (int i = 0; i < (role == Role::Weighted ? 1 : activation_inputs(node)); ++i)
        inputs.push_back(&quantize_input(node.input(i)));
      read_dequantized_inputs(node);
      if (role == Role::Weighted) {
        const WeightLayout layout = *weight_layout(node);
        auto weights = quantize_weights(node.input(1), layout.axis);
        if (!weights) return weights.status();
        node.set_input(1, weights->dequantized);
        if (layout.has_bias) {
          auto bias = quantize_bias(node.input(2), inputs[0]->scale_value, weights->scales);
          if (!bias) return bias.status();
          node.set_input(2, *bias);
        }
      }
      const TensorQuantization q = activation_quantization(node.output(0));
      add_with_quantized_output(std::move(node), q);
      return Status::ok();
    }
    const bool passes_on = role == Role::Direct && node.input_size() >= 1 && node.output_size() == 1 &&
                           quantized_.contains(node.input(0)) && keeps_values(node);
    if (passes_on) {
      const TensorQuantization q = quantized_.at(node.input(0));
      read_dequantized_inputs(node);
      add_with_quantized_output(std::move(node), q);
      return Status::ok();
    }
    float_ops_.insert(node.op_type());
    read_dequantized_inputs(node);
    out_.push_back(std::move(node));
    return Status::ok();
  }

  /// The new nodes and initializers; the Float32 initializers no node reads any more go, with their
  /// entries in the input list (models before IR 4 list initializers as inputs).
  void finish_graph() {
    std::set<std::string> read;
    for (const auto& node : out_)
      for (const auto& input : node.input()) read.insert(input);
    for (const auto& output : graph_.output()) read.insert(output.name());
    std::set<std::string> dropped;
    for (auto& tensor : originals_) {
      if (read.contains(tensor.name()) && !replaced_.contains(tensor.name()))
        graph_.mutable_initializer()->Add(std::move(tensor));
      else
        dropped.insert(tensor.name());
    }
    for (auto& tensor : added_) graph_.mutable_initializer()->Add(std::move(tensor));
    auto* inputs = graph_.mutable_input();
    for (int i = inputs->size(); i-- > 0;)
      if (dropped.contains(inputs->Get(i).name())) inputs->DeleteSubrange(i, 1);
    for (auto& node : out_) graph_.mutable_node()->Add(std::move(node));
    // Shapes recorded for the tensors the rewrite renamed or removed would be stale: readers infer them.
    graph_.clear_value_info();
    model_.set_producer_name("kiln quantize");
    model_.clear_producer_version();
  }

  ModelProto& model_;
  ::onnx::GraphProto& graph_;
  const CalibrationStatistics& statistics_;
  const QuantizeOptions& options_;

  google::protobuf::RepeatedPtrField<TensorProto> originals_;
  google::protobuf::RepeatedPtrField<NodeProto> nodes_;
  std::unordered_map<std::string, int> initializer_index_;
  std::set<std::string> names_, graph_outputs_;
  std::unordered_map<std::string, int> readers_, producer_;
  std::set<int> removed_;
  std::set<std::string> replaced_;  ///< Float32 initializers whose name a DequantizeLinear output took

  std::vector<NodeProto> out_;
  std::vector<TensorProto> added_;
  std::unordered_map<std::string, TensorQuantization> quantized_;
  std::unordered_map<std::string, std::string> reader_name_;  ///< a quantised tensor -> its dequantised copy
  std::unordered_map<std::string, QuantizedWeights> weights_;
  std::set<std::string> float_ops_;
  QuantizeSummary summary_;
};

}  // namespace

ActivationQuantization choose_activation_quantization(float rmin, float rmax, DataType type) {
  const double qmin = type == DataType::QAsymmS8 ? -128.0 : 0.0;
  const double low = std::min(rmin, 0.0f), high = std::max(rmax, 0.0f);
  const double scale = (high - low) / 255.0;
  if (!(scale >= double{std::numeric_limits<float>::min()}) || !std::isfinite(scale)) return {};
  return {static_cast<float>(scale), static_cast<std::int32_t>(std::nearbyint(qmin - low / scale))};
}

Expected<CalibrationModel> calibration_model(std::span<const std::byte> bytes) {
  auto model = parse(bytes);
  if (!model) return model.status();
  auto& graph = *model->mutable_graph();
  std::set<std::string> constants, seen;
  for (const auto& tensor : graph.initializer()) constants.insert(tensor.name());
  std::vector<std::string> observed;
  auto observe = [&](const std::string& name) {
    if (!name.empty() && !constants.contains(name) && seen.insert(name).second) observed.push_back(name);
  };
  for (const auto& input : graph.input()) observe(input.name());
  for (const auto& node : graph.node()) {
    const Role role = role_of(node);
    if (role == Role::Float) continue;
    for (int i = 0; i < std::min(activation_inputs(node), node.input_size()); ++i) observe(node.input(i));
    if (node.output_size() > 0) observe(node.output(0));
  }
  graph.clear_output();
  for (const auto& name : observed) graph.add_output()->set_name(name);
  auto serialized = serialize(*model);
  if (!serialized) return serialized.status();
  return CalibrationModel{std::move(*serialized)};
}

Expected<QuantizedModel> write_qdq_model(std::span<const std::byte> bytes, const CalibrationStatistics& statistics,
                                         const QuantizeOptions& options) {
  auto model = parse(bytes);
  if (!model) return model.status();
  auto summary = QdqWriter(*model, statistics, options).write();
  if (!summary) return summary.status();
  auto serialized = serialize(*model);
  if (!serialized) return serialized.status();
  return QuantizedModel{std::move(*serialized), std::move(*summary), 0};
}

}  // namespace kiln::onnx
