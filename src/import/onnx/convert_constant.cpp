// SPDX-License-Identifier: Apache-2.0
// ONNX ops that make constants: Constant, Shape, ConstantOfShape, Range, and Cast of a constant.
// They never become layers; exporters use them for shape arithmetic that the importer folds.
#include <cmath>
#include <limits>

#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

Status constant(Importer& im) {
  const auto& attributes = im.node().attribute();
  if (attributes.size() != 1) return im.invalid("a Constant node needs exactly one value attribute");
  const auto& a = attributes[0];
  ConstValue value;
  DataType type = DataType::Float32;
  if (a.name() == "value") {
    KILN_ONNX_TRY(read, read_constant(a.t()));
    KILN_ONNX_TRY(kiln, kiln_type(a.t().data_type()));
    value = read;
    type = kiln;
  } else if (a.name() == "value_float") {
    value = {{}, true, false, {a.f()}, {}};
  } else if (a.name() == "value_floats") {
    value = {{a.floats_size()}, true, false, {a.floats().begin(), a.floats().end()}, {}};
  } else if (a.name() == "value_int") {
    value = {{}, false, false, {}, {a.i()}};
    type = DataType::Signed32;
  } else if (a.name() == "value_ints") {
    value = {{a.ints_size()}, false, false, {}, {a.ints().begin(), a.ints().end()}};
    type = DataType::Signed32;
  } else {
    return im.error("attribute '", a.name(), "' (sparse and string constants are not supported)");
  }
  im.define_constant(0, std::move(value), type);
  return Status::ok();
}

Status shape(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  const auto rank = static_cast<std::int64_t>(x->dims.size());
  auto clamp = [rank](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const std::int64_t start = clamp(im.attr_int("start", 0)), end = clamp(im.attr_int("end", rank));
  ConstValue value{{std::max<std::int64_t>(end - start, 0)}, false, false, {}, {}};
  for (std::int64_t d = start; d < end; ++d) value.ints.push_back(x->dims[static_cast<std::size_t>(d)]);
  im.define_constant(0, std::move(value), DataType::Signed32);
  return Status::ok();
}

Status size(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  ConstValue value{{}, false, false, {}, {static_cast<std::int64_t>(element_count(x->dims))}};
  im.define_constant(0, std::move(value), DataType::Signed32);
  return Status::ok();
}

// EyeLike: ones on diagonal k of a matrix of the input's shape, a constant whatever the input.
Status eye_like(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  if (x->dims.size() != 2) return im.invalid("input has rank ", x->dims.size(), "; EyeLike makes matrices");
  DataType type = x->type;
  if (const auto dtype = im.attr_int("dtype")) {
    KILN_ONNX_TRY(kiln, kiln_type(static_cast<std::int32_t>(*dtype)));
    type = kiln;
  }
  const std::int64_t k = im.attr_int("k", 0), rows = x->dims[0], columns = x->dims[1];
  if (element_count(x->dims) > max_folded_elements)
    return im.error("a constant of ", element_count(x->dims), " elements");
  ConstValue eye{x->dims, type == DataType::Float32, type == DataType::Boolean, {}, {}};
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < columns; ++j)
      if (eye.is_float)
        eye.floats.push_back(j - i == k ? 1.0f : 0.0f);
      else
        eye.ints.push_back(j - i == k ? 1 : 0);
  im.define_constant(0, std::move(eye), type);
  return Status::ok();
}

Status constant_of_shape(Importer& im) {
  KILN_ONNX_TRY(shape, im.constant_input(0, "shape"));
  ConstValue fill{{}, true, false, {0.0f}, {}};
  DataType type = DataType::Float32;
  if (const auto* a = im.attr("value")) {
    KILN_ONNX_TRY(read, read_constant(a->t()));
    KILN_ONNX_TRY(kiln, kiln_type(a->t().data_type()));
    if (read.size() != 1) return im.invalid("value must hold one element");
    fill = read;
    type = kiln;
  }
  ConstValue value{{}, fill.is_float, fill.is_bool, {}, {}};
  std::uint64_t count = 1;
  for (std::size_t i = 0; i < shape->size(); ++i) {
    const std::int64_t d = shape->int_at(i);
    if (d < 0) return im.invalid("shape entry ", d, " is negative");
    if (d != 0 && count > max_folded_elements / static_cast<std::uint64_t>(d))
      return im.error("a constant of more than ", max_folded_elements, " elements");
    count *= static_cast<std::uint64_t>(d);
    value.dims.push_back(d);
  }
  if (value.is_float)
    value.floats.assign(count, fill.floats[0]);
  else
    value.ints.assign(count, fill.ints[0]);
  im.define_constant(0, std::move(value), type);
  return Status::ok();
}

// Defines output 0 as computed tensor `x` cast to the ONNX element type `to`: float32, integers of
// 32 or 64 bits and bool among each other (one Cast layer; none to the same type); 8-bit integers
// to those through their values (Dequantize at scale 1, exact); float32 and bool to 8-bit integers
// by Quantize at scale 1 of the value truncated toward zero, which saturates to the type's range
// (ONNX leaves values outside it undefined).
Status cast_computed(Importer& im, Value& x, std::int64_t to) {
  const auto to_name = onnx_type_name(static_cast<std::int32_t>(to));
  const Layout layout = Importer::preferred_layout(x);
  KILN_ONNX_TRY(input, is_quantized(x.type) ? integer_values(im, x, layout) : im.tensor(x, layout, x.dims.size()));
  OutputSlot y = input;
  auto cast = [&](DataType type, std::string_view suffix) -> Status {
    KILN_ONNX_TRY(next, im.add<ops::Cast>({type}, {y}, suffix));
    y = next;
    return Status::ok();
  };
  if (const auto eight_bit = eight_bit_type(to)) {
    if (x.type == *eight_bit) {
      im.define_value(0, x);
      return Status::ok();
    }
    if (x.type != DataType::Float32 && x.type != DataType::Boolean)
      return im.error("Cast of a computed ", to_string(x.type), " tensor to ", to_name,
                      " (ONNX wraps integers around into the narrower type; kiln casts float32 and bool to 8-bit ",
                      "integers, saturating)");
    if (x.type == DataType::Float32)
      if (auto s = cast(DataType::Signed32, "truncated"); !s) return s;
    if (auto s = cast(DataType::Float32, "values"); !s) return s;
    KILN_ONNX_TRY(integers, im.add<ops::Quantize>({}, {y}, {}, ops::OutputType{*eight_bit, raw_integers()}));
    im.define(0, integers, layout);
    return Status::ok();
  }
  KILN_ONNX_TRY(type, kiln_type(static_cast<std::int32_t>(to)));
  const DataType from = is_quantized(x.type) ? DataType::Float32 : x.type;
  const bool exact = type == DataType::Float32    ? to == ::onnx::TensorProto::FLOAT
                     : type == DataType::Signed32 ? to == ::onnx::TensorProto::INT32 || to == ::onnx::TensorProto::INT64
                                                  : type == DataType::Boolean;
  auto among = [](DataType t) { return t == DataType::Float32 || t == DataType::Signed32 || t == DataType::Boolean; };
  if (!exact || !among(from))
    return im.error("Cast of a computed tensor from ", to_string(x.type), " to ", to_name,
                    " (kiln casts computed float32, int32/int64, bool and 8-bit integer tensors among each other)");
  if (type == x.type) {
    im.define_value(0, x);
    return Status::ok();
  }
  if (type != from)
    if (auto s = cast(type, ""); !s) return s;
  im.define(0, y, layout);
  return Status::ok();
}

// Defines output 0 as `x` cast to the ONNX element type `to`.
Status cast_to(Importer& im, Value* x, std::optional<std::int64_t> to) {
  if (!to) return im.invalid("'to' is missing");
  if (!x->constant) return cast_computed(im, *x, *to);
  KILN_ONNX_TRY(type, kiln_type(static_cast<std::int32_t>(*to)));
  const ConstValue& in = *x->constant;
  ConstValue out{in.dims, type == DataType::Float32, type == DataType::Boolean, {}, {}};
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (out.is_float) {
      out.floats.push_back(in.float_at(i));
    } else if (out.is_bool) {
      out.ints.push_back(in.float_at(i) != 0.0f ? 1 : 0);
    } else {
      const double v = in.is_float ? std::trunc(static_cast<double>(in.floats[i])) : static_cast<double>(in.ints[i]);
      if (!(std::abs(v) < 9.2e18)) return im.invalid("value ", v, " does not fit an integer");
      out.ints.push_back(in.is_float ? static_cast<std::int64_t>(v) : in.ints[i]);
    }
  }
  out.onnx_type = static_cast<std::int32_t>(*to);
  im.define_constant(0, std::move(out), type);
  return Status::ok();
}

Status cast(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  return cast_to(im, x, im.attr_int("to"));
}

// The ONNX element type of a value: a constant's as it was read, else its kiln type's (integers
// are int64 to kiln, as they are to the exporters that write CastLike).
std::int32_t onnx_type_of(const Value& value) {
  if (value.constant && value.constant->onnx_type != 0) return value.constant->onnx_type;
  switch (value.type) {
    case DataType::Float16: return ::onnx::TensorProto::FLOAT16;
    case DataType::BFloat16: return ::onnx::TensorProto::BFLOAT16;
    case DataType::QAsymmU8: return ::onnx::TensorProto::UINT8;
    case DataType::QAsymmS8:
    case DataType::QSymmS8: return ::onnx::TensorProto::INT8;
    case DataType::Signed32: return ::onnx::TensorProto::INT64;
    case DataType::Boolean: return ::onnx::TensorProto::BOOL;
    default: return ::onnx::TensorProto::FLOAT;
  }
}

Status cast_like(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  KILN_ONNX_TRY(like, im.input(1));
  return cast_to(im, x, onnx_type_of(*like));
}

Status range(Importer& im) {
  KILN_ONNX_TRY(start, im.constant_input(0, "start"));
  KILN_ONNX_TRY(limit, im.constant_input(1, "limit"));
  KILN_ONNX_TRY(delta, im.constant_input(2, "delta"));
  if (start->size() != 1 || limit->size() != 1 || delta->size() != 1) return im.invalid("inputs must be scalars");
  const double first = start->is_float ? start->floats[0] : static_cast<double>(start->ints[0]);
  const double last = limit->is_float ? limit->floats[0] : static_cast<double>(limit->ints[0]);
  const double step = delta->is_float ? delta->floats[0] : static_cast<double>(delta->ints[0]);
  if (step == 0.0) return im.invalid("delta is zero");
  const double count = std::max(std::ceil((last - first) / step), 0.0);
  if (!(count <= static_cast<double>(max_folded_elements)))
    return im.error("a range of more than ", max_folded_elements, " elements");
  ConstValue value{{static_cast<std::int64_t>(count)}, start->is_float, false, {}, {}};
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(count); ++i) {
    if (value.is_float)
      value.floats.push_back(static_cast<float>(first + static_cast<double>(i) * step));
    else
      value.ints.push_back(start->ints[0] + i * delta->int_at(0));
  }
  KILN_ONNX_TRY(x, im.input(0));
  im.define_constant(0, std::move(value), x->type);
  return Status::ok();
}

// NonZero's output shape is the count of its input's nonzero elements, known at load only when the
// input is a constant: then it is folded, the coordinates of each nonzero element in a column.
Status non_zero(Importer& im) {
  KILN_ONNX_TRY(x, im.constant_input(0, "input (NonZero's output shape depends on its values)"));
  std::vector<std::uint64_t> found;
  for (std::size_t i = 0; i < x->size(); ++i)
    if (x->is_float ? x->floats[i] != 0.0f : x->ints[i] != 0) found.push_back(i);
  const std::size_t rank = x->dims.size();
  if (found.empty()) return im.error("NonZero finds no nonzero element: kiln does not run empty tensors");
  ConstValue value{{static_cast<std::int64_t>(rank), static_cast<std::int64_t>(found.size())}, false, false, {}, {}};
  value.ints.resize(rank * found.size());
  for (std::size_t j = 0; j < found.size(); ++j) {
    std::uint64_t rest = found[j];
    for (std::size_t d = rank; d-- > 0;) {
      const auto dim = static_cast<std::uint64_t>(x->dims[d]);
      value.ints[d * found.size() + j] = static_cast<std::int64_t>(rest % dim);
      rest /= dim;
    }
  }
  im.define_constant(0, std::move(value), DataType::Signed32);
  return Status::ok();
}

constexpr ConverterEntry constant_ops[] = {
    {"Cast", cast},        {"CastLike", cast_like}, {"Constant", constant}, {"ConstantOfShape", constant_of_shape},
    {"EyeLike", eye_like}, {"NonZero", non_zero},   {"Range", range},       {"Shape", shape},
    {"Size", size},
};

}  // namespace

std::span<const ConverterEntry> constant_converters() { return constant_ops; }

}  // namespace kiln::onnx::detail
