// SPDX-License-Identifier: Apache-2.0
// ONNX QuantizeLinear and DequantizeLinear as explicit conversions (docs/decisions/0014). A
// DequantizeLinear of a constant (quantised weights, an int32 bias) is folded into a Float32
// constant at import, so that the float layers reading it pack it at load as they do any weights.
#include <algorithm>

#include "importer.hpp"
#include "kiln/core/requantization.hpp"

namespace kiln::onnx::detail {
namespace {

/// A node's quantisation of its quantised tensor (the output of QuantizeLinear, the input of
/// DequantizeLinear), from its scale and zero-point inputs; `axis` is the ONNX axis when per axis.
struct NodeQuantization {
  DataType type = DataType::QAsymmU8;
  QuantizationInfo info;  ///< its offset is zero_points[0]
  std::optional<std::size_t> axis;
  std::vector<std::int64_t> zero_points;  ///< one per scale: a folded constant may have several

  bool has_one_zero_point() const {
    return std::ranges::all_of(zero_points, [&](std::int64_t z) { return z == zero_points[0]; });
  }
  Status require_one_zero_point(const Importer& im) const {
    if (!has_one_zero_point())
      return im.error("zero points that differ along the axis (a kiln tensor holds one zero point)");
    return Status::ok();
  }
};

/// The kiln type of the ONNX element type of a quantised tensor.
Expected<DataType> quantized_type(const Importer& im, std::int32_t onnx_type, bool signed32_allowed) {
  if (const auto eight_bit = eight_bit_type(onnx_type)) return *eight_bit;
  if (signed32_allowed && onnx_type == ::onnx::TensorProto::INT32) return DataType::Signed32;
  return im.error("quantised type ", onnx_type_name(onnx_type), " is not supported (kiln quantises to ",
                  "uint8 and int8", signed32_allowed ? ", and dequantizes int32" : "", ")");
}

/// Reads inputs 1 (scale) and 2 (zero point, optional) for a quantised tensor of `dims` whose ONNX
/// element type is `onnx_type` when the node has no zero point.
Expected<NodeQuantization> read_quantization(Importer& im, std::span<const std::int64_t> dims, std::int32_t onnx_type,
                                             bool signed32_allowed) {
  if (im.attr_int("block_size", 0) != 0) return im.error("blocked quantisation (block_size)");
  KILN_ONNX_TRY(scale, im.constant_input(1, "scale"));
  std::vector<std::int64_t> zero_points(scale->size(), 0);
  if (im.has_input(2)) {
    KILN_ONNX_TRY(zero, im.constant_input(2, "zero point"));
    if (zero->size() != scale->size())
      return im.invalid("zero point has ", zero->size(), " elements and scale ", scale->size());
    if (zero->onnx_type != 0) onnx_type = zero->onnx_type;
    for (std::size_t i = 0; i < zero->size(); ++i) zero_points[i] = zero->int_at(i);
  }
  NodeQuantization q;
  KILN_ONNX_TRY(type, quantized_type(im, onnx_type, signed32_allowed));
  q.type = type;
  if (zero_points.empty()) return im.invalid("scale is empty");
  for (std::int64_t z : zero_points)
    if (z < -128 || z > 255) return im.invalid("zero point ", z, " is out of range");
  q.info.offset = static_cast<std::int32_t>(zero_points[0]);
  q.zero_points = std::move(zero_points);
  for (std::size_t i = 0; i < scale->size(); ++i) q.info.scales.push_back(scale->float_at(i));
  if (scale->size() > 1) {
    const auto rank = static_cast<std::int64_t>(dims.size());
    std::int64_t axis = im.attr_int("axis", 1);
    if (axis < -rank || axis >= rank) return im.invalid("axis ", axis, " is out of range for rank ", rank);
    if (axis < 0) axis += rank;
    q.axis = static_cast<std::size_t>(axis);
    if (static_cast<std::int64_t>(scale->size()) != dims[*q.axis])
      return im.invalid(scale->size(), " scales for axis ", axis, " of length ", dims[*q.axis]);
  }
  return q;
}

/// The quantisation as kiln holds it for a tensor in `layout`: the axis moved with the layout.
QuantizationInfo in_layout(const NodeQuantization& q, Layout layout, std::size_t rank) {
  QuantizationInfo info = q.info;
  if (q.axis)
    info.axis = static_cast<std::uint32_t>(layout == Layout::Plain ? *q.axis : channels_last_axis(*q.axis, rank));
  return info;
}

}  // namespace

Expected<OutputSlot> integers_as(Importer& im, Value& x, Layout layout, QuantizationInfo quantization) {
  const std::size_t rank = x.dims.size();
  KILN_ONNX_TRY(input, im.tensor(x, layout, rank));
  if (im.info(input).quantization == quantization) return input;
  // The same bytes, declared anew.
  std::vector<std::int64_t> same_shape;
  for (std::size_t d = 0; d < rank; ++d) same_shape.push_back(im.info(input).shape[d]);
  return im.add<ops::Reshape>({same_shape}, {input}, "reread", ops::OutputType{x.type, std::move(quantization)});
}

Expected<OutputSlot> integer_values(Importer& im, Value& x, Layout layout) {
  KILN_ONNX_TRY(integers, integers_as(im, x, layout, raw_integers()));
  return im.add<ops::Dequantize>({}, {integers}, "values");
}

namespace {

// QuantizeLinear by one scale that the network computes (DynamicQuantizeLinear's): a kiln tensor's
// quantisation is fixed at load, so the output holds the integers themselves (raw_integers()),
// computed by the definition in Float32: round(x / scale) + zero point, exact, then Quantize at
// scale 1, which saturates to the type's range.
Status quantize_by_computed_scale(Importer& im, Value& x, Value& scale, std::int32_t default_type) {
  if (scale.type != DataType::Float32) return im.invalid("scale is a ", to_string(scale.type), " tensor");
  const Layout layout = Importer::preferred_layout(x);
  const std::size_t rank = x.dims.size();
  KILN_ONNX_TRY(input, im.tensor(x, layout, rank));
  KILN_ONNX_TRY(divisor, im.tensor(scale, layout, rank));
  KILN_ONNX_TRY(scaled, im.add<ops::ElementwiseBinary>({ops::BinaryOperation::Div}, {input, divisor}, "scaled"));
  KILN_ONNX_TRY(rounded, im.add<ops::ElementwiseUnary>({ops::UnaryOperation::Round}, {scaled}, "rounded"));
  OutputSlot integers = rounded;
  KILN_ONNX_TRY(type, quantized_type(im, default_type, false));
  if (im.has_input(2)) {
    KILN_ONNX_TRY(zero, im.input(2));
    if (element_count(zero->dims) != 1)
      return im.invalid("zero point has ", element_count(zero->dims), " elements, not 1");
    OutputSlot zero_value;
    if (zero->constant) {
      if (zero->constant->onnx_type != 0) {
        KILN_ONNX_TRY(stated, quantized_type(im, zero->constant->onnx_type, false));
        type = stated;
      }
      zero_value = im.add_constant(ConstValue{{}, true, false, {zero->constant->float_at(0)}, {}}, DataType::Float32,
                                   "zero_point");
    } else {
      if (!is_quantized(zero->type)) return im.invalid("zero point is a ", to_string(zero->type), " tensor");
      type = zero->type;
      KILN_ONNX_TRY(value, integer_values(im, *zero, Layout::Plain));
      zero_value = value;
    }
    KILN_ONNX_TRY(shifted,
                  im.add<ops::ElementwiseBinary>({ops::BinaryOperation::Add}, {rounded, zero_value}, "shifted"));
    integers = shifted;
  }
  KILN_ONNX_TRY(y, im.add<ops::Quantize>({}, {integers}, {}, ops::OutputType{type, raw_integers()}));
  im.define(0, y, layout);
  return Status::ok();
}

Status quantize_linear(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  if (x->type != DataType::Float32) return im.error("input is ", to_string(x->type), "; kiln quantizes Float32");
  const auto default_type = static_cast<std::int32_t>(im.attr_int("output_dtype", ::onnx::TensorProto::UINT8));
  KILN_ONNX_TRY(scale, im.input(1));
  if (!scale->constant && element_count(scale->dims) == 1 && im.attr_int("block_size", 0) == 0)
    return quantize_by_computed_scale(im, *x, *scale, default_type);
  KILN_ONNX_TRY(q, read_quantization(im, x->dims, default_type, false));
  if (auto s = q.require_one_zero_point(im); !s) return s;
  const Layout layout = Importer::preferred_layout(*x);
  KILN_ONNX_TRY(input, im.tensor(*x, layout, x->dims.size()));
  KILN_ONNX_TRY(y,
                im.add<ops::Quantize>({}, {input}, {}, ops::OutputType{q.type, in_layout(q, layout, x->dims.size())}));
  im.define(0, y, layout);
  return Status::ok();
}

/// (q - zero point) x scale of every element of a constant, as RefBackend's Dequantize computes it.
ConstValue dequantized(const ConstValue& x, const NodeQuantization& q) {
  ConstValue out;
  out.dims = x.dims;
  out.floats.reserve(x.size());
  std::size_t inner = 1, length = 1;
  if (q.axis) {
    length = static_cast<std::size_t>(x.dims[*q.axis]);
    for (std::size_t d = *q.axis + 1; d < x.dims.size(); ++d) inner *= static_cast<std::size_t>(x.dims[d]);
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t slice = q.axis ? (i / inner) % length : 0;
    out.floats.push_back(
        dequantize(x.int_at(i), q.info.scales[slice], static_cast<std::int32_t>(q.zero_points[slice])));
  }
  return out;
}

/// (q - zero point) x scale along an axis whose zero points differ, which no kiln tensor's
/// quantisation states: the integers' values, minus the zero points, times the scales, each step
/// exact but the last, as the definition computes it.
Status dequantize_per_zero_point(Importer& im, Value& x, const NodeQuantization& q) {
  KILN_ONNX_TRY(values, integer_values(im, x, Layout::Plain));
  ConstValue zero_points, scales;
  zero_points.dims.assign(x.dims.size(), 1);
  zero_points.dims[*q.axis] = x.dims[*q.axis];
  scales.dims = zero_points.dims;
  for (std::size_t c = 0; c < q.zero_points.size(); ++c) {
    zero_points.floats.push_back(static_cast<float>(q.zero_points[c]));
    scales.floats.push_back(q.info.scales[c]);
  }
  const OutputSlot z = im.add_constant(zero_points, DataType::Float32, "zero_points");
  const OutputSlot s = im.add_constant(scales, DataType::Float32, "scales");
  KILN_ONNX_TRY(centred, im.add<ops::ElementwiseBinary>({ops::BinaryOperation::Sub}, {values, z}, "centred"));
  KILN_ONNX_TRY(y, im.add<ops::ElementwiseBinary>({ops::BinaryOperation::Mul}, {centred, s}));
  im.define(0, y, Layout::Plain);
  return Status::ok();
}

Status dequantize_linear(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  if (x->constant) {
    if (x->constant->is_float || x->constant->is_bool) return im.invalid("input is not an integer tensor");
    KILN_ONNX_TRY(q, read_quantization(im, x->dims, x->constant->onnx_type, true));
    ConstValue folded = dequantized(*x->constant, q);
    if (q.has_one_zero_point()) {
      // Symmetric int8 (weights) is QSymmS8, which int8 layers take.
      const DataType type = q.type == DataType::QAsymmS8 && q.info.offset == 0 ? DataType::QSymmS8 : q.type;
      QuantizationInfo info = q.info;
      if (q.axis) info.axis = static_cast<std::uint32_t>(*q.axis);
      folded.quantized = std::make_shared<const ConstValue::Quantized>(
          ConstValue::Quantized{x->constant->ints, type, std::move(info)});
    }
    im.define_constant(0, std::move(folded), DataType::Float32);
    return Status::ok();
  }
  if (!is_quantized(x->type))
    return im.error("input 0 must be a constant or an 8-bit tensor (a uint8 or int8 graph input, the output of ",
                    "QuantizeLinear); it is a ", to_string(x->type), " tensor computed by the network");
  KILN_ONNX_TRY(q, read_quantization(
                       im, x->dims,
                       x->type == DataType::QAsymmU8 ? ::onnx::TensorProto::UINT8 : ::onnx::TensorProto::INT8, false));
  if (q.type != x->type)
    return im.invalid("input is ", to_string(x->type), " but the zero point's type makes it ", to_string(q.type));
  if (!q.has_one_zero_point()) return dequantize_per_zero_point(im, *x, q);
  const Layout layout = Importer::preferred_layout(*x);
  KILN_ONNX_TRY(input, integers_as(im, *x, layout, in_layout(q, layout, x->dims.size())));
  KILN_ONNX_TRY(y, im.add<ops::Dequantize>({}, {input}));
  im.define(0, y, layout);
  return Status::ok();
}

constexpr ConverterEntry quantization_ops[] = {
    {"DequantizeLinear", dequantize_linear},
    {"QuantizeLinear", quantize_linear},
};

}  // namespace

std::span<const ConverterEntry> quantization_converters() { return quantization_ops; }

}  // namespace kiln::onnx::detail
