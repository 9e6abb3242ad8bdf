// SPDX-License-Identifier: Apache-2.0
// ONNX Runtime's QOperator format: QLinearConv and QLinearMatMul (ONNX), and com.microsoft's
// QGemm, QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat,
// QLinearSigmoid, QLinearLeakyRelu and QLinearSoftmax. Each is, by its definition, its float op between
// DequantizeLinear and QuantizeLinear; it is converted as those nodes (Importer::convert_as), so
// that a QOperator model and the QDQ model of the same quantisation make the same network, which
// the optimizer fuses into int8 layers (decision 0017). Dynamic quantisation's ops likewise:
// DynamicQuantizeLinear as its function body, ConvInteger and MatMulInteger as Conv and MatMul of
// their operands cast to int32 and centred on their zero points (Signed32 layers, exact).
#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

/// Builds the nodes of one expansion: the current node's inputs by position, intermediate values
/// by role (Importer::expansion_name).
class Expansion {
 public:
  explicit Expansion(Importer& im) : im_(im) {}

  /// Input `i` of the node being expanded ("" when absent).
  std::string input(std::size_t i) const {
    return im_.has_input(i) ? im_.node().input(static_cast<int>(i)) : std::string();
  }
  /// A node `op` reading `inputs` whose output is the value of role `role`; returns that name.
  std::string add(std::string_view op, std::string_view role, std::vector<std::string> inputs) {
    return add_node(op, role, std::move(inputs), im_.expansion_name(role)).output(0);
  }
  /// The last node: `op` reading `inputs`, defining the expanded node's output 0.
  ::onnx::NodeProto& finish(std::string_view op, std::string_view role, std::vector<std::string> inputs) {
    return add_node(op, role, std::move(inputs), im_.node().output(0));
  }
  /// DequantizeLinear of input `i` with the scale and zero point at the two inputs after it.
  std::string dequantized(std::size_t i, std::string_view role, std::optional<std::int64_t> axis = {}) {
    return dequantized(input(i), input(i + 1), input(i + 2), role, axis);
  }
  std::string dequantized(std::string x, std::string scale, std::string zero_point, std::string_view role,
                          std::optional<std::int64_t> axis = {}) {
    const std::string name = add("DequantizeLinear", role, {std::move(x), std::move(scale), std::move(zero_point)});
    if (axis) set_int(nodes_.back(), "axis", *axis);
    return name;
  }
  /// The float op `op` (the expanded node's attributes are its own), reading `inputs`; returns its
  /// output, or with `last` defines the expanded node's output (QGemm without y_scale).
  std::string float_op(std::string_view op, std::vector<std::string> inputs, bool last = false) {
    ::onnx::NodeProto& node = add_node(op, op, std::move(inputs), last ? im_.node().output(0) : im_.expansion_name(op));
    for (const auto& a : im_.node().attribute())
      if (a.name() != "channels_last") *node.add_attribute() = a;  // checked 0 by the converter
    return node.output(0);
  }
  /// The float op `op` reading `inputs`, quantised by the scale and zero point at inputs `scale`,
  /// `scale` + 1 into the expanded node's output; then converts the whole expansion.
  Status quantize_into_output(std::string_view op, std::vector<std::string> inputs, std::size_t scale) {
    finish("QuantizeLinear", "quantize", {float_op(op, std::move(inputs)), input(scale), input(scale + 1)});
    return run();
  }
  /// A node `op` reading `inputs` whose output is the expanded node's output `i` when the node
  /// names one, else an intermediate value of role `role`; returns that name.
  std::string add_output(std::string_view op, std::string_view role, std::vector<std::string> inputs, std::size_t i) {
    const std::string name = im_.is_output(i) ? im_.node().output(static_cast<int>(i)) : im_.expansion_name(role);
    return add_node(op, role, std::move(inputs), name).output(0);
  }
  /// A constant of role `role` for the expansion's nodes to read; returns its name.
  std::string constant(std::string_view role, ConstValue value) {
    std::string name = im_.expansion_name(role);
    im_.define_named_constant(name, std::move(value));
    return name;
  }
  /// Cast of `x` to the ONNX element type `to`.
  std::string cast(std::string x, std::string_view role, std::int32_t to) {
    const std::string name = add("Cast", role, {std::move(x)});
    set_int(last(), "to", to);
    return name;
  }
  ::onnx::NodeProto& last() { return nodes_.back(); }
  Status run() { return im_.convert_as(nodes_); }
  /// Gives the last node added attribute `name` = `value` unless the expanded node states one.
  void default_int(std::string_view name, std::int64_t value) {
    if (!im_.attr_int(name)) set_int(nodes_.back(), name, value);
  }

  static void set_int(::onnx::NodeProto& node, std::string_view name, std::int64_t value) {
    auto* a = node.add_attribute();
    a->set_name(std::string(name));
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(value);
  }

 private:
  ::onnx::NodeProto& add_node(std::string_view op, std::string_view role, std::vector<std::string> inputs,
                              std::string output) {
    ::onnx::NodeProto& node = nodes_.emplace_back();
    node.set_name(im_.expansion_name(role));
    node.set_op_type(std::string(op));
    for (auto& name : inputs) node.add_input(std::move(name));
    while (node.input_size() > 0 && node.input(node.input_size() - 1).empty()) node.mutable_input()->RemoveLast();
    node.add_output(std::move(output));
    return node;
  }

  Importer& im_;
  std::vector<::onnx::NodeProto> nodes_;
};

/// The int32 bias of a quantised layer as a DequantizeLinear at scale input scale x weight scale (per
/// weight scale, computed in float as ONNX Runtime's quantiser does), as the QDQ format writes it.
Expected<std::string> dequantized_bias(Importer& im, Expansion& e, std::size_t bias, std::size_t input_scale,
                                       std::size_t weight_scale) {
  KILN_ONNX_TRY(x_scale, im.constant_input(input_scale, "input scale"));
  KILN_ONNX_TRY(w_scale, im.constant_input(weight_scale, "weight scale"));
  if (x_scale->size() != 1) return im.invalid("the input scale has ", x_scale->size(), " elements, not 1");
  ConstValue scale;
  scale.dims = {static_cast<std::int64_t>(w_scale->size())};
  for (std::size_t c = 0; c < w_scale->size(); ++c) scale.floats.push_back(x_scale->float_at(0) * w_scale->float_at(c));
  const std::string scale_name = im.expansion_name("bias_scale");
  im.define_named_constant(scale_name, std::move(scale));
  return e.dequantized(e.input(bias), scale_name, "", "bias", 0);
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B)
Status qlinear_conv(Importer& im) {
  Expansion e(im);
  std::vector<std::string> conv{e.dequantized(0, "x"), e.dequantized(3, "w", 0)};
  if (im.has_input(8)) {
    KILN_ONNX_TRY(bias, dequantized_bias(im, e, 8, 1, 4));
    conv.push_back(bias);
  }
  return e.quantize_into_output("Conv", conv, 6);
}

// QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point); b's
// scale may be per column.
Status qlinear_matmul(Importer& im) {
  Expansion e(im);
  return e.quantize_into_output("MatMul", {e.dequantized(0, "a"), e.dequantized(3, "b", -1)}, 6);
}

// com.microsoft.QGemm(A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point):
// Gemm with beta 1 of int32 C; without y_scale the output is Float32.
Status qgemm(Importer& im) {
  Expansion e(im);
  const bool trans_b = im.attr_int("transB", 0) != 0;
  std::vector<std::string> gemm{e.dequantized(0, "a"), e.dequantized(3, "b", trans_b ? 0 : 1)};
  if (im.has_input(6)) {
    KILN_ONNX_TRY(bias, dequantized_bias(im, e, 6, 1, 4));
    gemm.push_back(bias);
  }
  if (im.has_input(7)) return e.quantize_into_output("Gemm", gemm, 7);
  e.float_op("Gemm", gemm, true);
  return e.run();
}

// com.microsoft.QLinearAdd / QLinearMul(A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point)
template <char const* Op>
Status qlinear_binary(Importer& im) {
  Expansion e(im);
  return e.quantize_into_output(Op, {e.dequantized(0, "a"), e.dequantized(3, "b")}, 6);
}
constexpr char add_op[] = "Add", mul_op[] = "Mul";

// com.microsoft's QLinear ops of one input: (X, X_scale, X_zero_point, Y_scale, Y_zero_point).
template <char const* Op>
Status qlinear_unary(Importer& im) {
  if (im.attr_int("channels_last", 0) != 0) return im.error("channels_last 1 (an NHWC input)");
  Expansion e(im);
  return e.quantize_into_output(Op, {e.dequantized(0, "x")}, 3);
}
constexpr char global_average_pool_op[] = "GlobalAveragePool", average_pool_op[] = "AveragePool",
               sigmoid_op[] = "Sigmoid", leaky_relu_op[] = "LeakyRelu";

// com.microsoft.QLinearSoftmax(X, X_scale, X_zero_point, Y_scale, Y_zero_point): axis -1 unless
// stated; `opset` names the Softmax whose meaning it has, which changed at opset 13.
Status qlinear_softmax(Importer& im) {
  const std::int64_t opset = im.attr_int("opset", im.opset());
  if ((opset < 13) != (im.opset() < 13))
    return im.error("opset ", opset, "'s Softmax in a model of opset ", im.opset(),
                    " (Softmax changed meaning at opset 13; re-export the model at one opset)");
  Expansion e(im);
  const std::string softmax = e.float_op("Softmax", {e.dequantized(0, "x")});
  e.default_int("axis", -1);
  e.finish("QuantizeLinear", "quantize", {softmax, e.input(3), e.input(4)});
  return e.run();
}

// com.microsoft.QLinearConcat(Y_scale, Y_zero_point, X1, X1_scale, X1_zero_point, X2, ...)
Status qlinear_concat(Importer& im) {
  const std::size_t n = im.num_inputs();
  if (n < 5 || (n - 2) % 3 != 0) return im.invalid(n, " inputs; QLinearConcat takes 2 + 3 per input");
  Expansion e(im);
  std::vector<std::string> parts;
  for (std::size_t i = 2; i < n; i += 3) parts.push_back(e.dequantized(i, kiln::detail::str_cat("x", (i - 2) / 3)));
  e.finish("QuantizeLinear", "quantize", {e.float_op("Concat", parts), e.input(0), e.input(1)});
  return e.run();
}

// DynamicQuantizeLinear(x) -> y, y_scale, y_zero_point: uint8 over x's range widened to hold 0, as
// ONNX's function body computes it, but for a range of 0 (x all zeros), which ONNX's reference
// takes as 1 rather than dividing by it.
Status dynamic_quantize_linear(Importer& im) {
  Expansion e(im);
  auto scalar = [&](std::string_view role, float v) { return e.constant(role, ConstValue{{}, true, false, {v}, {}}); };
  const std::string zero = scalar("zero", 0.0f), one = scalar("one", 1.0f), top = scalar("q_max", 255.0f);
  const std::string x = e.input(0);
  const std::string x_min = e.add("ReduceMin", "x_min", {x});
  Expansion::set_int(e.last(), "keepdims", 0);
  const std::string x_max = e.add("ReduceMax", "x_max", {x});
  Expansion::set_int(e.last(), "keepdims", 0);
  const std::string low = e.add("Min", "low", {x_min, zero});
  const std::string range = e.add("Sub", "range", {e.add("Max", "high", {x_max, zero}), low});
  const std::string empty = e.add("Equal", "empty", {range, zero});
  const std::string scale = e.add_output("Div", "scale", {e.add("Where", "range_or_one", {empty, one, range}), top}, 1);
  const std::string shift = e.add("Sub", "shift", {zero, e.add("Div", "low_scaled", {low, scale})});
  const std::string rounded = e.add("Round", "shift_rounded", {e.add("Clip", "shift_clipped", {shift, zero, top})});
  const std::string zero_point = e.add_output("Cast", "zero_point", {rounded}, 2);
  Expansion::set_int(e.last(), "to", ::onnx::TensorProto::UINT8);
  e.finish("QuantizeLinear", "quantize", {x, scale, zero_point});
  return e.run();
}

// Input `i` of the node (8-bit integers), less its zero point at input `i` + 2 when given, as int32;
// a zero point that is a vector of several elements (one per row, or per output channel) is first
// shaped to `zero_point_dims` when given, so that it broadcasts along that axis (one per column,
// and a zero point of the input's rank, broadcast as they are).
std::string centred(Importer& im, Expansion& e, std::size_t i, std::string_view role,
                    std::vector<std::int64_t> zero_point_dims) {
  const std::string integers = e.cast(e.input(i), role, ::onnx::TensorProto::INT32);
  if (!im.has_input(i + 2)) return integers;
  std::string zero_point =
      e.cast(e.input(i + 2), kiln::detail::str_cat(role, "_zero_point"), ::onnx::TensorProto::INT32);
  auto given = im.input(i + 2);
  if (given && (*given)->dims.size() == 1 && (*given)->dims[0] > 1 && !zero_point_dims.empty()) {
    ConstValue shape{{static_cast<std::int64_t>(zero_point_dims.size())}, false, false, {}, zero_point_dims};
    zero_point = e.add("Reshape", kiln::detail::str_cat(role, "_zero_point_shaped"),
                       {zero_point, e.constant(kiln::detail::str_cat(role, "_zero_point_shape"), std::move(shape))});
  }
  return e.add("Sub", kiln::detail::str_cat(role, "_centred"), {integers, zero_point});
}

// ConvInteger(x, w, x_zero_point, w_zero_point) -> int32: Conv of (x - x_zero_point) and
// (w - w_zero_point), the latter per output channel when it has one value each.
Status conv_integer(Importer& im) {
  KILN_ONNX_TRY(w, im.input(1));
  if (im.has_input(2)) {
    KILN_ONNX_TRY(x_zero_point, im.input(2));
    if (element_count(x_zero_point->dims) != 1)
      return im.invalid("x_zero_point has ", element_count(x_zero_point->dims), " elements; ONNX takes one");
  }
  std::vector<std::int64_t> per_channel(w->dims.size(), 1);
  if (!per_channel.empty()) per_channel[0] = w->dims[0];
  Expansion e(im);
  e.float_op("Conv", {centred(im, e, 0, "x", {}), centred(im, e, 1, "w", per_channel)}, true);
  return e.run();
}

// MatMulInteger(A, B, a_zero_point, b_zero_point) -> int32: MatMul of (A - a_zero_point) and
// (B - b_zero_point), the former per row and the latter per column when they have one value each,
// as ONNX's text says (ONNX Runtime takes one zero point for A; ONNX's reference implementation
// broadcasts a vector along A's columns instead).
Status matmul_integer(Importer& im) {
  KILN_ONNX_TRY(a, im.input(0));
  if (a->dims.empty()) return im.invalid("MatMulInteger of a scalar");
  std::vector<std::int64_t> per_row;
  if (a->dims.size() >= 2) per_row = {a->dims[a->dims.size() - 2], 1};
  Expansion e(im);
  e.float_op("MatMul", {centred(im, e, 0, "a", per_row), centred(im, e, 1, "b", {})}, true);
  return e.run();
}

constexpr ConverterEntry qoperator_ops[] = {
    {"ConvInteger", conv_integer},
    {"DynamicQuantizeLinear", dynamic_quantize_linear},
    {"MatMulInteger", matmul_integer},
    {"QLinearConv", qlinear_conv},
    {"QLinearMatMul", qlinear_matmul},
    {"com.microsoft.QGemm", qgemm},
    {"com.microsoft.QLinearAdd", qlinear_binary<add_op>},
    {"com.microsoft.QLinearAveragePool", qlinear_unary<average_pool_op>},
    {"com.microsoft.QLinearConcat", qlinear_concat},
    {"com.microsoft.QLinearGlobalAveragePool", qlinear_unary<global_average_pool_op>},
    {"com.microsoft.QLinearLeakyRelu", qlinear_unary<leaky_relu_op>},
    {"com.microsoft.QLinearMul", qlinear_binary<mul_op>},
    {"com.microsoft.QLinearSigmoid", qlinear_unary<sigmoid_op>},
    {"com.microsoft.QLinearSoftmax", qlinear_softmax},
};

}  // namespace

std::span<const ConverterEntry> qoperator_converters() { return qoperator_ops; }

}  // namespace kiln::onnx::detail
